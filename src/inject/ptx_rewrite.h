/* Rewriting a PTX module so that selected kernels record block (or thread) timing probes. */
#ifndef GRT_PTX_REWRITE_H
#define GRT_PTX_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "probe_buffer.h"

/*
 * Every selected `.entry` gets one extra trailing parameter, `.param .u64`,
 * holding the device address of a probe buffer (probe_buffer.h). The
 * launcher appends that pointer to the kernel's arguments: as kernelParams
 * entry number `param_index`, or (CU_LAUNCH_PARAM_BUFFER_POINTER) at byte
 * `param_offset` of the argument buffer. Kernels that are not instrumented
 * keep their signature and must be launched unchanged.
 */

struct ptx_rewrite_opts {
	const char
	    *kernel_regex; /* POSIX extended regex on the mangled name; NULL = every .entry */
	enum grt_probe_mode mode; /* GRT_PROBE_BLOCK (default when 0) or GRT_PROBE_THREAD */
};

/*
 * A module variable the rewritten module reaches through an address slot
 * (ptx_module_vars.h): before any instrumented kernel of the module runs in
 * a context, the host writes there the device address of the application's
 * instance of the variable in that context (cuModuleGetGlobal).
 */
struct ptx_var_slot {
	char *var;     /* the variable's name in the application's module */
	char *slot;    /* the `.const .u64` holding its address in the rewritten module */
	uint32_t size; /* bytes its PTX declares, 0 when unknown */
};

struct ptx_kernel_result {
	char *name; /* mangled .entry name (malloc'd) */
	bool instrumented;
	char reason[96];    /* when not instrumented: one line why ("not selected", ...) */
	unsigned nr_params; /* parameters before rewriting */
	int param_index; /* index of the added parameter (== nr_params), -1 when not instrumented */
	uint32_t param_offset; /* byte offset of the added parameter in the argument buffer */
	uint32_t param_size;   /* bytes of the argument buffer after rewriting */
	uint32_t *slots;       /* the slots its code may read: indices into the result's slots */
	uint32_t nr_slots;
};

struct ptx_rewrite_result {
	char *ptx; /* rewritten module, NUL-terminated (malloc'd) */
	size_t ptx_len;
	struct ptx_kernel_result *kernels; /* every .entry of the module, in order */
	size_t nr_kernels;
	size_t nr_instrumented;
	struct ptx_var_slot *slots; /* to fill before launching (empty when no kernel needs any) */
	size_t nr_slots;
	char name_prefix[24]; /* the probes' names: %<prefix>r0, $<prefix>exit, <prefix>buf */
	char error[128];      /* when ptx_rewrite() fails: one line why */
};

/*
 * Rewrites `len` bytes of PTX text (need not be NUL-terminated). The uses of
 * the module's variables are redirected to address slots first
 * (ptx_module_vars.h), which the caller fills. Returns 0
 * and fills *res (even when no kernel was instrumented: res->ptx is then a
 * copy of the input); or a negative errno with res->error set: -EINVAL (not
 * PTX, unbalanced braces, bad regex), -ENOMEM. Free with ptx_rewrite_result_free().
 */
int ptx_rewrite(const char *ptx, size_t len, const struct ptx_rewrite_opts *opts,
		struct ptx_rewrite_result *res);

void ptx_rewrite_result_free(struct ptx_rewrite_result *res);

/* The result for kernel `name`, or NULL. */
const struct ptx_kernel_result *ptx_rewrite_find(const struct ptx_rewrite_result *res,
						 const char *name);

#endif
