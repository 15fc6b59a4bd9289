/* Tests of the streaming statistics against exact answers from sorted arrays. */
#include <math.h>
#include <stdlib.h>
#include "analysis/stats.h"
#include "test_util.h"

static const unsigned percents[] = { 0, 1, 10, 25, 50, 75, 90, 99, 100 };
#define NPERCENTS (sizeof(percents) / sizeof(percents[0]))

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank on a sorted array with integer arithmetic: the reference answer. */
static uint64_t exact_percentile(const uint64_t *sorted, uint64_t n, unsigned pct)
{
	uint64_t rank = (pct * n + 99) / 100;

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

enum distribution { UNIFORM_WIDE, LOG_UNIFORM, NARROW, SMALL, CONSTANT, HUGE_VALUES };

static uint64_t draw(enum distribution d)
{
	switch (d) {
	case UNIFORM_WIDE:
		return next_random() % 1000000000ull;
	case LOG_UNIFORM:
		return (uint64_t)exp((double)(next_random() % 1000000) / 1000000.0 * log(1e12));
	case NARROW:
		return 1000 + next_random() % 1000;
	case SMALL:
		return next_random() % 256;
	case CONSTANT:
		return 123456789;
	case HUGE_VALUES:
		return UINT64_MAX - next_random() % (1ull << 40);
	}
	return 0;
}

/* Fills stats and a sorted copy with n draws; the caller frees *values. */
static void fill(struct grt_stats *s, uint64_t **values, uint64_t n, enum distribution d)
{
	*values = malloc(n * sizeof(**values));
	grt_stats_init(s);
	for (uint64_t i = 0; i < n; i++) {
		(*values)[i] = draw(d);
		CHECK(grt_stats_add(s, (*values)[i]) == 0);
	}
	qsort(*values, n, sizeof(**values), compare_u64);
}

/* Within 1/256 of the exact answer (the documented bound), or equal. */
static int close_enough(uint64_t got, uint64_t want)
{
	double diff = fabs((double)got - (double)want);

	return diff <= (double)want / 256.0 + 0.5;
}

static void check_against(struct grt_stats *s, const uint64_t *sorted, uint64_t n, int exact)
{
	long double sum = 0;

	for (uint64_t i = 0; i < n; i++)
		sum += sorted[i];
	CHECK_EQ_U64(s->count, n);
	CHECK_EQ_U64(s->min, sorted[0]);
	CHECK_EQ_U64(s->max, sorted[n - 1]);
	if (sum < (long double)UINT64_MAX)
		CHECK_EQ_U64(s->total, (uint64_t)sum);
	else
		CHECK_EQ_U64(s->total, UINT64_MAX);
	for (size_t i = 0; i < NPERCENTS; i++) {
		uint64_t want = exact_percentile(sorted, n, percents[i]);
		uint64_t got = grt_stats_percentile(s, percents[i]);

		if (exact ? got != want : !close_enough(got, want)) {
			printf("  n=%" PRIu64 " p%u: got %" PRIu64 ", exact %" PRIu64 "\n", n, percents[i],
			       got, want);
			CHECK(0);
		}
	}
}

static void test_empty(void)
{
	struct grt_stats s;

	grt_stats_init(&s);
	CHECK_EQ_U64(s.count, 0);
	CHECK_EQ_U64(grt_stats_percentile(&s, 50), 0);
	CHECK(grt_stats_mean(&s) == 0.0);
	CHECK(grt_stats_is_exact(&s));
	grt_stats_destroy(&s);
}

static void test_seven_launches(void)
{
	struct grt_stats s;

	grt_stats_init(&s);
	for (uint64_t us = 70; us >= 10; us -= 10)
		grt_stats_add(&s, us * 1000);
	CHECK_EQ_U64(s.count, 7);
	CHECK_EQ_U64(s.total, 280000);
	CHECK_EQ_U64(s.min, 10000);
	CHECK_EQ_U64(s.max, 70000);
	CHECK(grt_stats_mean(&s) == 40000.0);
	CHECK_EQ_U64(grt_stats_percentile(&s, 50), 40000);
	CHECK_EQ_U64(grt_stats_percentile(&s, 90), 70000);
	CHECK_EQ_U64(grt_stats_percentile(&s, 99), 70000);
	CHECK_EQ_U64(grt_stats_percentile(&s, 0), 10000);
	/* rank ceil(0.1 * 7) = 1, ceil(0.3 * 7) = 3 */
	CHECK_EQ_U64(grt_stats_percentile(&s, 10), 10000);
	CHECK_EQ_U64(grt_stats_percentile(&s, 30), 30000);
	grt_stats_destroy(&s);
}

static void test_exact_small_counts(void)
{
	static const uint64_t sizes[] = { 1, 2, 3, 10, 99, 100, 255, GRT_STATS_EXACT_MAX };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int d = UNIFORM_WIDE; d <= HUGE_VALUES; d++) {
			struct grt_stats s;
			uint64_t *sorted;

			fill(&s, &sorted, sizes[i], d);
			CHECK(grt_stats_is_exact(&s));
			check_against(&s, sorted, sizes[i], 1);
			grt_stats_destroy(&s);
			free(sorted);
		}
	}
}

