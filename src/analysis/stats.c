/* Streaming statistics: exact samples while few, a log-linear histogram once many. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/stats.h"

#define SUB_BITS 7			/* 2^7 buckets per power of two */
#define SUB_BUCKETS (1u << SUB_BITS)
#define LINEAR_LIMIT (2u * SUB_BUCKETS)	/* values below this get a bucket each */
/* group 0: [0, 256) one bucket per value; group g >= 1: [2^(g+7), 2^(g+8)) */
#define GROUPS (64 - SUB_BITS)

struct grt_stats_histogram {
	uint64_t held;			/* values in the buckets */
	uint64_t *groups[GROUPS];	/* allocated on first use */
};

void grt_stats_init(struct grt_stats *s)
{
	memset(s, 0, sizeof(*s));
}

void grt_stats_destroy(struct grt_stats *s)
{
	if (s->hist) {
		for (int g = 0; g < GROUPS; g++)
			free(s->hist->groups[g]);
		free(s->hist);
	}
	free(s->samples);
	grt_stats_init(s);
}

static unsigned group_size(unsigned group)
{
	return group ? SUB_BUCKETS : LINEAR_LIMIT;
}

static void bucket_of(uint64_t v, unsigned *group, unsigned *index)
{
	unsigned e, shift;

	if (v < LINEAR_LIMIT) {
		*group = 0;
		*index = (unsigned)v;
		return;
	}
	e = 63 - (unsigned)__builtin_clzll(v);	/* >= SUB_BITS + 1 */
	shift = e - SUB_BITS;
	*group = shift;
	*index = (unsigned)(v >> shift) - SUB_BUCKETS;
}

/* The value a bucket stands for: its midpoint (exact in group 0). */
static uint64_t bucket_value(unsigned group, unsigned index)
{
	uint64_t low;

	if (!group)
		return index;
	low = (uint64_t)(index + SUB_BUCKETS) << group;
	return low + ((1ull << group) >> 1);
}

static int hist_add(struct grt_stats_histogram *h, uint64_t v, uint64_t n)
{
	unsigned group, index;

	bucket_of(v, &group, &index);
	if (!h->groups[group]) {
		h->groups[group] = calloc(group_size(group), sizeof(uint64_t));
		if (!h->groups[group])
			return -ENOMEM;
	}
	h->groups[group][index] += n;
	h->held += n;
	return 0;
}

/* Moves the exact samples into a new histogram; the samples stay if memory runs out. */
static int to_histogram(struct grt_stats *s)
{
	struct grt_stats_histogram *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->samples_len; i++) {
		if (hist_add(h, s->samples[i], 1)) {
			for (int g = 0; g < GROUPS; g++)
				free(h->groups[g]);
			free(h);
			return -ENOMEM;
		}
	}
	free(s->samples);
	s->samples = NULL;
	s->samples_len = s->samples_cap = 0;
	s->hist = h;
	return 0;
}

static int samples_push(struct grt_stats *s, uint64_t v)
{
	if (s->samples_len == s->samples_cap) {
		uint32_t cap = s->samples_cap ? s->samples_cap * 2 : 8;
		uint64_t *bigger;

		if (cap > GRT_STATS_EXACT_MAX)
			cap = GRT_STATS_EXACT_MAX;
		bigger = realloc(s->samples, cap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		s->samples = bigger;
		s->samples_cap = cap;
	}
	s->samples[s->samples_len++] = v;
	s->samples_sorted = false;
	return 0;
}

/* The bookkeeping that is exact in every mode. */
static void count_value(struct grt_stats *s, uint64_t v)
{
	if (!s->count || v < s->min)
		s->min = v;
	if (!s->count || v > s->max)
		s->max = v;
	s->count++;
	s->total = s->total > UINT64_MAX - v ? UINT64_MAX : s->total + v;
}

int grt_stats_add(struct grt_stats *s, uint64_t value)
{
	count_value(s, value);
	if (s->hist)
		return hist_add(s->hist, value, 1);
	if (s->samples_len == GRT_STATS_EXACT_MAX && to_histogram(s))
		return -ENOMEM;
	if (s->hist)
		return hist_add(s->hist, value, 1);
	return samples_push(s, value);
}

static int merge_histogram(struct grt_stats_histogram *dst, const struct grt_stats_histogram *src)
{
	for (unsigned g = 0; g < GROUPS; g++) {
		if (!src->groups[g])
			continue;
		for (unsigned i = 0; i < group_size(g); i++)
			if (src->groups[g][i] && hist_add(dst, bucket_value(g, i), src->groups[g][i]))
				return -ENOMEM;
	}
	return 0;
}

int grt_stats_merge(struct grt_stats *dst, const struct grt_stats *src)
{
	if (!src->count)
		return 0;
	/* min, max and total come over exactly; the held values follow below */
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (!dst->count || src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->total = dst->total > UINT64_MAX - src->total ? UINT64_MAX : dst->total + src->total;
	if (!dst->hist && !src->hist && dst->samples_len + src->samples_len <= GRT_STATS_EXACT_MAX) {
		for (uint32_t i = 0; i < src->samples_len; i++)
			if (samples_push(dst, src->samples[i]))
				return -ENOMEM;
		return 0;
	}
	if (!dst->hist && to_histogram(dst))
		return -ENOMEM;
	if (src->hist)
		return merge_histogram(dst->hist, src->hist);
	for (uint32_t i = 0; i < src->samples_len; i++)
		if (hist_add(dst->hist, src->samples[i], 1))
			return -ENOMEM;
	return 0;
}

double grt_stats_mean(const struct grt_stats *s)
{
	return s->count ? (double)s->total / (double)s->count : 0.0;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ceil(pct/100 * held), within [1, held]; pct * held first keeps integer percents exact. */
static uint64_t nearest_rank(double pct, uint64_t held)
{
	double r = ceil(pct * (double)held / 100.0);

	if (!(r >= 1.0))
		return 1;
	if (r >= (double)held)
		return held;
	return (uint64_t)r;
}

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static uint64_t hist_percentile(const struct grt_stats *s, uint64_t rank)
{
	const struct grt_stats_histogram *h = s->hist;
	uint64_t seen = 0;

	/* the extremes are known exactly */
	if (rank == 1)
		return s->min;
	if (rank == h->held)
		return s->max;
	for (unsigned g = 0; g < GROUPS; g++) {
		if (!h->groups[g])
			continue;
		for (unsigned i = 0; i < group_size(g); i++) {
			seen += h->groups[g][i];
			if (seen >= rank)
				return clamp(bucket_value(g, i), s->min, s->max);
		}
	}
	return s->max;
}

uint64_t grt_stats_percentile(struct grt_stats *s, double pct)
{
	if (s->hist)
		return s->hist->held ? hist_percentile(s, nearest_rank(pct, s->hist->held)) : s->max;
	if (!s->samples_len)
		return s->count ? s->max : 0;
	if (!s->samples_sorted) {
		qsort(s->samples, s->samples_len, sizeof(s->samples[0]), compare_u64);
		s->samples_sorted = true;
	}
	return s->samples[nearest_rank(pct, s->samples_len) - 1];
}

bool grt_stats_is_exact(const struct grt_stats *s)
{
	return !s->hist;
}

size_t grt_stats_heap_bytes(const struct grt_stats *s)
{
	size_t bytes = s->samples_cap * sizeof(uint64_t);

	if (s->hist) {
		bytes += sizeof(*s->hist);
		for (unsigned g = 0; g < GROUPS; g++)
			if (s->hist->groups[g])
				bytes += group_size(g) * sizeof(uint64_t);
	}
	return bytes;
}
