/* The TSC fit against CLOCK_MONOTONIC: starting it, refitting it, giving it up (tsc_clock.h). */
#include "inject/tsc_clock.h"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* CLOCK_MONOTONIC that passes before the first fit: its slope rests on at least this baseline. */
#define FIRST_BASELINE_NS 2000000ULL
/*
 * Refits come a quarter of the baseline apart, from 1 ms to 50 ms: a slope measured over a
 * baseline B from pairs good to ~50 ns is off by ~50/B, which over B/4 moves the line ~12 ns.
 */
#define MIN_PERIOD_NS 1000000ULL
#define MAX_PERIOD_NS 50000000ULL
/* A drift up to this is absorbed by the next period's slope; a line further behind steps. */
#define SLEW_LIMIT_NS 1000
/*
 * A drift beyond this is no drift (the counter or the clock jumped, or the clock was slewed
 * hard while no call read it): the fit starts over from a new first pair.
 */
#define RESTART_NS 1000000
/* Pairs read for one refit: the one whose two counter reads lie closest together is kept. */
#define PAIR_TRIES 4

struct tsc_clock tsc_clock;
bool tsc_clock_on;

static struct {
	uint64_t tsc, ns; /* the first pair: the slope's baseline starts here */
	atomic_flag refitting;
	uint64_t slope; /* the long-run ns per tick (32.32) of the last refit, without correction */
	atomic_uint_fast64_t refits, restarts;
} state = {.refitting = ATOMIC_FLAG_INIT};

static inline uint64_t ordered_counter(void)
{
#if defined(__x86_64__)
	__asm__ volatile("lfence" ::: "memory");
	uint64_t t = tsc_clock_counter();
	__asm__ volatile("lfence" ::: "memory");
	return t;
#else
	return 0;
#endif
}

/* A counter value and CLOCK_MONOTONIC read at the same instant, as near as a few tries get. */
static void read_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < PAIR_TRIES; i++) {
		uint64_t before = ordered_counter();
		uint64_t now = inject_now_ns();
		uint64_t after = ordered_counter();

		if (after - before < best) {
			best = after - before;
			*tsc = before + (after - before) / 2;
			*ns = now;
		}
	}
}

static uint64_t slope(uint64_t ns, uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ns << 32) / ticks);
}

static uint64_t period_ticks(uint64_t baseline_ns, uint64_t mult)
{
	uint64_t period = baseline_ns / 4;

	if (period < MIN_PERIOD_NS)
		period = MIN_PERIOD_NS;
	if (period > MAX_PERIOD_NS)
		period = MAX_PERIOD_NS;
	return slope(period, 1) / mult;
}

static void publish(const struct tsc_fit *f)
{
	atomic_fetch_add_explicit(&tsc_clock.seq, 1, memory_order_acq_rel);
	atomic_thread_fence(memory_order_release);
	__atomic_store_n(&tsc_clock.fit.base_tsc, f->base_tsc, __ATOMIC_RELAXED);
	__atomic_store_n(&tsc_clock.fit.base_ns, f->base_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&tsc_clock.fit.mult, f->mult, __ATOMIC_RELAXED);
	__atomic_store_n(&tsc_clock.fit.next_tsc, f->next_tsc, __ATOMIC_RELAXED);
	atomic_fetch_add_explicit(&tsc_clock.seq, 1, memory_order_release);
}

/* The fit as it stands (another thread may be refitting it). */
static struct tsc_fit current_fit(void)
{
	struct tsc_fit f;
	uint64_t tsc;

	while (!tsc_fit_snapshot(&f, &tsc))
		;
	return f;
}

/*
 * Where the old line stands at tsc: its own (corrected) slope as far as next_tsc, where readers
 * could read it, and the long-run slope beyond, where they could not: a correction meant for one
 * period must not go on through an idle second (it would carry the line microseconds off).
 */
static uint64_t line_at(const struct tsc_fit *old, uint64_t tsc, uint64_t slope)
{
	if (tsc <= old->next_tsc)
		return tsc_fit_ns(old, tsc);
	return tsc_fit_ns(old, old->next_tsc) +
	       (uint64_t)(((unsigned __int128)(tsc - old->next_tsc) * slope) >> 32);
}

/*
 * The next line from a fresh pair: its slope from the baseline since the first pair, corrected
 * so that the drift the old line shows at the pair is gone by the end of the next period; it
 * starts where the old line is, so no reader sees time step back. A line with no slope (mult 0)
 * starts the fit over: clock_gettime until a new baseline is long enough.
 */
static struct tsc_fit next_fit(const struct tsc_fit *old, uint64_t tsc, uint64_t ns)
{
	uint64_t baseline = ns - state.ns;
	uint64_t mult, ticks, now;
	int64_t drift;

