/* The application's modules: PTX taken at load, rewritten, compiled (cached) and loaded beside. */
#ifndef GRT_INJECT_MODULE_JIT_H
#define GRT_INJECT_MODULE_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "inject/cuda_decls.h"
#include "inject/fatbin.h"
#include "inject/instr_kernel.h"
#include "inject/instrument.h"
#include "inject/ptx_rewrite.h"

struct inject_state;
struct module_vars;

/* A module or library the application loaded, and its instrumented copy. */
struct instr_module {
	struct instr_module *next;
	uint64_t handle; /* CUmodule or CUlibrary of the application */
	bool library;
	bool tried;	 /* rewrite + JIT attempted */
	int status;	 /* 0 instrumented; negative errno: its kernels run unchanged */
	char reason[160];
	struct fatbin_ptx ptx; /* kept until the rewrite */
	struct ptx_rewrite_result rw[INSTR_MAX]; /* each instrumentation's kernel table */
	unsigned nrw;
	struct instr_kernel *kernels;
	size_t nr_kernels;
	size_t nr_instrumented;
	CUmodule inst_mod;
	CUlibrary inst_lib;
	struct module_vars *vars; /* its slots per context (module_vars.h), NULL when none */
	uint64_t extract_ns;
};

/* A module (library) was loaded: its PTX is taken now, the image may be freed afterwards. */
void module_jit_loaded(CUmodule handle, bool library, const void *image, const char *path);
/* It was unloaded: its functions launch unchanged from now on. */
void module_jit_unloaded(uint64_t handle);
/* cuLibraryGetModule: the module stands for its library. */
void module_jit_library_module(CUlibrary lib, CUmodule mod);

/* Rewrites, compiles and loads m's instrumented copy, once. Under the lock, context current. */
void module_jit_instrument(struct instr_state *is, struct instr_module *m);
/* m's table entry for kernel name, or NULL. */
const struct instr_kernel *module_jit_kernel(const struct instr_module *m, const char *name);

/*
 * PTX compiled for arch by the driver's JIT, or taken from the on-disk cache
 * (and stored there after a JIT). The image is malloc'd. 0 or a negative
 * errno with why filled.
 */
int module_jit_compile(struct inject_state *st, int driver_version, const char *ptx, size_t len,
		       unsigned arch, void **image, size_t *size, bool *hit, char *why,
		       size_t why_len);

/* The current context's device as sm_XY (90), or 0 when it cannot be asked. */
unsigned module_jit_device_arch(struct inject_state *st);

#endif
