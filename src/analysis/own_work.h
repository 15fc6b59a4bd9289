/* grtrace's own work inside a traced program: which records are it, so users never see them as theirs. */
#ifndef GRT_OWN_WORK_H
#define GRT_OWN_WORK_H

#include <stdbool.h>
#include <stdint.h>
#include "common/u64_map.h"
#include "trace/grt_reader.h"

/*
 * The injected library flags what it does in the target: its driver calls
 * (GRT_CUDA_F_OWN, decided by the cuda source from the grtrace-* thread
 * names) and its device work (GRT_GPU_F_OWN: calibration kernels, probe
 * collection copies, the summarizer kernel). Traces written before those
 * flags name grtrace's kernels GRT_OWN_KERNEL_PREFIX: launches and device
 * records of such a kernel are own work too, and so is a function handle
 * named so (its later launches may carry no name).
 */
struct own_work {
	struct u64_map own_handles;	/* (pid, function handle) of __grt_ kernels */
	uint64_t records;		/* own records seen */
};

void own_work_init(struct own_work *o);
void own_work_destroy(struct own_work *o);
/* Whether rec is grtrace's own work; counts it. Learns own function handles as it goes. */
bool own_work_record(struct own_work *o, const struct grt_record *rec,
		     const struct grt_strings *strings);
/* Whether a kernel name is one of grtrace's own kernels. */
bool own_kernel_name(const char *name);

#endif
