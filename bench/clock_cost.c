/*
 * What one timestamp costs on this machine: CLOCK_MONOTONIC through clock_gettime (the clock
 * every grtrace record carries; the in-process call path reads it at entry and at return) and
 * the bare TSC, 10 M reads each, five rounds. Prints ns per read.
 *   cc -O2 -o clock_cost bench/clock_cost.c && ./clock_cost
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

#define READS 10000000

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	for (int round = 0; round < 5; round++) {
		uint64_t sink = 0, t0, t1, t2;

		t0 = monotonic_ns();
		for (int i = 0; i < READS; i++)
			sink += monotonic_ns();
		t1 = monotonic_ns();
		for (int i = 0; i < READS; i++)
			sink += __rdtsc();
		t2 = monotonic_ns();
		printf("clock_gettime %.1f ns/read; rdtsc %.1f ns/read (%u)\n",
		       (double)(t1 - t0) / READS, (double)(t2 - t1) / READS, (unsigned)(sink & 1));
	}
	return 0;
}
