/* sm_placement: which SM ran each block: blocks per SM, and an event per block. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

#define SMS 256

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, SMS);
	__type(key, u32);
	__type(value, u64);
} blocks_per_sm SEC(".maps");

struct placement {
	u32 block;
	u32 sm;
	u64 start_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, struct placement);
} placements SEC(".maps");

SEC("kprobe/vec_add")
int on_entry(struct grt_kernel_ctx *ctx)
{
	u64 bx, by, bz, tx, ty, tz, *n;
	struct placement p;
	u32 sm;

	bpf_get_thread_idx(&tx, &ty, &tz);
	if (tx | ty | tz)
		return 0;
	bpf_get_block_idx(&bx, &by, &bz);
	sm = bpf_get_sm_id();
	n = bpf_map_lookup_elem(&blocks_per_sm, &sm);
	if (n)
		__sync_fetch_and_add(n, 1);
	p.block = bx;
	p.sm = sm;
	p.start_ns = bpf_get_globaltimer();
	bpf_perf_event_output(ctx, &placements, BPF_F_CURRENT_CPU, &p, sizeof(p));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
