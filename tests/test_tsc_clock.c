/*
 * The TSC clock of the in-process calls' timestamps (inject/tsc_clock.c): it follows
 * CLOCK_MONOTONIC, does not step back on a thread, refits, recovers from a line knocked off
 * the clock, and stays off where it must.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "inject/tsc_clock.h"
#include "test_util.h"

/* Nearly all reads (97%) must lie this close to the clock read around them... */
#define NEAR_NS 200
/* ... and every read this close (a loaded 2-core machine preempts a refit's pair now and then) */
#define FAR_NS 20000

static uint64_t mono(void)
{
	return inject_now_ns();
}

static int64_t distance(uint64_t before, uint64_t t, uint64_t after)
{
	if (t < before)
		return (int64_t)(before - t);
	if (t > after)
		return (int64_t)(t - after);
	return 0;
}

struct follow {
	uint64_t reads, near, worst, backwards;
};

/* Reads for ms milliseconds, each bracketed by clock_gettime. */
static struct follow follow_for(uint64_t ms)
{
	struct follow f = {0};
	uint64_t end = mono() + ms * 1000000, last = 0;

	for (uint64_t before = mono(); before < end; before = mono()) {
		uint64_t t = tsc_clock_ns(), after = mono();
		uint64_t d = (uint64_t)distance(before, t, after);

		f.reads++;
		f.near += d <= NEAR_NS;
		if (d > f.worst)
			f.worst = d;
		if (t < last)
			f.backwards = f.backwards > last - t ? f.backwards : last - t;
		last = t;
	}
	return f;
}

static bool clocksource_is_tsc(void)
{
	char name[16] = {0};
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	bool tsc;

	if (!f)
		return false;
	tsc = fgets(name, sizeof(name), f) && !strcmp(name, "tsc\n");
	fclose(f);
	return tsc;
}

static void test_follows_the_clock(void)
{
	struct follow f;

	tsc_clock_start();
	f = follow_for(300);
	printf("  %" PRIu64 " reads, %" PRIu64 " within %d ns, worst %" PRIu64 " ns, %" PRIu64
	       " refits\n",
	       f.reads, f.near, NEAR_NS, f.worst, tsc_clock_refits());
	CHECK(tsc_clock_on);
	CHECK_MSG(f.near * 100 >= f.reads * 97, "%" PRIu64 " of %" PRIu64 " reads within %d ns",
		  f.near, f.reads, NEAR_NS);
	CHECK_MSG(f.worst <= FAR_NS, "a read %" PRIu64 " ns off the clock", f.worst);
	CHECK_EQ_U64(f.backwards, 0);
	/* 2 ms of clock_gettime, then lines from 1 ms to 50 ms long */
	CHECK_MSG(tsc_clock_refits() >= 10 && tsc_clock_refits() <= 400, "%" PRIu64 " refits",
		  tsc_clock_refits());
	CHECK_EQ_U64(tsc_clock_restarts(), 0);
}

/* The line read from outside, as a thread that reads the clock sees it. */
static struct tsc_fit line(void)
{
	struct tsc_fit f;

	f.base_tsc = tsc_clock.fit.base_tsc;
	f.base_ns = tsc_clock.fit.base_ns;
	f.mult = tsc_clock.fit.mult;
	f.next_tsc = tsc_clock.fit.next_tsc;
	return f;
}

/* Moves the line by delta ns and makes it due, as a clock slewed behind the reads would. */
static void knock_line(int64_t delta)
{
	struct tsc_fit f = line();

	atomic_fetch_add(&tsc_clock.seq, 1);
	tsc_clock.fit.base_ns = f.base_ns + (uint64_t)delta;
	tsc_clock.fit.next_tsc = f.base_tsc; /* due at once, read along its slope so far */
	atomic_fetch_add(&tsc_clock.seq, 1);
}

/* How far one read lies from the clock reads around it. */
static uint64_t one_read_off(void)
{
	uint64_t before = mono();
	uint64_t t = tsc_clock_ns();
	uint64_t after = mono();

	return (uint64_t)distance(before, t, after);
}

