/* block_hist: threads finished per block, and a histogram of thread run times in log2 buckets. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

#define MAX_BLOCKS 4096
#define BUCKETS 32

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, MAX_BLOCKS);
	__type(key, u32);
	__type(value, u64);
} threads_per_block SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, BUCKETS);
	__type(key, u32);
	__type(value, u64);
} run_ns_log2 SEC(".maps");

/* entry time per thread, for the run time at exit */
struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} entered SEC(".maps");

SEC("kprobe/vec_add")
int on_entry(struct grt_kernel_ctx *ctx)
{
	u32 zero = 0;
	u64 *t = bpf_map_lookup_elem(&entered, &zero);

	if (t)
		*t = bpf_get_globaltimer();
	return 0;
}

static __always_inline u32 log2_bucket(u64 v)
{
	u32 b = 0;

	if (v >> 16) { v >>= 16; b += 16; }
	if (v >> 8) { v >>= 8; b += 8; }
	if (v >> 4) { v >>= 4; b += 4; }
	if (v >> 2) { v >>= 2; b += 2; }
	if (v >> 1) { b += 1; }
	return b < BUCKETS ? b : BUCKETS - 1;
}

SEC("kretprobe/vec_add")
int on_exit(struct grt_kernel_ctx *ctx)
{
	u64 bx, by, bz, *n, *t;
	u32 zero = 0, block, bucket;

	bpf_get_block_idx(&bx, &by, &bz);
	block = bx;
	n = bpf_map_lookup_elem(&threads_per_block, &block);
	if (n)
		__sync_fetch_and_add(n, 1);
	t = bpf_map_lookup_elem(&entered, &zero);
	if (!t)
		return 0;
	bucket = log2_bucket(bpf_get_globaltimer() - *t);
	n = bpf_map_lookup_elem(&run_ns_log2, &bucket);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
