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

/* A span this launch wrote (an old tag: the block or thread never stored one). */
static bool span_valid(const struct grt_probe_span *sp, uint16_t tag)
{
	return sp->tag == tag && sp->start_ns;
}

static uint64_t span_end(const struct grt_probe_span *sp)
{
	return sp->start_ns + grt_probe_dur_ns(sp->dur);
}

/*
 * One launch's device times on the host clock with one offset, taken at its first time: mapped
 * one by one through a fit whose slope is not exactly 1, each would round on its own and a
 * 5000 ns block could come out as 4999 (the drift the fit corrects is far below 1 ns over a
 * launch). 0 stays 0: "not measured".
 */
struct launch_clock {
	const struct clock_pair *map;
	uint64_t device0, host0;
};

static uint64_t launch_clock_map(struct launch_clock *c, uint64_t device_ns)
{
	if (!device_ns)
		return 0;
	if (!c->device0) {
		c->device0 = device_ns;
		c->host0 = clock_map(c->map, device_ns);
	}
	return c->host0 + (device_ns - c->device0);
}

size_t launch_blocks_from_spans(const struct grt_probe_span *in, size_t n, uint16_t tag,
				const uint32_t grid[3], const struct clock_pair *map,
				uint64_t launch_id, struct grt_gpu_block_rec *out,
				uint64_t *missing)
{
	struct launch_clock clock = {.map = map};
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		struct grt_gpu_block_rec *b = &out[used];

		if (!span_valid(&in[i], tag)) {
			(*missing)++;
			continue;
		}
		b->launch_id = launch_id;
		b->start_ns = launch_clock_map(&clock, in[i].start_ns);
		b->end_ns = launch_clock_map(&clock, span_end(&in[i]));
		block_coords(i, grid, b->block);
		b->smid = in[i].smid;
		used++;
	}
	return used;
}

size_t launch_blocks_from_thread_spans(const struct grt_probe_span *in, size_t n, uint16_t tag,
				       uint32_t threads_per_block, const uint32_t grid[3],
				       uint64_t blocks, const struct clock_pair *map,
				       uint64_t launch_id, struct grt_gpu_block_rec *out,
				       uint64_t *missing)
{
	struct launch_clock clock = {.map = map};
	size_t used = 0;

	for (uint64_t b = 0; b < blocks; b++) {
		uint64_t first = b * threads_per_block, start = UINT64_MAX, end = 0, seen = 0;
		struct grt_gpu_block_rec *o = &out[used];

		for (uint64_t t = first; t < first + threads_per_block && t < n; t++) {
			if (!span_valid(&in[t], tag))
				continue;
			if (!seen++)
				o->smid = in[t].smid;
			if (in[t].start_ns < start)
				start = in[t].start_ns;
			if (span_end(&in[t]) > end)
				end = span_end(&in[t]);
		}
		if (!seen) {
			(*missing)++;
			continue;
		}
		o->launch_id = launch_id;
		o->start_ns = launch_clock_map(&clock, start);
		/* a thread that never stored its span leaves the block's end unknown */
		o->end_ns = seen < threads_per_block ? 0 : launch_clock_map(&clock, end);
		block_coords(b, grid, o->block);
		used++;
	}
	return used;
}

#define SM_GROUPS 1024 /* SM ids at or above share the last group */

static unsigned sm_group(uint32_t smid)
{
	return smid < SM_GROUPS - 1 ? smid : SM_GROUPS - 1;
}

/* Insertion sort by start: an SM runs a few dozen blocks of a launch, often already in order. */
static void sort_by_start(struct grt_gpu_block_rec *b, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct grt_gpu_block_rec v = b[i];
		size_t j = i;

		for (; j > 0 && b[j - 1].start_ns > v.start_ns; j--)
			b[j] = b[j - 1];
		b[j] = v;
	}
}

/* The k-th smallest of v[0..n) (Hoare's selection); reorders v. */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				uint64_t t = v[i];

				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
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

/*
 * Reorders blocks grouped by SM (counting sort, stable); fills first[g] ..
 * first[g + 1] for g < *groups (the highest group in use, plus one).
 */
static int group_by_sm(struct grt_gpu_block_rec *blocks, size_t n, size_t *first, unsigned *groups)
{
	struct grt_gpu_block_rec *tmp = malloc(n * sizeof(*tmp));
	size_t at[SM_GROUPS];
	unsigned top = 0;

	if (!tmp)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (sm_group(blocks[i].smid) + 1 > top)
			top = sm_group(blocks[i].smid) + 1;
	memset(first, 0, (top + 1) * sizeof(*first));
	for (size_t i = 0; i < n; i++)
		first[sm_group(blocks[i].smid) + 1]++;
	for (unsigned g = 0; g < top; g++)
		first[g + 1] += first[g];
	memcpy(at, first, top * sizeof(*at));
	*groups = top;
	for (size_t i = 0; i < n; i++)
		tmp[at[sm_group(blocks[i].smid)]++] = blocks[i];
	memcpy(blocks, tmp, n * sizeof(*tmp));
	free(tmp);
	return 0;
}

