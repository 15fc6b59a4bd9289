/* Launches of instrumented kernels go to their twins, with the instrumentations' parameters. */
#ifndef GRT_INJECT_LAUNCH_REDIRECT_H
#define GRT_INJECT_LAUNCH_REDIRECT_H

#include <stdbool.h>
#include <stdint.h>
#include "inject/cuda_decls.h"
#include "inject/now.h"

/*
 * The launch path's own cost, for the report, is timed on one launch in
 * REDIRECT_TIMED_EVERY per thread, picked by a hash of the thread's launch
 * count: the driver's launch cost has periods of its own (its queue and
 * flushes), which a plain `count % 8` aliased with on an H100 (timed launches
 * looked 2x slower than the rest). Returns the wrapper's entry time for a
 * timed launch, 0 otherwise: the clock is read only when it is needed.
 */
#define REDIRECT_TIMED_EVERY 8

static inline uint64_t redirect_entry_if_timed(void)
{
	static __thread uint64_t launches __attribute__((tls_model("initial-exec")));

	return ((++launches * 0x9E3779B97F4A7C15ull) >> 32) % REDIRECT_TIMED_EVERY == 0
		   ? inject_now_ns()
		   : 0;
}

/*
 * Returns true and sets *ret when it launched (the twin, or the original after
 * the twin failed), the real call bracketed (call_bracket.h). entry_ns: when
 * the wrapper was entered, for a timed launch (the library's own cost is
 * counted from there), else 0.
 */
bool redirect_launch(CUfunction f, const CUlaunchConfig *cfg, void **params, void **extra, bool ex,
		     bool ptsz, uint64_t entry_ns, CUresult *ret);
/*
 * Before a synchronizing call: launches up to the returned token are covered
 * when it returns. Every redirect_sync_begin() is followed by
 * redirect_sync_end(), whatever the call returned (after
 * redirect_synchronized() on success): then the collection runs.
 */
uint64_t redirect_sync_begin(void);
void redirect_sync_end(void);
/* A sync returned: launches up to token on stream s (every stream with all) are complete. */
void redirect_synchronized(CUstream s, bool all, bool ptsz, uint64_t token);
/* Stream capture began (+1) or ended (-1): no redirection or collection while any is open. */
void redirect_capture(int delta);

#endif
