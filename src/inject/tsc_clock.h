/*
 * CLOCK_MONOTONIC read from the CPU's time-stamp counter, for the two timestamps of each CUDA
 * call the library records (docs/cuda.md, "In-process recording").
 *
 * clock_gettime through the vDSO orders the counter read with a fence and checks the kernel's
 * clock page; on the GPU machine's CPU that is ~45 ns a read against ~23 ns for the counter
 * alone, and a recorded call reads the clock twice. Here the counter is scaled by a fit the
 * library keeps against CLOCK_MONOTONIC itself: refitted by whichever thread reads the clock
 * once a period has passed (1 ms at first, 50 ms once the fit rests on a long baseline), each
 * refit continuing the previous line and steering its slope to absorb what it drifted, so the
 * values stay within tens of nanoseconds of CLOCK_MONOTONIC and a thread's time does not step
 * back (but by tens of ns when a refit is preempted while another thread reads on: records
 * keep return >= entry). A line 1 us behind the clock steps forward, one ahead slows down; a
 * drift over 1 ms, a counter reset or a fork during a refit starts the fit over, on
 * clock_gettime meanwhile. Used only where the kernel's own clocksource is the TSC
 * (synchronized across CPUs, constant rate); elsewhere, or with GRTRACE_INJECT_CLOCK=monotonic,
 * every read is clock_gettime.
 */
#ifndef GRT_INJECT_TSC_CLOCK_H
#define GRT_INJECT_TSC_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "inject/now.h"

#define GRT_INJECT_ENV_CLOCK "GRTRACE_INJECT_CLOCK" /* "monotonic": no TSC */

/* A counter this far behind the line's start is no skew between CPUs but a reset (~0.3 ms). */
#define TSC_BEHIND_TICKS (1ULL << 20)

/* The line ns = base_ns + (tsc - base_tsc) * mult / 2^32, valid until next_tsc. */
struct tsc_fit {
	uint64_t base_tsc;
	uint64_t base_ns;
	uint64_t mult; /* ns per tick, 32.32 fixed point; 0 until the first fit */
	uint64_t next_tsc;
};

/* A seqlock around the fit: odd while a refit writes it. */
struct tsc_clock {
	atomic_uint seq;
	struct tsc_fit fit;
};

extern struct tsc_clock tsc_clock;
extern bool tsc_clock_on;

/*
 * Whether the counter may stand for CLOCK_MONOTONIC here (the kernel's clocksource is the
 * TSC and the environment does not turn it off); starts the fit when it may.
 */
bool tsc_clock_init(void);
/* The same without asking the kernel's clocksource (tests on machines whose TSC is fine). */
void tsc_clock_start(void);
/* A read that found the fit due (or none yet): refits, or falls back to clock_gettime. */
uint64_t tsc_clock_refit(uint64_t tsc);
/* In a forked child: a refit the fork cut short in another thread is dropped. */
void tsc_clock_after_fork(void);
/* How many lines this process fitted, and how often it started over (tests and benchmarks). */
uint64_t tsc_clock_refits(void);
uint64_t tsc_clock_restarts(void);

static inline uint64_t tsc_clock_counter(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#else
	return 0;
#endif
}

static inline uint64_t tsc_fit_ns(const struct tsc_fit *f, uint64_t tsc)
{
	/* a counter a hair behind the base (read on another CPU just before a refit) is the base */
	uint64_t ticks = tsc > f->base_tsc ? tsc - f->base_tsc : 0;

	return f->base_ns + (uint64_t)(((unsigned __int128)ticks * f->mult) >> 32);
}

/*
 * A consistent copy of the fit, and the counter read after the fit's version (so no fit newer
 * than the counter value is taken): false when a refit wrote the fit meanwhile (read again).
 */
static inline bool tsc_fit_snapshot(struct tsc_fit *f, uint64_t *tsc)
{
	unsigned seq = atomic_load_explicit(&tsc_clock.seq, memory_order_acquire);

	*tsc = tsc_clock_counter();
	f->base_tsc = __atomic_load_n(&tsc_clock.fit.base_tsc, __ATOMIC_RELAXED);
	f->base_ns = __atomic_load_n(&tsc_clock.fit.base_ns, __ATOMIC_RELAXED);
	f->mult = __atomic_load_n(&tsc_clock.fit.mult, __ATOMIC_RELAXED);
	f->next_tsc = __atomic_load_n(&tsc_clock.fit.next_tsc, __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_acquire);
	return !(seq & 1) && atomic_load_explicit(&tsc_clock.seq, memory_order_relaxed) == seq;
}

/* CLOCK_MONOTONIC in nanoseconds: from the counter when it may, else clock_gettime. */
static inline uint64_t tsc_clock_ns(void)
{
	struct tsc_fit f;
	uint64_t tsc;

	if (!tsc_clock_on)
		return inject_now_ns();
	/* bounded: a signal handler's call on a thread interrupted inside a refit must not spin */
	for (int tries = 0; !tsc_fit_snapshot(&f, &tsc); tries++)
		if (tries > 1000)
			return inject_now_ns();
	/* due, or a counter far behind the line's start (a TSC reset): refit */
	if (__builtin_expect(tsc >= f.next_tsc || tsc + TSC_BEHIND_TICKS < f.base_tsc, 0))
		return tsc_clock_refit(tsc);
	return tsc_fit_ns(&f, tsc);
}

#endif
