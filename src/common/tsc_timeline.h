/*
 * The CPU's time-stamp counter turned into CLOCK_MONOTONIC after the fact, by the recorder.
 *
 * The in-process cuda path stamps each call with the raw counter (two reads a call, ~23 ns each
 * on the GPU machine's CPU against ~45 for clock_gettime) and leaves the conversion to the
 * recorder, so the traced thread does no clock arithmetic and touches no shared clock state.
 * The recorder samples (counter, CLOCK_MONOTONIC) pairs as it drains and converts each value by
 * interpolating between the two samples around it: the kernel's CLOCK_MONOTONIC is itself a
 * piecewise-linear function of the counter, so between two exact samples the error is that of
 * the samples (each read bracketed by two counter reads, the tightest of a few tries kept) plus
 * what NTP's slewing bends within the gap. Values after the newest sample (calls committed
 * while a drain runs) are extrapolated along a slope measured over at least a millisecond.
 *
 * Only where the kernel's clocksource is the TSC (synchronized across CPUs, constant rate).
 */
#ifndef GRT_TSC_TIMELINE_H
#define GRT_TSC_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include "common/tsc_counter.h"

struct tsc_point {
	uint64_t tsc;
	uint64_t ns;
};

/*
 * The line of the segment the last conversion used, ready to apply: a value in [lo, hi) is
 * ns + (tsc - lo) * mult / 2^40. Most values a drain converts fall in one segment.
 */
struct tsc_segment {
	uint64_t lo, hi; /* hi == 0: none */
	uint64_t ns;
	uint64_t mult; /* ns per tick, 24.40 fixed point */
};

struct tsc_timeline {
	struct tsc_point *points; /* increasing in both members */
	uint32_t n, cap;
	uint32_t hint;	   /* the segment the last conversion used */
	bool provisional;  /* the last point is less than the gap after the one before: replaced */
	struct tsc_segment seg;
};

/* Whether this machine's kernel keeps CLOCK_MONOTONIC on the TSC (only then may it stand in). */
bool tsc_timeline_usable(void);

/* Empty, then one sample. 0 or -ENOMEM. */
int tsc_timeline_init(struct tsc_timeline *t);
void tsc_timeline_free(struct tsc_timeline *t);

/* Takes a sample now (a few hundred ns); 0 or -ENOMEM. */
int tsc_timeline_sample(struct tsc_timeline *t);

/* Adds a sample given (tests): tsc and ns must not go back. */
int tsc_timeline_add(struct tsc_timeline *t, uint64_t tsc, uint64_t ns);

/* CLOCK_MONOTONIC at counter value tsc; 0 when the timeline has no sample. */
uint64_t tsc_timeline_ns(struct tsc_timeline *t, uint64_t tsc);

#endif
