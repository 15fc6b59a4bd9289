/* What the instrumentations made of a kernel, and the arguments its instrumented twin is launched with. */
#ifndef GRT_INJECT_INSTR_KERNEL_H
#define GRT_INJECT_INSTR_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "inject/ptx_rewrite.h"

#define INSTR_MAX 4	   /* instrumentations active at once */
#define INSTR_MAX_PARAMS 4 /* parameters appended to one kernel by all of them together */

/* One kernel of a module, after every instrumentation's rewrite. */
struct instr_kernel {
	const char *name;	/* mangled .entry name */
	unsigned users;		/* bit i: instrumentation i changed it (0: launched unchanged) */
	unsigned nr_params;	/* the application's parameters */
	unsigned nr_extra;	/* u64 parameters appended, in instrumentation order */
	unsigned nusers;
	uint8_t user[INSTR_MAX];       /* the instrumentations that changed it, in order */
	uint8_t user_param[INSTR_MAX]; /* where each one's parameters start among the appended */
	uint32_t extra_offset;	/* byte offset of the first appended one; the rest follow, 8 apart */
	uint32_t param_size;	/* bytes of the argument buffer with them */
	const char *reason;	/* changed by none: why (the first instrumentation's reason) */
};

/*
 * One table out of each instrumentation's kernel table (rw[u], the output of
 * instrumentation u, which appended nr_params[u] u64 parameters to each kernel
 * it changed): out has rw[0].nr_kernels entries, names and reasons point into
 * rw[0]. *instrumented counts the kernels any changed. 0, or -EINVAL when
 * the appended parameters do not follow one another 8 bytes apart or are
 * more than INSTR_MAX_PARAMS (a rewrite broke the contract).
 */
int instr_kernels_merge(const struct ptx_rewrite_result *rw, unsigned nrw,
			const unsigned *nr_params, struct instr_kernel *out, size_t *instrumented);

/*
 * The twin's kernelParams: the application's, then a pointer to each of the
 * k->nr_extra values. In small when it has room, else malloc'd (free it when
 * it is not small). NULL when out of memory. Inline: every instrumented
 * launch builds these.
 */
static inline void **instr_args_params(void *const *params, const struct instr_kernel *k, uint64_t *values,
			 void **small, unsigned small_len)
{
	unsigned n = k->nr_params;
	void **out =
	    n + k->nr_extra <= small_len ? small : malloc((n + k->nr_extra) * sizeof(void *));

	if (!out)
		return NULL;
	memcpy(out, params, n * sizeof(void *));
	out[n] = &values[0]; /* the usual case: one instrumentation, one parameter */
	for (unsigned j = 1; j < k->nr_extra; j++)
		out[n + j] = &values[j];
	return out;
}

/*
 * The twin's `extra` (CU_LAUNCH_PARAM_BUFFER_*): a copy of the application's
 * argument buffer, cut or padded to where the appended values go, with the
 * values there; storage (5 slots) and *size_storage hold the option list,
 * storage[1] the copy (free it). NULL when extra has an option this does not
 * know, no buffer, or no room: the launch is left alone.
 */
void **instr_args_extra(void **extra, const struct instr_kernel *k, const uint64_t *values,
			void **storage, size_t *size_storage);

#endif
