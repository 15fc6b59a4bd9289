/* --filter expressions shared by parse and snoop: type=..., pid=..., tid=... */
#ifndef GRT_EVENT_FILTER_H
#define GRT_EVENT_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/grt_reader.h"

#define EVENT_FILTER_MAX 32

struct event_filter {
	uint16_t types[EVENT_FILTER_MAX];
	unsigned ntypes;
	uint32_t pids[EVENT_FILTER_MAX];
	unsigned npids;
	uint32_t tids[EVENT_FILTER_MAX];
	unsigned ntids;
};

void event_filter_init(struct event_filter *f);
void event_filter_destroy(struct event_filter *f);
/* Adds one "key=v1,v2" expression. Returns 0, or -EINVAL for an unknown key or value. */
int event_filter_add(struct event_filter *f, const char *expr);
/* True when the filter names no types or names this one. */
bool event_filter_match_type(const struct event_filter *f, uint16_t type);
/* True when the record passes every given criterion (an empty filter passes all). */
bool event_filter_match(const struct event_filter *f, const struct grt_record *rec);

#endif
