/* The application's functions and kernels, and their instrumented twins. */
#ifndef GRT_INJECT_TWIN_H
#define GRT_INJECT_TWIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "inject/cuda_decls.h"
#include "inject/instrument.h"

#define TWIN_MAX_SAVED_ATTRS 8

struct saved_attr {
	int attr;
	int value;
};

/* A CUfunction or CUkernel the application looked up, and what its launches go to. */
struct twin {
	uint64_t handle; /* CUfunction or CUkernel the application launches */
	struct instr_module *mod;
	char *name;
	atomic_bool resolved;  /* target looked up (or given up); set last */
	CUfunction target;     /* the instrumented function; NULL: launch unchanged */
	bool target_is_kernel; /* target is a CUkernel (library copy) */
	CUfunction target_fn; /* the CUkernel's function in target_ctx: launched without a lookup */
	CUcontext target_ctx;
	const struct instr_kernel *k;
	struct saved_attr attrs[TWIN_MAX_SAVED_ATTRS];
	unsigned nattrs;
	atomic_uint launches;
	atomic_int fallback_reported;
};

/* A function (cuModuleGetFunction) or kernel (cuLibraryGetKernel) of module was looked up. */
void twin_function_seen(uint64_t module, uint64_t handle, const char *name);
/* cuKernelGetFunction: the function stands for its kernel. */
void twin_kernel_function(CUkernel k, CUfunction f);
/* cuFuncSetAttribute / cuKernelSetAttribute: mirrored onto the twin. */
void twin_attribute(CUfunction f, int attr, int value);
/*
 * Finds f's instrumented twin, instrumenting its module first, on the
 * library's worker thread with ctx (the launching thread's) current there.
 * Under the lock.
 */
void twin_resolve(struct instr_state *is, struct twin *f, CUcontext ctx);
/* The module was unloaded: its functions launch unchanged. Under the lock. */
void twin_forget_module(struct instr_state *is, uint64_t module);

#endif
