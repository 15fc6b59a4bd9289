/* Host/GPU clock calibration arithmetic. */
#include <errno.h>
#include "inject/clock_math.h"

int clock_best_sample(const struct clock_sample *samples, size_t n, struct clock_fit *out)
{
	uint64_t best = UINT64_MAX;
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		const struct clock_sample *s = &samples[i];
		uint64_t trip;

		if (!s->clock || s->host_after < s->host_before)
			continue;
		trip = s->host_after - s->host_before;
		if (trip >= best)
			continue;
		best = trip;
		out->clock_ns = s->clock;
		out->host_ns = s->host_before + trip / 2;
		out->offset_ns = (int64_t)(s->clock - out->host_ns);
		out->error_ns = (trip + 1) / 2;
		found = 1;
	}
	return found ? 0 : -ENODATA;
}

uint64_t clock_to_host(const struct clock_fit *fit, uint64_t clock_ns)
{
	if (!clock_ns)
		return 0;
	return (uint64_t)((int64_t)clock_ns - fit->offset_ns);
}

uint64_t clock_to_host2(const struct clock_fit *start, const struct clock_fit *end,
			uint64_t clock_ns)
{
	double span, at;
	int64_t offset;

	if (!clock_ns)
		return 0;
	/*
	 * Two fits close together relative to their error bounds give a slope
	 * that is mostly noise, which would stretch durations: then the nearer
	 * fit's offset alone is used.
	 */
	if (end->clock_ns <= start->clock_ns ||
	    end->clock_ns - start->clock_ns <
		CLOCK_MIN_SPAN_PER_ERROR * (start->error_ns + end->error_ns))
		return clock_to_host(clock_ns - start->clock_ns <= end->clock_ns - clock_ns ||
					     clock_ns < start->clock_ns
					 ? start
					 : end,
				     clock_ns);
	if (clock_ns <= start->clock_ns)
		return clock_to_host(start, clock_ns);
	if (clock_ns >= end->clock_ns)
		return clock_to_host(end, clock_ns);
	span = (double)(end->clock_ns - start->clock_ns);
	at = (double)(clock_ns - start->clock_ns) / span;
	offset = start->offset_ns + (int64_t)((double)(end->offset_ns - start->offset_ns) * at);
	return (uint64_t)((int64_t)clock_ns - offset);
}
