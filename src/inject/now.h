/* CLOCK_MONOTONIC in nanoseconds, inline: the launch path reads it several times per call. */
#ifndef GRT_INJECT_NOW_H
#define GRT_INJECT_NOW_H

#include <stdint.h>
#include <time.h>

static inline uint64_t inject_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
