/* The bracket of a driver call a wrapper forwards: CLOCK_MONOTONIC right before and after it. */
#ifndef GRT_INJECT_CALL_BRACKET_H
#define GRT_INJECT_CALL_BRACKET_H

#include <stdint.h>

/*
 * The call a wrapper is making on this thread. enter_ns is taken right
 * before the real entry point, so the cuda source's uprobe at that entry
 * (same thread) fires inside [enter_ns, return]; CUPTI's API callback, which
 * runs inside the call on the same thread, notes its correlation id here, and
 * every device record of the call gets the bracket and the thread
 * (records_gpu.h, "Identity of the host call").
 */
struct inject_call {
	uint64_t enter_ns; /* 0: no wrapper call in progress */
	uint32_t corr;	   /* CUPTI's correlation id of the call, 0 until its callback ran */
};

extern __thread struct inject_call inject_call __attribute__((tls_model("initial-exec")));

uint64_t inject_now_ns(void);
/* CUPTI's side: the call with correlation id corr returned at return_ns (cupti.c). */
void cupti_call_returned(uint32_t corr, uint64_t return_ns);

static inline void inject_call_begin(void)
{
	inject_call.corr = 0;
	inject_call.enter_ns = inject_now_ns();
}

/* Right after the real call returned: its return time, also handed to CUPTI's side. */
static inline uint64_t inject_call_end(void)
{
	uint64_t now = inject_now_ns();

	if (inject_call.corr)
		cupti_call_returned(inject_call.corr, now);
	inject_call.enter_ns = 0;
	inject_call.corr = 0;
	return now;
}

#endif
