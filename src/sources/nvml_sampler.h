/* PCIe and NVLink throughput of every GPU, sampled through NVML (libnvidia-ml.so.1, loaded at run time). */
#ifndef GRT_NVML_SAMPLER_H
#define GRT_NVML_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include "trace/records_kernel.h"

struct nvml_sampler;

/*
 * One sample and when its interval ended (CLOCK_MONOTONIC): a GPU's PCIe and
 * NVLink totals (type GRT_REC_PCIE_SAMPLE, rec), or one of its NVLink links
 * (GRT_REC_NVLINK_SAMPLE, link).
 */
struct nvml_sample {
	uint64_t ts_ns;
	uint16_t type;
	union {
		struct grt_pcie_sample_rec rec;
		struct grt_nvlink_sample_rec link;
	};
};

/*
 * Loads NVML from library (NULL: "libnvidia-ml.so.1" the loader's way),
 * initialises it and starts a thread sampling every interval_ms. Returns NULL
 * and one line in why when NVML is missing or has no GPU.
 */
struct nvml_sampler *nvml_sampler_start(const char *library, unsigned interval_ms, char *why,
					size_t why_len);
/* NVLink links NVML reports over all GPUs; 0 on a machine without NVLink. */
unsigned nvml_sampler_nvlinks(const struct nvml_sampler *s);
/* Moves up to max finished samples into out; returns how many. Never blocks on NVML. */
size_t nvml_sampler_take(struct nvml_sampler *s, struct nvml_sample *out, size_t max);
/* Samples lost (queue full) since the previous call. */
uint64_t nvml_sampler_lost(struct nvml_sampler *s);
/* Stops the thread, shuts NVML down, unloads it. s may be NULL. */
void nvml_sampler_stop(struct nvml_sampler *s);

#endif
