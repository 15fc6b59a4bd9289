/* Launches of instrumented kernels go to their twins, with the instrumentations' parameters. */
#ifndef GRT_INJECT_LAUNCH_REDIRECT_H
#define GRT_INJECT_LAUNCH_REDIRECT_H

#include <stdbool.h>
#include <stdint.h>
#include "inject/cuda_decls.h"

/*
 * Returns true and sets *ret when it launched (the twin, or the original after
 * the twin failed), the real call bracketed (call_bracket.h). entry_ns: when
 * the wrapper was entered (the library's own cost is counted from there).
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
