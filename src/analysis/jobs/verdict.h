/* The verdict: one sentence at the top of the jobs report naming the dominant blocking cause. */
#ifndef GRT_VERDICT_H
#define GRT_VERDICT_H

#include "analysis/jobs/idle_gaps.h"
#include "analysis/jobs/builder.h"
#include "analysis/jobs/summary.h"
#include "analysis/jobs/tags.h"
#include "common/json_writer.h"

/*
 * How the cause is chosen: when more than `idle` (50%) of the devices' span
 * is idle, the GPU is starved and the largest idle class names the cause
 * (host-bound, sync-bound, or launch-latency for "other"). Otherwise the
 * tag that covers the most wall time wins: the union of its jobs' tag
 * intervals (job_tag_interval: queue time for queue-wait, time above the
 * limit for exec-long-tail, ...), never a sum over overlapping jobs.
 * Without device timing only the host-side tags can be weighed.
 */
struct verdict {
	const char *cause;	/* "host-bound", "sync-bound", "uvm-bound", "launch-latency", a tag
				   name, "none", "no-jobs", "no-device-timing" (no cause without
				   device timing: nothing can be judged) */
	char text[640];
	double idle_share;	/* of the devices' span; -1 without device timing */
	double cause_share;	/* of idle time (idle causes) or of the jobs' span (tags' wall time) */
	uint64_t span_ns;
	uint64_t busy_ns;
	uint64_t idle_ns[GAP_CLASSES];
	uint32_t tid;		/* the thread named, 0 when none */
};

void verdict_build(struct verdict *v, struct job_summary *s, const struct idle_gaps *g,
		   const struct job_builder *b, const struct job_thresholds *t);
void verdict_print_json(const struct verdict *v, struct json_writer *w);

#endif
