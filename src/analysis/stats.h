/* Streaming statistics of one quantity (durations, sizes): count, total, min, max, mean, percentiles. */
#ifndef GRT_STATS_H
#define GRT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The first GRT_STATS_EXACT_MAX values are kept as they are, so small
 * populations (a kernel launched 7 times) get exact percentiles. Past that the
 * values move into a log-linear histogram: values below 256 keep one bucket
 * each (exact); above, every power of two [2^e, 2^(e+1)) is split into 128
 * buckets of width 2^(e-7). A percentile is answered with its bucket's
 * midpoint, clamped to [min, max], so the answer is within 2^(e-8) of a value
 * >= 2^e: relative error <= 1/256 (0.4%). Bucket groups are allocated only
 * for the powers of two that occur, so memory stays ~1 KiB per decade-ish of
 * range used, whatever the count.
 *
 * Percentiles use the nearest-rank definition: P(p) is the smallest value v
 * such that at least p% of the values are <= v (rank ceil(p/100 * count)).
 * count, total, min, max and mean are always exact (total saturates at
 * UINT64_MAX, 584 years of nanoseconds).
 */
#define GRT_STATS_EXACT_MAX 256

struct grt_stats_histogram;

struct grt_stats {
	uint64_t count;
	uint64_t total;
	uint64_t min;		/* valid when count > 0 */
	uint64_t max;
	uint64_t *samples;	/* exact mode: the values; NULL before the first or in histogram mode */
	uint32_t samples_len;	/* equals count unless memory ran out */
	uint32_t samples_cap;
	bool samples_sorted;
	struct grt_stats_histogram *hist; /* non-NULL once past GRT_STATS_EXACT_MAX */
};

void grt_stats_init(struct grt_stats *s);
void grt_stats_destroy(struct grt_stats *s);
/* Adds one value. Returns 0 or -ENOMEM (the value is then counted in count/total/min/max only). */
int grt_stats_add(struct grt_stats *s, uint64_t value);
/* Adds every value of src to dst (src unchanged). Returns 0 or -ENOMEM. */
int grt_stats_merge(struct grt_stats *dst, const struct grt_stats *src);

/* Mean as a double; 0 when empty. */
double grt_stats_mean(const struct grt_stats *s);
/*
 * Nearest-rank percentile for pct in [0, 100]; 0 when empty. Not const: the
 * exact samples are sorted on first use.
 */
uint64_t grt_stats_percentile(struct grt_stats *s, double pct);
/* Whether percentiles are exact (still in exact mode). */
bool grt_stats_is_exact(const struct grt_stats *s);
/* Heap bytes the statistics hold, for memory-bound tests. */
size_t grt_stats_heap_bytes(const struct grt_stats *s);

#endif