static void test_histogram_large_counts(void)
{
	static const uint64_t sizes[] = { GRT_STATS_EXACT_MAX + 1, 1000, 100000 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int d = UNIFORM_WIDE; d <= HUGE_VALUES; d++) {
			struct grt_stats s;
			uint64_t *sorted;

			fill(&s, &sorted, sizes[i], d);
			CHECK(!grt_stats_is_exact(&s));
			/* below 256 every value has its own bucket: still exact */
			check_against(&s, sorted, sizes[i], d == SMALL || d == CONSTANT);
			grt_stats_destroy(&s);
			free(sorted);
		}
	}
}

static void test_memory_bounded(void)
{
	struct grt_stats wide, narrow;

	grt_stats_init(&wide);
	grt_stats_init(&narrow);
	for (int i = 0; i < 1000000; i++) {
		grt_stats_add(&wide, draw(LOG_UNIFORM));
		grt_stats_add(&narrow, draw(NARROW));
	}
	/*
	 * 1..1e12: group 0 (256 counters, values < 256) and the 32 powers of two
	 * from 2^8 to 2^39 (128 counters each), plus the group table
	 */
	CHECK(grt_stats_heap_bytes(&wide) <= (256 + 32 * 128) * sizeof(uint64_t) + 512);
	/* 1000..1999 touches 2 powers of two */
	CHECK(grt_stats_heap_bytes(&narrow) <= 2 * 128 * sizeof(uint64_t) + 512);
	CHECK_EQ_U64(wide.count, 1000000);
	grt_stats_destroy(&wide);
	grt_stats_destroy(&narrow);
}

/* Splits n draws into two stats, merges them, and compares with the whole. */
static void check_merge(uint64_t n_a, uint64_t n_b, enum distribution d, int exact)
{
	struct grt_stats a, b;
	uint64_t *all = malloc((n_a + n_b) * sizeof(*all));

	grt_stats_init(&a);
	grt_stats_init(&b);
	for (uint64_t i = 0; i < n_a + n_b; i++) {
		all[i] = draw(d);
		grt_stats_add(i < n_a ? &a : &b, all[i]);
	}
	qsort(all, n_a + n_b, sizeof(*all), compare_u64);
	CHECK(grt_stats_merge(&a, &b) == 0);
	CHECK(grt_stats_is_exact(&a) == exact);
	check_against(&a, all, n_a + n_b, exact);
	/* the source is left as it was */
	CHECK_EQ_U64(b.count, n_b);
	grt_stats_destroy(&a);
	grt_stats_destroy(&b);
	free(all);
}

static void test_merge(void)
{
	check_merge(0, 5, UNIFORM_WIDE, 1);	/* into empty: min must come from src */
	check_merge(5, 0, UNIFORM_WIDE, 1);
	check_merge(100, 156, LOG_UNIFORM, 1);
	check_merge(200, 100, LOG_UNIFORM, 0);	/* exact + exact past the limit */
	check_merge(10, 5000, UNIFORM_WIDE, 0);	/* exact + histogram */
	check_merge(5000, 10, NARROW, 0);	/* histogram + exact */
	check_merge(5000, 7000, LOG_UNIFORM, 0);
}

static void test_extremes(void)
{
	struct grt_stats s;

	grt_stats_init(&s);
	grt_stats_add(&s, 0);
	grt_stats_add(&s, UINT64_MAX);
	grt_stats_add(&s, UINT64_MAX);
	CHECK_EQ_U64(s.total, UINT64_MAX);	/* saturated */
	CHECK_EQ_U64(grt_stats_percentile(&s, 0), 0);
	CHECK_EQ_U64(grt_stats_percentile(&s, 50), UINT64_MAX);
	for (int i = 0; i < 1000; i++)
		grt_stats_add(&s, i % 2 ? UINT64_MAX : 0);
	CHECK(!grt_stats_is_exact(&s));
	CHECK_EQ_U64(grt_stats_percentile(&s, 100), UINT64_MAX);
	CHECK_EQ_U64(grt_stats_percentile(&s, 0), 0);
	CHECK_EQ_U64(grt_stats_percentile(&s, 40), 0);
	grt_stats_destroy(&s);
}

int main(void)
{
	RUN_TEST(test_empty);
	RUN_TEST(test_seven_launches);
	RUN_TEST(test_exact_small_counts);
	RUN_TEST(test_histogram_large_counts);
	RUN_TEST(test_memory_bounded);
	RUN_TEST(test_merge);
	RUN_TEST(test_extremes);
	return TEST_EXIT_STATUS();
}
