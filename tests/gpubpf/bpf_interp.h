/* The reference interpreter: GPU eBPF programs run on the host over a simulated grid. */
#ifndef GRT_TESTS_BPF_INTERP_H
#define GRT_TESTS_BPF_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpubpf/gpubpf.h"

/*
 * The device memory the programs see, laid out exactly as gpu_abi.h says
 * (maps, rings, environment), with host pointers for device addresses. A
 * deterministic program leaves the same map contents here as on the GPU;
 * ring records are the same set (their order on the GPU depends on timing).
 */
struct interp_session {
	struct grt_bpf_env env;
	uint8_t *map_mem[GRT_BPF_MAX_MAPS]; /* by slot, NULL when unused */
	size_t map_len[GRT_BPF_MAX_MAPS];
	uint8_t *printk_ring;
	size_t printk_len;
	uint64_t insns_run;
	bool *executed; /* when set: executed[pc] of the last program run */
};

/* One simulated launch. */
struct interp_launch {
	const char *kernel; /* matched against the programs' kernel globs */
	uint32_t kernel_id;
	uint32_t grid[3], block[3];
	uint64_t params[GRT_BPF_CTX_PARAMS]; /* the kernel's arguments as the context shows them */
	uint32_t nr_sms;		     /* SM of block b: b % nr_sms */
	uint64_t t0_ns;			     /* globaltimer of the first block's entry */
	uint64_t block_ns;		     /* each later block starts that much later */
	uint64_t thread_ns;		     /* and each thread of a block */
	uint64_t body_ns;		     /* entry to exit of a thread */
	/*
	 * The global memory accesses of thread (block_linear, thread_linear), in
	 * order; memcapture programs run before each. NULL: none.
	 */
	size_t (*accesses)(void *arg, uint64_t block_linear, uint32_t thread_linear,
			   struct grt_bpf_mem_ctx *out, size_t max);
	void *arg;
};

/*
 * Allocates the bundle's maps (zeroed), rings of ring_bytes each and the
 * printk ring, and fills the environment (thread_capacity, pid_tgid,
 * calibration: mono = gpu + 1000000000 with equal rates). 0 or -ENOMEM.
 */
int interp_session_init(struct interp_session *s, const struct gpubpf_bundle *b,
			uint32_t thread_capacity, size_t ring_bytes);
void interp_session_free(struct interp_session *s);

/* Runs a launch. 0, or -EFAULT when a program misbehaves (a verifier hole: err says where). */
int interp_run(struct interp_session *s, const struct gpubpf_bundle *b,
	       const struct interp_launch *l, char *err, size_t err_len);

/* Runs one program once with the given context (for ALU tests); returns R0 in *ret. */
int interp_run_one(struct interp_session *s, const struct gpubpf_bundle *b, size_t prog,
		   const void *ctx, uint64_t *ret, char *err, size_t err_len);

#endif
