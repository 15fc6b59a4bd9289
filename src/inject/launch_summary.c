/* Per-block records and per-launch summaries from probe buffers. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "inject/launch_summary.h"

static void block_coords(uint64_t linear, const uint32_t grid[3], uint32_t out[3])
{
	uint64_t gx = grid[0] ? grid[0] : 1, gy = grid[1] ? grid[1] : 1;

	out[0] = (uint32_t)(linear % gx);
	out[1] = (uint32_t)((linear / gx) % gy);
	out[2] = (uint32_t)(linear / (gx * gy));
}

static uint64_t map_time(const struct clock_fit *fit, uint64_t t)
{
	return fit ? clock_to_host(fit, t) : t;
}

size_t launch_blocks_from_probe(const struct grt_probe_block_rec *in, size_t n, const uint32_t grid[3],
				const struct clock_fit *fit, uint64_t launch_id,
				struct grt_gpu_block_rec *out, uint64_t *missing)
{
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		struct grt_gpu_block_rec *b = &out[used];

		if (!in[i].start_ns) {
			(*missing)++;
			continue;
		}
		b->launch_id = launch_id;
		b->start_ns = map_time(fit, in[i].start_ns);
		b->end_ns = map_time(fit, in[i].end_ns);
		b->block[0] = in[i].block_x;
		b->block[1] = in[i].block_y;
		b->block[2] = in[i].block_z;
		b->smid = in[i].smid;
		(void)grid;
		used++;
	}
	return used;
}

size_t launch_blocks_from_threads(const struct grt_probe_thread_rec *in, size_t n,
				  uint32_t threads_per_block, const uint32_t grid[3], uint64_t blocks,
				  const struct clock_fit *fit, uint64_t launch_id,
				  struct grt_gpu_block_rec *out, uint64_t *missing)
{
	size_t used = 0;

	for (uint64_t b = 0; b < blocks; b++) {
		uint64_t first = b * threads_per_block, start = UINT64_MAX, end = 0;
		bool unfinished = false, seen = false;
		struct grt_gpu_block_rec *o = &out[used];

		for (uint64_t t = first; t < first + threads_per_block && t < n; t++) {
			if (!in[t].start_ns)
				continue;
			seen = true;
			if (in[t].start_ns < start)
				start = in[t].start_ns;
			if (!in[t].end_ns)
				unfinished = true;
			else if (in[t].end_ns > end)
				end = in[t].end_ns;
		}
		if (!seen) {
			(*missing)++;
			continue;
		}
		o->launch_id = launch_id;
		o->start_ns = map_time(fit, start);
		o->end_ns = unfinished || !end ? 0 : map_time(fit, end);
		block_coords(b, grid, o->block);
		o->smid = LAUNCH_NO_SM;
		used++;
	}
	return used;
}

static int by_sm_then_start(const void *a, const void *b)
{
	const struct grt_gpu_block_rec *x = a, *y = b;

	if (x->smid != y->smid)
		return x->smid < y->smid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sum over one SM's blocks (sorted by start) of the union of their intervals. */
static uint64_t sm_busy(const struct grt_gpu_block_rec *b, size_t n)
{
	uint64_t busy = 0, cur_start = 0, cur_end = 0;
	bool open = false;

	for (size_t i = 0; i < n; i++) {
		if (!b[i].end_ns || b[i].end_ns < b[i].start_ns)
			continue;
		if (open && b[i].start_ns <= cur_end) {
			if (b[i].end_ns > cur_end)
				cur_end = b[i].end_ns;
			continue;
		}
		if (open)
			busy += cur_end - cur_start;
		cur_start = b[i].start_ns;
		cur_end = b[i].end_ns;
		open = true;
	}
	return open ? busy + cur_end - cur_start : busy;
}

void launch_summarize(struct grt_gpu_block_rec *blocks, size_t n, struct grt_gpu_launch_rec *rec)
{
	uint64_t *durations = n ? malloc(n * sizeof(*durations)) : NULL;
	size_t ndur = 0;

	rec->blocks = (uint32_t)n;
	rec->start_ns = n ? UINT64_MAX : 0;
	rec->end_ns = 0;
	rec->sms_used = 0;
	rec->block_ns_p50 = rec->block_ns_max = rec->busiest_sm_ns = 0;
	if (!n) {
		free(durations);
		return;
	}
	qsort(blocks, n, sizeof(*blocks), by_sm_then_start);
	for (size_t i = 0, first = 0; i < n; i++) {
		const struct grt_gpu_block_rec *b = &blocks[i];

		if (b->start_ns < rec->start_ns)
			rec->start_ns = b->start_ns;
		if (b->end_ns > rec->end_ns)
			rec->end_ns = b->end_ns;
		if (b->end_ns >= b->start_ns && b->end_ns && durations)
			durations[ndur++] = b->end_ns - b->start_ns;
		if (i + 1 == n || blocks[i + 1].smid != b->smid) {
			uint64_t busy = sm_busy(&blocks[first], i + 1 - first);

			/* thread-mode blocks have no SM: no per-SM busy time either */
			if (b->smid != LAUNCH_NO_SM) {
				rec->sms_used++;
				if (busy > rec->busiest_sm_ns)
					rec->busiest_sm_ns = busy;
			}
			first = i + 1;
		}
	}
	if (ndur) {
		qsort(durations, ndur, sizeof(*durations), by_value);
		rec->block_ns_p50 = durations[(ndur - 1) / 2];
		rec->block_ns_max = durations[ndur - 1];
	}
	free(durations);
}
