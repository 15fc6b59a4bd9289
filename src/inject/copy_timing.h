/* Copies and memsets timed with CUDA events while CUPTI is not loaded. */
#ifndef GRT_INJECT_COPY_TIMING_H
#define GRT_INJECT_COPY_TIMING_H

#include <stdbool.h>
#include <stdint.h>
#include "inject/copy_shape.h"

struct inject_state;
struct copy_ctx;

/*
 * Where the block probes time the kernels, CUPTI stays out of the process
 * (loaded, even with nothing enabled, it slows every launch: bench/RESULTS.md,
 * run 26). Copies and memsets are then timed by a pair of events the library
 * records around the application's call, in the call's stream; the
 * collection thread reads them when they completed and places them on
 * CLOCK_MONOTONIC through a calibration of the event clock (docs/gpu.md).
 */

/* One call in progress: filled by copy_timing_begin(), finished by copy_timing_end(). */
struct copy_mark {
	struct copy_ctx *cc;
	void *start, *end; /* CUevent */
	uint64_t bytes, stream;
	uint32_t kind;
};

/* Turns event timing on (the block probes time the kernels, CUPTI is not loaded). */
void copy_timing_start(struct inject_state *st);
/*
 * CUPTI took over copy timing (loaded for a kernel the probes do not cover,
 * or for the copies' rate), its activity on by since_ns: a call entered
 * after that is CUPTI's, one in flight then stays timed by its events.
 */
void copy_timing_handoff(struct inject_state *st, uint64_t since_ns);
/* Whether copies are timed with events now (CUPTI has not taken them over). */
bool copy_timing_is_on(const struct inject_state *st);
/*
 * Before the application's copy call (args as it passed them): records the
 * start event in its stream. False when the call is not timed this way.
 */
bool copy_timing_begin(struct inject_state *st, const struct copy_shape *shape,
		       const uint64_t *args, struct copy_mark *m);
/*
 * After it returned res: the end event, and the copy waits for collection.
 * cupti_saw: CUPTI's callback ran inside the call (CUPTI was handed the
 * copies meanwhile and records this one: it is left to CUPTI).
 */
void copy_timing_end(struct inject_state *st, struct copy_mark *m, int res, uint64_t enter_ns,
		     uint64_t return_ns, bool cupti_saw);
/* Whether copies wait for their events to be read. */
bool copy_timing_waiting(struct inject_state *st);
/*
 * On the collection thread: sends the copies whose events completed (all of
 * them: at_exit). While running only when due: the application synchronized,
 * GRTRACE_GPU_DRAIN_MS passed, or half the queue waits (the reads are driver
 * calls, which slow the application's own while it submits work).
 */
void copy_timing_collect(struct inject_state *st, bool at_exit);
/* In a forked child: the parent's events are not its own, its lock may be held; off. */
void copy_timing_after_fork(struct inject_state *st);
/* At exit, after the last collection: the closing line. */
void copy_timing_stop(struct inject_state *st);

#endif