static void test_recovers(void)
{
	struct follow f;
	uint64_t refits, t, ahead, off;

	tsc_clock_start();
	follow_for(100);
	refits = tsc_clock_refits();

	/* 50 us behind the clock: the next read steps the line forward, onto the clock */
	knock_line(-50000);
	off = one_read_off();
	CHECK_MSG(off <= FAR_NS, "after a step a read %" PRIu64 " ns off", off);
	CHECK_EQ_U64(tsc_clock_refits(), refits + 1);

	/* 500 ns ahead: slowed down, never back; on the clock again by the end of the period */
	knock_line(500);
	ahead = tsc_clock_ns();
	f = follow_for(150);
	CHECK_EQ_U64(f.backwards, 0);
	CHECK_MSG(tsc_clock_ns() >= ahead, "stepped back");
	off = one_read_off();
	CHECK_MSG(off <= NEAR_NS * 5, "not back on the clock: %" PRIu64 " ns off", off);

	/*
	 * 600 ns behind, then idle for half a second: the correction steers the next period only,
	 * not the idle time after it (which would carry the line microseconds ahead)
	 */
	knock_line(-600);
	tsc_clock_ns();
	usleep(500 * 1000);
	off = one_read_off();
	CHECK_MSG(off <= 2000, "after an idle half second a read %" PRIu64 " ns off", off);
	off = one_read_off();
	CHECK_MSG(off <= 2000, "... and the next %" PRIu64 " ns off", off);

	/* 5 ms off: no drift but a jump; the fit starts over on clock_gettime, then fits again */
	knock_line(5000000);
	t = tsc_clock_ns();
	CHECK_EQ_U64(tsc_clock_restarts(), 1);
	CHECK_EQ_U64(line().mult, 0);
	refits = tsc_clock_refits();
	f = follow_for(100);
	CHECK(tsc_clock_refits() > refits);
	CHECK(line().mult != 0);
	CHECK_MSG(f.near * 100 >= f.reads * 97, "after the restart %" PRIu64 " of %" PRIu64 " near",
		  f.near, f.reads);
	CHECK_MSG(f.worst <= FAR_NS, "after the restart a read %" PRIu64 " ns off", f.worst);
	CHECK(t > 0);
}

static void *reader(void *arg)
{
	struct follow *f = arg;

	*f = follow_for(200);
	return NULL;
}

/* Two threads reading while either may refit: each sees its clock go forward. */
static void test_threads(void)
{
	struct follow f[2];
	pthread_t th[2];

	tsc_clock_start();
	for (int i = 0; i < 2; i++)
		CHECK(!pthread_create(&th[i], NULL, reader, &f[i]));
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		/* a refit preempted while this thread reads on may set it back by tens of ns */
		CHECK_MSG(f[i].backwards <= 100, "thread %d stepped back %" PRIu64 " ns", i,
			  f[i].backwards);
		CHECK_MSG(f[i].worst <= FAR_NS, "thread %d read %" PRIu64 " ns off", i, f[i].worst);
		CHECK_MSG(f[i].near * 100 >= f[i].reads * 97, "thread %d: %" PRIu64 " of %" PRIu64,
			  i, f[i].near, f[i].reads);
	}
	CHECK_EQ_U64(tsc_clock_restarts(), 0);
}

/* A fork while another thread was inside a refit: the child starts the fit over, unharmed. */
static void test_fork_mid_refit(void)
{
	struct follow f;

	tsc_clock_start();
	follow_for(20);
	atomic_fetch_add(&tsc_clock.seq, 1); /* a refit's publish, cut short */
	tsc_clock_after_fork();
	CHECK_EQ_U64(atomic_load(&tsc_clock.seq) & 1, 0);
	CHECK_EQ_U64(line().mult, 0);
	f = follow_for(50);
	CHECK(line().mult != 0);
	CHECK_MSG(f.worst <= FAR_NS, "after the fork a read %" PRIu64 " ns off", f.worst);
	/* a fork with no refit under way keeps the line */
	tsc_clock_after_fork();
	CHECK(line().mult != 0);
}

/* Off with GRTRACE_INJECT_CLOCK=monotonic, and where the kernel's clock is not the TSC. */
static void test_when_on(void)
{
	tsc_clock_on = false;
	setenv(GRT_INJECT_ENV_CLOCK, "monotonic", 1);
	CHECK(!tsc_clock_init());
	CHECK(!tsc_clock_on);
	unsetenv(GRT_INJECT_ENV_CLOCK);
	CHECK_EQ_U64(tsc_clock_init(), clocksource_is_tsc());
	CHECK_EQ_U64(tsc_clock_on, clocksource_is_tsc());
	tsc_clock_on = false;
	{
		uint64_t before = mono(), t = tsc_clock_ns(), after = mono();

		CHECK(before <= t && t <= after);
	}
}

int main(void)
{
#if defined(__x86_64__)
	/* the counter follows CLOCK_MONOTONIC only where the kernel's clock is the TSC */
	if (clocksource_is_tsc()) {
		RUN_TEST(test_follows_the_clock);
		RUN_TEST(test_recovers);
		RUN_TEST(test_threads);
		RUN_TEST(test_fork_mid_refit);
	} else {
		printf("ok - the clock's accuracy not tested: the clocksource is not the TSC\n");
	}
#endif
	RUN_TEST(test_when_on);
	return TEST_EXIT_STATUS();
}