	if (tsc <= state.tsc || ns <= state.ns)
		return (struct tsc_fit){0};
	mult = slope(baseline, tsc - state.tsc);
	ticks = period_ticks(baseline, mult);
	if (!old->mult)
		return (struct tsc_fit){tsc, ns, mult, tsc + ticks};
	now = line_at(old, tsc, mult);
	drift = (int64_t)(ns - now);
	if (drift > RESTART_NS || drift < -RESTART_NS)
		return (struct tsc_fit){0};
	/* ahead of the line: step forward; behind it: slow down rather than step back */
	if (drift > SLEW_LIMIT_NS)
		return (struct tsc_fit){tsc, ns, mult, tsc + ticks};
	/* mult + drift / ticks, in 32.32; a negative drift never takes more than half the slope */
	if (drift >= 0)
		mult += slope((uint64_t)drift, ticks);
	else if (slope((uint64_t)-drift, ticks) < mult / 2)
		mult -= slope((uint64_t)-drift, ticks);
	else
		mult /= 2;
	return (struct tsc_fit){tsc, now, mult, tsc + ticks};
}

uint64_t tsc_clock_refit(uint64_t tsc)
{
	struct tsc_fit old = current_fit(), f;
	uint64_t pair_tsc, pair_ns;

	if (!old.mult) {
		/* no line yet: the clock itself until the first pair is FIRST_BASELINE_NS old */
		uint64_t now = inject_now_ns();

		if (now - __atomic_load_n(&state.ns, __ATOMIC_RELAXED) < FIRST_BASELINE_NS)
			return now;
	}
	if (atomic_flag_test_and_set_explicit(&state.refitting, memory_order_acquire))
		/* another thread refits: the old line a little longer, or the clock itself */
		return old.mult
			   ? line_at(&old, tsc, __atomic_load_n(&state.slope, __ATOMIC_RELAXED))
			   : inject_now_ns();
	old = current_fit();
	if (old.mult && tsc >= old.base_tsc && tsc < old.next_tsc) {
		/* another thread refitted since this one found the line due */
		atomic_flag_clear_explicit(&state.refitting, memory_order_release);
		return tsc_fit_ns(&old, tsc);
	}
	read_pair(&pair_tsc, &pair_ns);
	f = next_fit(&old, pair_tsc, pair_ns);
	if (!f.mult) {
		__atomic_store_n(&state.tsc, pair_tsc, __ATOMIC_RELAXED);
		__atomic_store_n(&state.ns, pair_ns, __ATOMIC_RELAXED);
		atomic_fetch_add_explicit(&state.restarts, 1, memory_order_relaxed);
	} else {
		__atomic_store_n(&state.slope, slope(pair_ns - state.ns, pair_tsc - state.tsc),
				 __ATOMIC_RELAXED);
		atomic_fetch_add_explicit(&state.refits, 1, memory_order_relaxed);
	}
	publish(&f);
	atomic_flag_clear_explicit(&state.refitting, memory_order_release);
	return f.mult ? tsc_fit_ns(&f, tsc) : pair_ns;
}

uint64_t tsc_clock_refits(void)
{
	return atomic_load_explicit(&state.refits, memory_order_relaxed);
}

uint64_t tsc_clock_restarts(void)
{
	return atomic_load_explicit(&state.restarts, memory_order_relaxed);
}

/* No line, and a new first pair: clock_gettime until the baseline from it is long enough. */
static void start_over(void)
{
	static const struct tsc_fit none;

	publish(&none);
	read_pair(&state.tsc, &state.ns);
}

void tsc_clock_start(void)
{
	atomic_store_explicit(&state.refits, 0, memory_order_relaxed);
	atomic_store_explicit(&state.restarts, 0, memory_order_relaxed);
	start_over();
	tsc_clock_on = true;
}

void tsc_clock_after_fork(void)
{
	/*
	 * A thread that was refitting at the fork is not in the child: its fit may be half written
	 * and its first pair half moved. Start over, as after a jump.
	 */
	unsigned seq = atomic_load_explicit(&tsc_clock.seq, memory_order_relaxed);
	bool cut = atomic_flag_test_and_set_explicit(&state.refitting, memory_order_relaxed);

	if (seq & 1)
		atomic_store_explicit(&tsc_clock.seq, seq + 1, memory_order_relaxed);
	if (cut || (seq & 1))
		start_over();
	atomic_flag_clear_explicit(&state.refitting, memory_order_relaxed);
}

/* The kernel's clocksource: CLOCK_MONOTONIC follows the TSC only when it is "tsc". */
static bool kernel_clock_is_tsc(void)
{
	char name[16] = {0};
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, name, sizeof(name) - 1);
	close(fd);
	return n > 0 && !strcmp(name, "tsc\n");
}

bool tsc_clock_init(void)
{
#if defined(__x86_64__)
	const char *want = getenv(GRT_INJECT_ENV_CLOCK);

	if (want && !strcmp(want, "monotonic"))
		return false;
	if (!kernel_clock_is_tsc())
		return false;
	tsc_clock_start();
	return true;
#else
	return false;
#endif
}
