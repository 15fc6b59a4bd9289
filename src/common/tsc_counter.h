/* The CPU's time-stamp counter, read as it stands. */
#ifndef GRT_TSC_COUNTER_H
#define GRT_TSC_COUNTER_H

#include <stdint.h>

/*
 * No fence: the in-process call path reads it twice a call around the driver's entry, where
 * ordering against the instructions around it within a few cycles does not matter.
 */
static inline uint64_t grt_tsc_read(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#else
	return 0;
#endif
}

#endif
