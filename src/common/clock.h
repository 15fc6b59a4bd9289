/* Reading the clocks a trace uses, in nanoseconds. */
#ifndef GRT_CLOCK_H
#define GRT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t grt_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The clock of every record's ts_ns (and of bpf_ktime_get_ns). */
static inline uint64_t grt_monotonic_ns(void)
{
	return grt_clock_ns(CLOCK_MONOTONIC);
}

#endif
