/*
 * The recorder's conversion of raw TSC values to CLOCK_MONOTONIC (common/tsc_timeline.c):
 * exact between samples on known lines, extrapolation along a slope of at least a millisecond,
 * close samples replaced rather than kept, a counter that goes back starts over, thinning keeps
 * the line, and on this machine's own clock the converted counter lies inside clock_gettime
 * reads around it.
 */
#include <stdlib.h>
#include <time.h>
#include "common/clock.h"
#include "common/tsc_timeline.h"
#include "test_util.h"

#define TICKS_PER_NS 3 /* the synthetic lines' counter: 3 GHz */

static int64_t off_by(uint64_t got, uint64_t want)
{
	return got > want ? (int64_t)(got - want) : -(int64_t)(want - got);
}

static void test_interpolates_between_samples(void)
{
	struct tsc_timeline t = {0};

	/* 3 ticks a ns for 1 ms, then 2 ticks a ns: each segment is its own line */
	CHECK(!tsc_timeline_add(&t, 1000, 500000));
	CHECK(!tsc_timeline_add(&t, 1000 + 3000000, 1500000));
	CHECK(!tsc_timeline_add(&t, 1000 + 3000000 + 2000000, 2500000));
	CHECK_EQ_U64(t.n, 3);
	CHECK_EQ_U64(tsc_timeline_ns(&t, 1000), 500000);
	CHECK_EQ_U64(tsc_timeline_ns(&t, 1000 + 300), 500100);
	CHECK_EQ_U64(tsc_timeline_ns(&t, 1000 + 3000000), 1500000);
	CHECK_EQ_U64(tsc_timeline_ns(&t, 1000 + 3000000 + 1000000), 2000000);
	/* back to the first segment after the second: the hint is no shortcut to a wrong segment */
	CHECK_EQ_U64(tsc_timeline_ns(&t, 1000 + 2999997), 1499999);
	tsc_timeline_free(&t);
}

static void test_extrapolates_along_a_long_slope(void)
{
	struct tsc_timeline t = {0};
	uint64_t got;

	/* an exact line over 2 ms, then a sample 50 us on whose clock read was 40 ns late */
	CHECK(!tsc_timeline_add(&t, 3000, 1000000));
	CHECK(!tsc_timeline_add(&t, 3000 + 3000000, 2000000));
	CHECK(!tsc_timeline_add(&t, 3000 + 6000000, 3000000));
	CHECK(!tsc_timeline_add(&t, 3000 + 6000000 + 150000, 3050000 + 40));
	/* 1 ms past it: along the slope of the last millisecond, not of the last 50 us (+800 ns) */
	got = tsc_timeline_ns(&t, 3000 + 6000000 + 150000 + 3000000);
	CHECK_MSG(llabs(off_by(got, 4050000)) <= 100, "1 ms past the newest sample: %" PRId64 " ns off",
		  off_by(got, 4050000));
	/* before the first sample: along the first millisecond */
	CHECK_EQ_U64(tsc_timeline_ns(&t, 0), 1000000 - 1000);
	tsc_timeline_free(&t);
}

static void test_close_samples_are_replaced(void)
{
	struct tsc_timeline t = {0};

	CHECK(!tsc_timeline_add(&t, 0, 0));
	/* drains every 10 us: each sample replaces the one before until 100 us have passed */
	for (uint64_t us = 10; us <= 90; us += 10)
		CHECK(!tsc_timeline_add(&t, us * 1000 * TICKS_PER_NS, us * 1000));
	CHECK_EQ_U64(t.n, 2);
	CHECK_EQ_U64(t.points[1].ns, 90000);
	CHECK(!tsc_timeline_add(&t, 100000 * TICKS_PER_NS, 100000));
	CHECK_EQ_U64(t.n, 2);
	CHECK(!t.provisional);
	CHECK(!tsc_timeline_add(&t, 110000 * TICKS_PER_NS, 110000));
	CHECK_EQ_U64(t.n, 3);
	/* the same counter value twice adds nothing */
	CHECK(!tsc_timeline_add(&t, 110000 * TICKS_PER_NS, 110000));
	CHECK_EQ_U64(t.n, 3);
	tsc_timeline_free(&t);
}

