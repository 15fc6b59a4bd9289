/* Raw TSC values into CLOCK_MONOTONIC, interpolated between samples the recorder takes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/clock.h"
#include "common/grow_array.h"
#include "common/tsc_timeline.h"

/* A sample closer than this to the one before is replaced by the next, not kept beside it. */
#define MIN_GAP_NS 100000ull
/* Extrapolation follows the slope over at least this much of the newest (or oldest) samples. */
#define SLOPE_BASE_NS 1000000ull
/* Kept samples at most; past that the older half is thinned (they are converted rarely). */
#define MAX_POINTS 16384u
#define SAMPLE_TRIES 4

bool tsc_timeline_usable(void)
{
#if defined(__x86_64__)
	char name[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");

	if (!f)
		return false;
	if (!fgets(name, sizeof(name), f))
		name[0] = 0;
	fclose(f);
	return !strcmp(name, "tsc\n") || !strcmp(name, "tsc");
#else
	return false;
#endif
}

/* The counter with the reads around it kept in order: a sample's bracket must be tight. */
static uint64_t tsc_read_ordered(void)
{
#if defined(__x86_64__)
	uint64_t v;

	__asm__ volatile("lfence" ::: "memory");
	v = grt_tsc_read();
	__asm__ volatile("lfence" ::: "memory");
	return v;
#else
	return 0;
#endif
}

/* CLOCK_MONOTONIC and the counter at its middle, from the tightest of a few brackets. */
static struct tsc_point read_point(void)
{
	struct tsc_point best = {0, 0};
	uint64_t best_span = UINT64_MAX;

	for (int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t before = tsc_read_ordered(), ns = grt_monotonic_ns();
		uint64_t after = tsc_read_ordered();

		if (after >= before && after - before < best_span) {
			best_span = after - before;
			best.tsc = before + (after - before) / 2;
			best.ns = ns;
		}
	}
	return best;
}

/* Every other sample of the older half goes: the recent ones keep their resolution. */
static void thin(struct tsc_timeline *t)
{
	uint32_t half = t->n / 2, out = 1;

	for (uint32_t i = 2; i < half; i += 2)
		t->points[out++] = t->points[i];
	memmove(&t->points[out], &t->points[half], (t->n - half) * sizeof(*t->points));
	t->n = out + (t->n - half);
	t->hint = 0;
}

int tsc_timeline_add(struct tsc_timeline *t, uint64_t tsc, uint64_t ns)
{
	struct tsc_point *last = t->n ? &t->points[t->n - 1] : NULL;

	t->seg.hi = 0; /* the samples change: the segment kept for the next value with them */
	if (last && (tsc < last->tsc || ns < last->ns)) {
		/* a counter that went back (reset, or another machine's): start over from here */
		t->n = 0;
		t->hint = 0;
		t->provisional = false;
		last = NULL;
	}
	if (last && tsc == last->tsc)
		return 0;
	if (t->provisional && t->n >= 2) {
		t->n--;
	} else if (t->n == t->cap) {
		if (t->cap >= MAX_POINTS) {
			thin(t);
		} else if (grt_grow_array((void **)&t->points, &t->cap, sizeof(*t->points),
					  t->n + 1)) {
			return -ENOMEM;
		}
	}
	t->points[t->n++] = (struct tsc_point){tsc, ns};
	t->provisional = t->n >= 2 && ns - t->points[t->n - 2].ns < MIN_GAP_NS;
	return 0;
}

int tsc_timeline_sample(struct tsc_timeline *t)
{
	struct tsc_point p = read_point();

	return tsc_timeline_add(t, p.tsc, p.ns);
}

int tsc_timeline_init(struct tsc_timeline *t)
{
	struct timespec gap = {.tv_nsec = (long)SLOPE_BASE_NS};
	int err;

	memset(t, 0, sizeof(*t));
	err = tsc_timeline_sample(t);
	/* a second sample a slope's base later: no value is ever converted from one point */
	nanosleep(&gap, NULL);
	return err ? err : tsc_timeline_sample(t);
}

void tsc_timeline_free(struct tsc_timeline *t)
{
	free(t->points);
	memset(t, 0, sizeof(*t));
}

/* ns at tsc on the line through a and b (tsc may lie outside them): exact, for the rare cases */
static uint64_t along(const struct tsc_point *a, const struct tsc_point *b, uint64_t tsc)
{
	__int128 ticks = (__int128)tsc - (__int128)a->tsc;
	__int128 span_ns = (__int128)b->ns - (__int128)a->ns;
	__int128 span_tsc = (__int128)b->tsc - (__int128)a->tsc;
	__int128 ns = (__int128)a->ns + (span_tsc ? ticks * span_ns / span_tsc : 0);

	return ns < 0 ? 0 : ns > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* The line through a and b from lo up to hi, ready to apply. */
static void keep_segment(struct tsc_timeline *t, const struct tsc_point *a,
			 const struct tsc_point *b, uint64_t lo, uint64_t lo_ns, uint64_t hi)
{
	unsigned __int128 mult = b->tsc > a->tsc ? ((unsigned __int128)(b->ns - a->ns) << 40) /
						       (b->tsc - a->tsc)
						 : 0;

	t->seg.lo = lo;
	t->seg.ns = lo_ns;
	t->seg.mult = mult > UINT64_MAX ? UINT64_MAX : (uint64_t)mult;
	t->seg.hi = hi;
}

/* ns at tsc, lo <= tsc < hi: one multiplication, rounded to the nearest ns */
static uint64_t on_segment(const struct tsc_segment *seg, uint64_t tsc)
{
	return seg->ns +
	       (uint64_t)(((unsigned __int128)(tsc - seg->lo) * seg->mult + (1ull << 39)) >> 40);
}

/* The segment [i, i + 1] holding tsc, first < tsc < last given. */
static uint32_t find_segment(struct tsc_timeline *t, uint64_t tsc)
{
	uint32_t lo = 0, hi = t->n - 1;

	if (t->hint + 1 < t->n && t->points[t->hint].tsc <= tsc && tsc < t->points[t->hint + 1].tsc)
		return t->hint;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->points[mid].tsc <= tsc)
			lo = mid;
		else
			hi = mid;
	}
	t->hint = lo;
	return lo;
}

uint64_t tsc_timeline_ns(struct tsc_timeline *t, uint64_t tsc)
{
	const struct tsc_point *first, *last;
	uint32_t i;

	/* a drain converts calls of the same few milliseconds: mostly the segment of the last one */
	if (tsc >= t->seg.lo && tsc < t->seg.hi)
		return on_segment(&t->seg, tsc);
	if (!t->n)
		return 0;
	first = &t->points[0];
	last = &t->points[t->n - 1];
	if (t->n == 1)
		return along(first, first, tsc);
	if (tsc >= last->tsc) {
		for (i = t->n - 1; i > 0 && last->ns - t->points[i].ns < SLOPE_BASE_NS; i--)
			;
		keep_segment(t, &t->points[i == t->n - 1 ? i - 1 : i], last, last->tsc, last->ns,
			     UINT64_MAX);
		return on_segment(&t->seg, tsc);
	}
	if (tsc < first->tsc) {
		for (i = 1; i < t->n - 1 && t->points[i].ns - first->ns < SLOPE_BASE_NS; i++)
			;
		return along(first, &t->points[i], tsc);
	}
	i = find_segment(t, tsc);
	keep_segment(t, &t->points[i], &t->points[i + 1], t->points[i].tsc, t->points[i].ns,
		     t->points[i + 1].tsc);
	return on_segment(&t->seg, tsc);
}
