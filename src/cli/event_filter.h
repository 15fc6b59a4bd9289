/* parse's --filter expressions: record type, pid, tid, kernel name glob, API, time window. */
#ifndef GRT_EVENT_FILTER_H
#define GRT_EVENT_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

#define EVENT_FILTER_MAX 32

/* For the error line: what --filter takes. */
#define EVENT_FILTER_KEYS                                                                          \
	"KEY=V[,V][,KEY=V] with type=NAME, pid=N, tid=N, kernel=GLOB, api=NAME or time=S..S"

struct event_filter {
	uint16_t types[EVENT_FILTER_MAX];
	unsigned ntypes;
	uint32_t pids[EVENT_FILTER_MAX];
	unsigned npids;
	uint32_t tids[EVENT_FILTER_MAX];
	unsigned ntids;
	char *kernels[EVENT_FILTER_MAX];	/* fnmatch patterns on the kernel field */
	unsigned nkernels;
	char *apis[EVENT_FILTER_MAX];		/* fnmatch patterns on the api field */
	unsigned napis;
	bool has_window;
	uint64_t from_ns, to_ns;		/* time=: from the trace's start, to_ns inclusive */
};

void event_filter_init(struct event_filter *f);
void event_filter_destroy(struct event_filter *f);
/*
 * Adds one expression: "key=v1,v2" or several keys, "type=launch,pid=42"
 * (a value without '=' belongs to the key before it). Values of one key
 * are alternatives; different keys must all match. Returns 0, or -EINVAL
 * for an unknown key or a bad value.
 */
int event_filter_add(struct event_filter *f, const char *expr);
/* True when the filter names no types or names this one. */
bool event_filter_match_type(const struct event_filter *f, uint16_t type);
/*
 * True when the record passes every given criterion (an empty filter passes
 * all). start_ns is the trace's start, the origin of time=.
 */
bool event_filter_match(const struct event_filter *f, const struct grt_record *rec,
			const struct grt_strings *strings, uint64_t start_ns);

#endif
