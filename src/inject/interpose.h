/* The interposed driver exports: the real functions behind them, and libc's dlsym. */
#ifndef GRT_INJECT_INTERPOSE_H
#define GRT_INJECT_INTERPOSE_H

#include <stdbool.h>
#include "inject/cuda_decls.h"

/* libc's dlsym (ours swaps driver addresses). */
void *inject_real_dlsym(void *handle, const char *name);
/* The real function behind an interposed export, by name; NULL when libcuda lacks it. */
void *interpose_real_for(const char *name);
/* Fills the interposed exports' real addresses from libcuda. */
void interpose_resolve(void *libcuda);
/* The real cuLaunchKernel[Ex][_ptsz]. */
CUresult interpose_launch_real(bool ex, bool ptsz, CUfunction f, const CUlaunchConfig *cfg,
			       void **params, void **extra);

#endif
