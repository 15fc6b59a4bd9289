/* Stepping aside when the application brings its own CUPTI client (its exports: cupti_handover.c). */
#ifndef GRT_INJECT_CUPTI_HANDOVER_H
#define GRT_INJECT_CUPTI_HANDOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct inject_state;

/* When grtrace let go of CUPTI, and why (in struct inject_state). */
struct cupti_handover {
	uint64_t at_ns;	 /* CLOCK_MONOTONIC of the handover */
	bool had_cupti;	 /* grtrace's CUPTI was running (else it never started) */
	bool reported;	 /* its status line went out */
	char why[320];	 /* "" while grtrace may use CUPTI */
};

/*
 * cupti_start(), unless CUPTI is someone else's: another tool's injection,
 * or an application client that came first (-EALREADY: the status line says
 * so, once the ring is open).
 */
int cupti_start_unless_taken(struct inject_state *st, bool kernels, char *why, size_t why_len);
/* Whether CUPTI is someone else's: grtrace must not start (or use) it. */
bool cupti_handover_done(const struct inject_state *st);
/* Sends the handover's status line if it could not be sent when it happened. */
void cupti_handover_report(struct inject_state *st);
/*
 * Whether CUDA_INJECTION64_PATH names another tool's library (path filled):
 * the driver loads it at cuInit and it will be CUPTI's client. Read once,
 * when the library is loaded (inject_config.other_injection).
 */
bool cupti_handover_other_injection(char *path, size_t len);
/*
 * dlsym(handle, name) of a CUPTI client call gave real: our wrapper instead
 * (remembering real for it), unless the caller is grtrace or libcupti.
 */
void *cupti_handover_swap(const char *name, void *real, const void *caller);
/* Leaves CUPTI to that tool, and says so. */
void cupti_handover_other_tool(struct inject_state *st, const char *path);

#endif
