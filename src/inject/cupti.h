/* CUPTI activity for every kernel, copy and memset, tied to the call that made it. */
#ifndef GRT_INJECT_CUPTI_H
#define GRT_INJECT_CUPTI_H

#include <stdbool.h>
#include <stddef.h>
#include "inject/clock_math.h"

struct inject_state;

/* Loads CUPTI with its copy and memset activity, and its kernel activity if kernels. */
int cupti_start(struct inject_state *st, bool kernels, char *why, size_t why_len);
/*
 * Whether CUPTI stays out of the process until a kernel the block probes do
 * not cover is launched (the probes are on, GRTRACE_GPU_CUPTI_KERNELS is not
 * "always"); copies are timed with events meanwhile (copy_timing.h).
 */
bool cupti_waits_for_kernels(const struct inject_state *st);
/*
 * A kernel the block probes do not time is about to run: CUPTI is loaded
 * with its kernel and copy activity (or, loaded for copies before, its
 * kernel activity turned on), once, and the trace says from when, for which
 * kernel (NULL: launched by a graph or one not seen looked up) and why.
 */
void cupti_need_kernels(struct inject_state *st, const char *kernel, const char *why);

/*
 * Copies timed with events cost more than CUPTI would at this rate (why):
 * CUPTI is loaded for copies and memsets, once; its kernel activity still
 * waits for cupti_need_kernels().
 */
void cupti_need_copies(struct inject_state *st, const char *why);

/* A sync point: the flusher thread hands CUPTI's finished records over soon. */
void cupti_flush(struct inject_state *st);
/* Asks CUPTI for hardware kernel timestamps (Blackwell); with a context. Says how it went. */
void cupti_try_hw_trace(struct inject_state *st);
void cupti_stop(struct inject_state *st);
/*
 * Steps aside for the application's own CUPTI client (cupti_handover.c):
 * stops the flusher, disables grtrace's activity kinds, flushes what CUPTI
 * holds for it, puts CUPTI's clock and hardware tracing back to their
 * defaults and unsubscribes. On one of the library's threads. Once.
 */
void cupti_release(struct inject_state *st);
/* libcupti as grtrace loaded it (NULL before cupti_start()). */
void *cupti_handle(const struct inject_state *st);
/* Whether cupti_release() ran: CUPTI is the application's. */
bool cupti_released(const struct inject_state *st);
/* Whether addr lies in libcupti (its calls into the driver must reach the real one). */
bool cupti_owns(const struct inject_state *st, const void *addr);
/* CUPTI's clock against CLOCK_MONOTONIC; 0 or negative errno. */
int cupti_calibrate(struct inject_state *st, struct clock_fit *out);

#endif
