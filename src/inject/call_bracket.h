/* The bracket of a driver call a wrapper forwards: CLOCK_MONOTONIC right before and after it. */
#ifndef GRT_INJECT_CALL_BRACKET_H
#define GRT_INJECT_CALL_BRACKET_H

#include <stdatomic.h>
#include <stdint.h>
#include "inject/now.h"

/*
 * The call a wrapper is making on this thread. enter_ns is taken right
 * before the real entry point, so the cuda source's uprobe at that entry
 * (same thread) fires inside [enter_ns, return]; CUPTI's API callback, which
 * runs inside the call on the same thread, notes where the call's return time
 * goes, and every device record of the call gets the bracket and the thread
 * (records_gpu.h, "Identity of the host call").
 */
struct inject_call {
	uint64_t enter_ns; /* 0: no wrapper call in progress */
	/* where CUPTI's callback keeps the call's return time (cupti.c), NULL until it ran */
	_Atomic uint64_t *return_ns;
};

extern __thread struct inject_call inject_call __attribute__((tls_model("initial-exec")));

static inline void inject_call_begin(void)
{
	inject_call.return_ns = NULL;
	inject_call.enter_ns = inject_now_ns();
}

/* Right after the real call returned: its return time, also handed to CUPTI's side. */
static inline uint64_t inject_call_end(void)
{
	uint64_t now = inject_now_ns();

	if (inject_call.return_ns)
		atomic_store_explicit(inject_call.return_ns, now, memory_order_release);
	inject_call.enter_ns = 0;
	inject_call.return_ns = NULL;
	return now;
}

#endif
