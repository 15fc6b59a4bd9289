/* Block probes: modules rewritten at first launch, launches redirected, buffers collected. */
#ifndef GRT_INJECT_PROBES_H
#define GRT_INJECT_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "inject/cuda_decls.h"

struct inject_state;

int probes_start(struct inject_state *st, char *why, size_t why_len);
void probes_module_loaded(CUmodule mod, const void *image, const char *path);
void probes_library_loaded(CUlibrary lib, const void *image, const char *path);
void probes_module_unloaded(CUmodule mod);
void probes_library_unloaded(CUlibrary lib);
void probes_library_module(CUlibrary lib, CUmodule mod);
void probes_function(CUmodule mod, CUfunction f, const char *name);
void probes_kernel(CUlibrary lib, CUkernel k, const char *name);
void probes_kernel_function(CUkernel k, CUfunction f);
/* Launch redirection: returns true and sets *ret when it launched (instrumented or not). */
bool probes_launch(CUfunction f, const CUlaunchConfig *cfg, void **params, void **extra, bool ex,
		   bool ptsz, CUresult *ret);
/*
 * Before a synchronizing call: launches up to the returned token are covered
 * when it returns. Every probes_sync_begin() is followed by probes_sync_end(),
 * whatever the call returned (after probes_synchronized() on success): then
 * the collection runs.
 */
uint64_t probes_sync_begin(void);
void probes_sync_end(void);
/* A sync returned: launches up to token on stream s (every stream with all) are complete. */
void probes_synchronized(CUstream s, bool all, bool ptsz, uint64_t token);
/* cuFuncSetAttribute on a function: mirrored onto its instrumented twin. */
void probes_attribute(CUfunction f, int attr, int value);
/* Stream capture began (+1) or ended (-1): no redirection or collection while any is open. */
void probes_capture(int delta);
void probes_stop(struct inject_state *st);

#endif
