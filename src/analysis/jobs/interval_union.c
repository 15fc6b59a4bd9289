/* Union of intervals in start order through a min-heap, settled as the caller's frontier moves. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/interval_union.h"
#include "common/grow_array.h"
#include "common/min_heap.h"

void interval_union_init(struct interval_union *u)
{
	memset(u, 0, sizeof(*u));
}

void interval_union_destroy(struct interval_union *u)
{
	free(u->heap);
	memset(u, 0, sizeof(*u));
}

static void merge(struct interval_union *u, uint64_t start, uint64_t end)
{
	if (u->run_end == u->run_start || start > u->run_end) {
		u->total += u->run_end - u->run_start;
		u->run_start = start;
		u->run_end = end;
	} else if (end > u->run_end) {
		u->run_end = end;
	}
}

void interval_union_add(struct interval_union *u, uint64_t start, uint64_t end)
{
	if (start < u->settled)
		start = u->settled;
	if (end <= start)
		return;
	if (grt_grow_array((void **)&u->heap, &u->cap, sizeof(*u->heap), u->len + 1)) {
		u->error = -ENOMEM;
		return;
	}
	u->heap[u->len++] = (struct interval_pending){ start, end };
	grt_min_heap_up(u->heap, u->len, sizeof(*u->heap), offsetof(struct interval_pending, start));
}

void interval_union_settle(struct interval_union *u, uint64_t point)
{
	struct interval_pending top;

	while (u->len && u->heap[0].start < point) {
		grt_min_heap_pop(u->heap, &u->len, sizeof(*u->heap),
				 offsetof(struct interval_pending, start), &top);
		merge(u, top.start, top.end);
	}
	if (point > u->settled)
		u->settled = point;
}

uint64_t interval_union_length(const struct interval_union *u)
{
	return u->total + (u->run_end - u->run_start);
}
