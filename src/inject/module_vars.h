/* Filling an instrumented copy's address slots with the application's module variables. */
#ifndef GRT_INJECT_MODULE_VARS_H
#define GRT_INJECT_MODULE_VARS_H

#include <stdbool.h>
#include "inject/cuda_decls.h"
#include "inject/instrument.h"

struct instr_module;

/*
 * The rewrite redirected the module's variables to address slots
 * (ptx_module_vars.h, listed in each rw[u].slots). Before an instrumented
 * kernel of the module runs in a context, every slot there holds the address
 * of the application's instance of its variable in that context: looked up
 * with the driver's own cuModuleGetGlobal (cuLibraryGetGlobal for a library)
 * on the application's module and on the copy, and written by one 8-byte
 * copy per slot on a stream of grtrace's own, waited for. Runs on the
 * library's threads: the application never sees these calls as its own.
 *
 * A slot that cannot be filled (the lookup fails, or the variable is smaller
 * than its PTX says) leaves the kernels that may read it to run unchanged in
 * that context, with the driver's error as the reason, said once.
 */

/* The copy was just loaded in the current context: fills its slots there. Under the lock. */
void module_vars_loaded(struct instr_state *is, struct instr_module *m);

/*
 * Whether kernel k of m may launch its twin in ctx, filling the slots there
 * first when ctx is new to the module (a library's kernels run in any
 * context). Under the lock, inside the library's own calls.
 */
bool module_vars_ready(struct instr_state *is, struct instr_module *m,
		       const struct instr_kernel *k, CUcontext ctx);

#endif
