/* Host/GPU clock calibration arithmetic: pick the tightest handshake sample, map device times. */
#ifndef GRT_CLOCK_MATH_H
#define GRT_CLOCK_MATH_H

#include <stddef.h>
#include <stdint.h>

/* One handshake: the device clock was read somewhere between host_before and host_after. */
struct clock_sample {
	uint64_t host_before; /* CLOCK_MONOTONIC when the host let the device go */
	uint64_t host_after;  /* CLOCK_MONOTONIC when the host saw the device's answer */
	uint64_t clock;	      /* the device clock value (0 = no answer) */
};

/* device = host + offset, within +-error; host_ns is the midpoint the pair was taken at. */
struct clock_fit {
	uint64_t clock_ns;
	uint64_t host_ns;
	int64_t offset_ns;
	uint64_t error_ns; /* half the round trip, rounded up */
};

/*
 * The sample with the smallest round trip (the tightest bound). Samples with
 * no answer or time running backwards are ignored. 0, or -ENODATA when no
 * sample is usable.
 */
int clock_best_sample(const struct clock_sample *samples, size_t n, struct clock_fit *out);

/* A device time on CLOCK_MONOTONIC through fit (0 stays 0: "not measured"). */
uint64_t clock_to_host(const struct clock_fit *fit, uint64_t clock_ns);

/*
 * With a closing fit too: maps by linear interpolation of the offset between
 * the two, so clock drift during the run does not accumulate. Times outside
 * [start, end] use the nearer fit's offset, and so do times between fits
 * closer than CLOCK_MIN_SPAN_PER_ERROR times their summed error bounds.
 */
#define CLOCK_MIN_SPAN_PER_ERROR 10000
uint64_t clock_to_host2(const struct clock_fit *start, const struct clock_fit *end,
			uint64_t clock_ns);

/* The mapping a launch's times go through: a pair of fits around them; NULL a = raw device time. */
struct clock_pair {
	const struct clock_fit *a;
	const struct clock_fit *b; /* NULL: a alone */
};

static inline uint64_t clock_map(const struct clock_pair *m, uint64_t clock_ns)
{
	if (!m || !m->a)
		return clock_ns;
	return m->b ? clock_to_host2(m->a, m->b, clock_ns) : clock_to_host(m->a, clock_ns);
}

#endif
