/* Pasting translated GPU eBPF programs into kernels: at entry, at exits, at memory accesses. */
#ifndef GRT_GPUBPF_BPF_ATTACH_H
#define GRT_GPUBPF_BPF_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpubpf/bpf_ptx.h"
#include "inject/ptx_rewrite.h"

/*
 * A pure PTX-to-PTX function over text (no libbpf): the injected library
 * compiles it in and calls it from its module JIT, after the translation was
 * made by the recorder.
 *
 * A kernel that some program matches gets one extra trailing parameter,
 * `.param .u64 <prefix>bpf_env`, the address of the session's struct
 * grt_bpf_env (0: every program off for that launch), at param_index /
 * param_offset of its ptx_kernel_result, like the block probes' buffer.
 */

struct gpubpf_attach_prog {
	enum grt_bpf_attach attach;
	const char *kernel; /* the kernel's mangled name or a glob (fnmatch); NULL for memcapture */
	const struct gpubpf_translation *ptx;
};

struct gpubpf_attach_opts {
	const struct gpubpf_attach_prog *progs;
	size_t nr_progs;
	uint32_t first_kernel_id; /* kernel_id of the module's first .entry (then +1 each) */
	/*
	 * PTX instructions of memory-access programs pasted into one kernel
	 * before its memory accesses call a .func instead (0: 20000).
	 */
	size_t inline_limit;
};

/* What was added to one kernel. */
struct gpubpf_kernel_sites {
	unsigned entry;	      /* entry programs pasted */
	unsigned exit;	      /* exit programs pasted (once, at the shared exit path) */
	unsigned exits;	      /* ret/exit instructions sent to that path */
	unsigned mem;	      /* memory accesses probed */
	unsigned mem_skipped; /* global or generic accesses whose address form was not understood */
	bool mem_called;      /* memory accesses call a .func instead of inlining it */
};

struct gpubpf_attach_result {
	struct ptx_rewrite_result rw; /* the module, and every kernel: instrumented or why not */
	struct gpubpf_kernel_sites *sites; /* one per rw.kernels */
};

/*
 * Instruments `len` bytes of PTX. Returns 0 (also when no kernel matched:
 * rw.ptx is then the input), or a negative errno with rw.error set: -EINVAL
 * (not PTX, malformed, or the programs' names collide with the module's),
 * -ENOMEM. gpubpf_attach_result_free() in every case.
 */
int gpubpf_attach(const char *ptx, size_t len, const struct gpubpf_attach_opts *opts,
		  struct gpubpf_attach_result *res);
void gpubpf_attach_result_free(struct gpubpf_attach_result *res);

#endif
