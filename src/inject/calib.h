/* The GPU's %globaltimer against CLOCK_MONOTONIC: measured fits and the ones around a time. */
#ifndef GRT_INJECT_CALIB_H
#define GRT_INJECT_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "inject/clock_math.h"

struct inject_state;

/* The opening calibration finished (or failed): wakes calib_wait_opening(). */
void calib_opening_done(struct inject_state *st);
/* Whether the opening calibration, when one was started, finished. */
bool calib_opening_finished(struct inject_state *st);
/* Waits until the opening calibration, when one was started, finished. */
void calib_wait_opening(struct inject_state *st);

/* The handshake in the calibrated context. at_end: the closing measurement. */
int calib_globaltimer(struct inject_state *st, bool at_end, char *why, size_t why_len);
/*
 * A new (shorter) measurement when the last is older than max_age_ns, so
 * device times are interpolated between close fits (the clocks drift ~10 ppm).
 * 0, or a negative errno when none could be taken now.
 */
int calib_refresh(struct inject_state *st, uint64_t max_age_ns);
/* The fits around a device time (a at or before it, b after; b == a at the end). */
int calib_bracket(struct inject_state *st, uint64_t clock_ns, struct clock_fit *a,
		  struct clock_fit *b);

#endif
