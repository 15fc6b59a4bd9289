/* Per-device verdicts of the jobs report: how idle each GPU was, why, and which device it waited for. */
#ifndef GRT_DEVICE_VERDICT_H
#define GRT_DEVICE_VERDICT_H

#include <stdio.h>
#include "analysis/device_map.h"
#include "analysis/jobs/collective_waits.h"
#include "analysis/jobs/idle_gaps.h"
#include "common/json_writer.h"

/*
 * One line per device with device timing: busy share of its span, the
 * largest idle class when it was idle more than half of it, and the
 * sync-bound time spent while the host waited for another device ("device
 * 1 waited 8.0 ms for device 0"). Printed when the trace has several
 * devices or a device waited for another; m (may be NULL) adds bus ids.
 * cw (may be NULL) adds the time its NCCL kernels waited for later ranks
 * ("device 0 (rank 0): 302.10 ms in collectives waiting for rank 1 (device
 * 1): all-reduce #15"), for devices without device timing too.
 */
void device_verdict_print_text(const struct idle_gaps *g, const struct device_map *m,
			       const struct collective_waits *cw, FILE *out);
/* The same as an array, one object per device; [] when there are none. */
void device_verdict_print_json(const struct idle_gaps *g, const struct device_map *m,
			       const struct collective_waits *cw, struct json_writer *w);

#endif
