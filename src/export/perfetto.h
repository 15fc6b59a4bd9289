/* Chrome/Perfetto trace-event JSON of a trace: host calls, off-CPU, GPU streams, flows, counters. */
#ifndef GRT_PERFETTO_H
#define GRT_PERFETTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "analysis/jobs/tags.h"

struct perfetto_stats {
	uint64_t events;	/* trace events written */
	uint64_t jobs;
	uint64_t flows;		/* launch -> execution arrows (ends of v2 flows on GPU slices) */
	uint64_t overlap_lanes;	/* GPU slices moved to an extra lane because they overlapped */
};

/*
 * Reads trace_path (twice: the first pass learns per-kernel P90s so job
 * slices carry their exec-long-tail tag) and streams the events to out as
 * they become final: memory follows the open jobs, not the trace.
 * Returns 0, or a negative errno with one line in err.
 */
int perfetto_export(const char *trace_path, FILE *out, const struct job_thresholds *t,
		    struct perfetto_stats *stats, char *err, size_t err_len);

#endif
