/* The length of a union of intervals that arrive nearly in order, with memory bounded by the disorder. */
#ifndef GRT_INTERVAL_UNION_H
#define GRT_INTERVAL_UNION_H

#include <stdint.h>

/*
 * Intervals wait in a min-heap by start until the caller settles a point
 * (no interval added from then on starts before it); those starting before
 * it are merged in order. An interval added after its place was settled is
 * clipped to the settled point: its overlap with what was merged is not
 * counted twice, at worst a little of it is lost.
 */
struct interval_union {
	struct interval_pending *heap;
	uint32_t len;
	uint32_t cap;
	uint64_t settled;	/* starts before this were merged */
	uint64_t run_start;	/* the merged run still open */
	uint64_t run_end;
	uint64_t total;		/* length of the closed runs */
	int error;		/* an interval was lost for want of memory */
};

struct interval_pending {
	uint64_t start;
	uint64_t end;
};

void interval_union_init(struct interval_union *u);
void interval_union_destroy(struct interval_union *u);
void interval_union_add(struct interval_union *u, uint64_t start, uint64_t end);
/* No interval added from now on starts before point. */
void interval_union_settle(struct interval_union *u, uint64_t point);
/* The union's length so far (all of it once settled at UINT64_MAX). */
uint64_t interval_union_length(const struct interval_union *u);

#endif
