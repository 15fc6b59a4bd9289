/* Perfetto timelines of a trace: native protobuf (the default) or Chrome trace-event JSON. */
#ifndef GRT_PERFETTO_H
#define GRT_PERFETTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "analysis/jobs/tags.h"

struct perfetto_stats {
	uint64_t events;	/* JSON: trace events; protobuf: track events (slice begins, ends, ...) */
	uint64_t packets;	/* protobuf: TracePackets, track and clock packets included */
	uint64_t jobs;
	uint64_t flows;		/* launch -> execution arrows that end on a GPU slice */
	uint64_t overlap_lanes;	/* GPU slices moved to an extra lane because they overlapped */
	uint64_t bytes;		/* written */
};

/*
 * Each reads trace_path (twice: the first pass learns per-kernel P90s so job
 * slices carry their exec-long-tail tag) and streams the timeline to out as
 * things become final: memory follows the open jobs, not the trace.
 * Returns 0, or a negative errno with one line in err.
 */
/* Perfetto's native protobuf: a Trace of TracePackets (src/export/perfetto_subset.proto). */
int perfetto_proto_export(const char *trace_path, FILE *out, const struct job_thresholds *t,
			  struct perfetto_stats *stats, char *err, size_t err_len);
/* Chrome trace-event JSON, for chrome://tracing and tools that read only that. */
int perfetto_json_export(const char *trace_path, FILE *out, const struct job_thresholds *t,
			 struct perfetto_stats *stats, char *err, size_t err_len);

#endif
