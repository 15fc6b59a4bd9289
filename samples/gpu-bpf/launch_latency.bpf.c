/* launch_latency: when each block's first thread started, and one event per launch from block 0. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

#define MAX_BLOCKS 4096

/* CLOCK_MONOTONIC of each block's start: against the launch call's time, the latency */
struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, MAX_BLOCKS);
	__type(key, u32);
	__type(value, u64);
} block_start_ns SEC(".maps");

struct launch_start {
	u64 first_block_ns; /* CLOCK_MONOTONIC */
	u64 n;		    /* the kernel's element count (its fourth parameter) */
	u32 kernel_id;
	u32 sm;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, struct launch_start);
} launches SEC(".maps");

SEC("kprobe/vec_add")
int on_entry(struct grt_kernel_ctx *ctx)
{
	u64 bx, by, bz, tx, ty, tz, *slot;
	u32 block;

	bpf_get_thread_idx(&tx, &ty, &tz);
	if (tx | ty | tz)
		return 0;
	bpf_get_block_idx(&bx, &by, &bz);
	block = bx;
	slot = bpf_map_lookup_elem(&block_start_ns, &block);
	if (slot)
		*slot = bpf_ktime_get_ns();
	if (!bx && !by && !bz) {
		struct launch_start e = {
			.first_block_ns = bpf_ktime_get_ns(),
			.n = ctx->param[3],
			.kernel_id = ctx->kernel_id,
			.sm = bpf_get_sm_id(),
		};

		bpf_perf_event_output(ctx, &launches, BPF_F_CURRENT_CPU, &e, sizeof(e));
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