static void test_counter_going_back_starts_over(void)
{
	struct tsc_timeline t = {0};

	CHECK(!tsc_timeline_add(&t, 5000000, 1000000));
	CHECK(!tsc_timeline_add(&t, 8000000, 2000000));
	CHECK(!tsc_timeline_add(&t, 100, 3000000)); /* reset: a new line from here */
	CHECK_EQ_U64(t.n, 1);
	CHECK(!tsc_timeline_add(&t, 100 + 3000000, 4000000));
	CHECK_EQ_U64(tsc_timeline_ns(&t, 100 + 1500000), 3500000);
	tsc_timeline_free(&t);
}

static void test_thinning_keeps_the_line(void)
{
	struct tsc_timeline t = {0};
	const uint64_t count = 50000, gap_ns = 200000;
	uint64_t worst = 0;

	/* 10 s of samples 200 us apart on one line: thinned, yet every value still on the line */
	for (uint64_t i = 0; i < count; i++)
		CHECK(!tsc_timeline_add(&t, 7 + i * gap_ns * TICKS_PER_NS, 1000 + i * gap_ns));
	CHECK_MSG(t.n <= 16384 && t.n > 8000, "%u samples kept", t.n);
	CHECK_EQ_U64(t.points[0].tsc, 7);
	CHECK_EQ_U64(t.points[t.n - 1].ns, 1000 + (count - 1) * gap_ns);
	srand(1);
	for (int k = 0; k < 100000; k++) {
		uint64_t ns = (uint64_t)rand() % ((count - 1) * gap_ns);
		uint64_t got = tsc_timeline_ns(&t, 7 + ns * TICKS_PER_NS);
		uint64_t d = (uint64_t)llabs(off_by(got, 1000 + ns));

		worst = d > worst ? d : worst;
	}
	CHECK_EQ_U64(worst, 0);
	tsc_timeline_free(&t);
}

/*
 * This machine's counter, sampled as the recorder samples it (every ~1 ms of reads), converted
 * afterwards: each value must lie inside the clock_gettime reads around its counter read.
 */
static void test_follows_this_machines_clock(void)
{
	enum { READS = 400000, NEAR_NS = 100, FAR_NS = 20000 };
	struct read {
		uint64_t before, tsc, after;
	} *r = calloc(READS, sizeof(*r));
	struct tsc_timeline t;
	uint64_t near = 0, worst = 0, last = 0, backwards = 0, next_sample = 0;

	if (!tsc_timeline_usable()) {
		printf("  # the clocksource is not the TSC: the recorder converts nothing here\n");
		free(r);
		return;
	}
	CHECK(r && !tsc_timeline_init(&t));
	if (!r)
		return;
	for (int i = 0; i < READS; i++) {
		r[i].before = grt_monotonic_ns();
		r[i].tsc = grt_tsc_read();
		r[i].after = grt_monotonic_ns();
		if (r[i].after >= next_sample) {
			tsc_timeline_sample(&t);
			next_sample = r[i].after + 1000000;
		}
	}
	tsc_timeline_sample(&t);
	for (int i = 0; i < READS; i++) {
		uint64_t ns = tsc_timeline_ns(&t, r[i].tsc);
		uint64_t d = ns < r[i].before ? r[i].before - ns
			     : ns > r[i].after ? ns - r[i].after
					       : 0;

		near += d <= NEAR_NS;
		worst = d > worst ? d : worst;
		if (ns < last && last - ns > backwards)
			backwards = last - ns;
		last = ns;
	}
	printf("  %d reads over %u samples: %" PRIu64 " within %d ns of their bracket, worst %" PRIu64
	       " ns\n",
	       READS, t.n, near, NEAR_NS, worst);
	CHECK_MSG(near * 100 >= (uint64_t)READS * 99, "%" PRIu64 " of %d near", near, READS);
	CHECK_MSG(worst <= FAR_NS, "worst %" PRIu64 " ns", worst);
	CHECK_EQ_U64(backwards, 0);
	tsc_timeline_free(&t);
	free(r);
}

int main(void)
{
	RUN_TEST(test_interpolates_between_samples);
	RUN_TEST(test_extrapolates_along_a_long_slope);
	RUN_TEST(test_close_samples_are_replaced);
	RUN_TEST(test_counter_going_back_starts_over);
	RUN_TEST(test_thinning_keeps_the_line);
	RUN_TEST(test_follows_this_machines_clock);
	return TEST_EXIT_STATUS();
}