void launch_summarize(struct grt_gpu_block_rec *blocks, size_t n, struct grt_gpu_launch_rec *rec)
{
	uint64_t *durations = n ? malloc(n * sizeof(*durations)) : NULL;
	size_t *first = malloc((SM_GROUPS + 1) * sizeof(*first)), ndur = 0;
	unsigned groups = 0;

	rec->blocks = (uint32_t)n;
	rec->start_ns = 0;
	rec->end_ns = 0;
	rec->sms_used = 0;
	rec->block_ns_p50 = rec->block_ns_max = rec->busiest_sm_ns = 0;
	if (!n || !durations || !first || group_by_sm(blocks, n, first, &groups)) {
		free(durations);
		free(first);
		return;
	}
	rec->start_ns = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		const struct grt_gpu_block_rec *b = &blocks[i];

		if (b->start_ns < rec->start_ns)
			rec->start_ns = b->start_ns;
		if (b->end_ns > rec->end_ns)
			rec->end_ns = b->end_ns;
		if (b->end_ns && b->end_ns >= b->start_ns) {
			durations[ndur++] = b->end_ns - b->start_ns;
			if (durations[ndur - 1] > rec->block_ns_max)
				rec->block_ns_max = durations[ndur - 1];
		}
	}
	/* the shared last group is no one SM: it gets no busy time */
	for (unsigned g = 0; g < groups && g < SM_GROUPS - 1; g++) {
		size_t count = first[g + 1] - first[g];
		uint64_t busy;

		if (!count)
			continue;
		sort_by_start(blocks + first[g], count);
		busy = sm_busy(blocks + first[g], count);
		rec->sms_used++;
		if (busy > rec->busiest_sm_ns)
			rec->busiest_sm_ns = busy;
	}
	if (ndur)
		rec->block_ns_p50 = select_kth(durations, ndur, (ndur - 1) / 2);
	free(durations);
	free(first);
}

/* The middle of histogram bucket b (durations in ns). */
static uint64_t bucket_mid(unsigned b)
{
	uint64_t lo = grt_probe_bucket_low(b), hi = b + 1 < GRT_PROBE_HIST_BUCKETS
							? grt_probe_bucket_low(b + 1)
							: 1ull << 32;

	return lo + (hi - lo) / 2;
}

/* The median block duration of the histogram, to the middle of its half octave. */
static uint64_t hist_median(const uint32_t *hist)
{
	uint64_t seen = 0, total = 0;

	for (unsigned b = 0; b < GRT_PROBE_HIST_BUCKETS; b++)
		total += hist[b];
	for (unsigned b = 0; b < GRT_PROBE_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen * 2 >= total && seen)
			return bucket_mid(b);
	}
	return 0;
}

void launch_summarize_totals(const struct grt_probe_sm *sm, unsigned nsm, const uint32_t *hist,
			     const struct clock_pair *map, struct grt_gpu_launch_rec *rec)
{
	uint64_t start = UINT64_MAX, end = 0, blocks = 0;
	struct launch_clock clock = {.map = map};

	rec->sms_used = 0;
	rec->block_ns_max = rec->busiest_sm_ns = 0;
	for (unsigned i = 0; i < nsm; i++) {
		uint64_t first, busy;

		if (!sm[i].blocks)
			continue;
		first = ~sm[i].first_start_inv;
		if (first < start)
			start = first;
		if (sm[i].last_end > end)
			end = sm[i].last_end;
		blocks += sm[i].blocks;
		rec->sms_used++;
		if (sm[i].max_ns > rec->block_ns_max)
			rec->block_ns_max = sm[i].max_ns;
		/* the union of the SM's block intervals lies under both of these */
		busy = sm[i].last_end - first < sm[i].busy_ns ? sm[i].last_end - first
							      : sm[i].busy_ns;
		if (busy > rec->busiest_sm_ns)
			rec->busiest_sm_ns = busy;
	}
	rec->blocks = (uint32_t)blocks;
	rec->start_ns = blocks ? launch_clock_map(&clock, start) : 0;
	rec->end_ns = blocks ? launch_clock_map(&clock, end) : 0;
	rec->block_ns_p50 = hist_median(hist);
}

uint64_t launch_totals_first_start(const struct grt_probe_sm *sm, unsigned nsm)
{
	for (unsigned i = 0; i < nsm; i++)
		if (sm[i].blocks)
			return ~sm[i].first_start_inv;
	return 0;
}
