/* Throughput and device gauges of every GPU, sampled through NVML (libnvidia-ml.so.1, loaded at run time). */
#ifndef GRT_NVML_SAMPLER_H
#define GRT_NVML_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/records_kernel.h"

struct nvml_sampler;

/* Which of struct nvml_gauges' readings NVML gave. */
enum nvml_gauge_flags {
	NVML_G_UTILIZATION = 1, /* gpu_util_pct, mem_util_pct */
	NVML_G_MEMORY = 2,	/* mem_used_bytes, mem_total_bytes */
	NVML_G_POWER = 4,	/* power_mw */
};

/* Point-in-time device readings (not part of the trace record). */
struct nvml_gauges {
	uint32_t flags;	       /* enum nvml_gauge_flags */
	uint32_t gpu_util_pct; /* share of the last sample period a kernel ran */
	uint32_t mem_util_pct; /* share of it device memory was read or written */
	uint32_t power_mw;
	uint64_t mem_used_bytes, mem_total_bytes;
};

/*
 * One sample and when its interval ended (CLOCK_MONOTONIC): a GPU's PCIe and
 * NVLink totals (type GRT_REC_PCIE_SAMPLE, rec, with gauges), or one of its
 * NVLink links (GRT_REC_NVLINK_SAMPLE, link).
 */
struct nvml_sample {
	uint64_t ts_ns;
	uint16_t type;
	union {
		struct grt_pcie_sample_rec rec;
		struct grt_nvlink_sample_rec link;
	};
	struct nvml_gauges gauges; /* flags 0 unless the sampler was started with gauges */
};

/*
 * The NVML library to load into grtrace, which runs as root: GRTRACE_NVML_LIBRARY
 * (a test double, a non-standard install) or libnvidia-ml.so.1 where the
 * system's loader paths have it; the operator's choice, never a traced
 * program's, and a file only root can have changed (trusted_file_check).
 * 0 with the path, or a negative errno with one line in why.
 */
int nvml_library_path(char *path, size_t len, char *why, size_t why_len);

/*
 * Loads NVML from library (a path from nvml_library_path()), initialises it
 * and starts a thread sampling every interval_ms: throughput always, the
 * device gauges too when gauges is set. Returns NULL and one line in why when
 * NVML is missing or has no GPU.
 */
struct nvml_sampler *nvml_sampler_start(const char *library, unsigned interval_ms, bool gauges,
					char *why, size_t why_len);
/* NVLink links NVML reports over all GPUs; 0 on a machine without NVLink. */
unsigned nvml_sampler_nvlinks(const struct nvml_sampler *s);
/*
 * The GPU-to-GPU topology read at start: one record per ordered pair of GPUs,
 * fields NVML could not answer left unknown (their flags clear). Returns the
 * count; *links stays valid until nvml_sampler_stop().
 */
size_t nvml_sampler_topology(const struct nvml_sampler *s, const struct grt_gpu_link_rec **links);
/* Whether this NVML has the P2P and topology functions (drivers before them do not). */
bool nvml_sampler_topology_known(const struct nvml_sampler *s);
/* Moves up to max finished samples into out; returns how many. Never blocks on NVML. */
size_t nvml_sampler_take(struct nvml_sampler *s, struct nvml_sample *out, size_t max);
/* Samples lost (queue full) since the previous call. */
uint64_t nvml_sampler_lost(struct nvml_sampler *s);
/* Stops the thread, shuts NVML down, unloads it. s may be NULL. */
void nvml_sampler_stop(struct nvml_sampler *s);

#endif
