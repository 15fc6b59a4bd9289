/* GPU proof of module variables: every thread's exit of the three kernels that use them, counted. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

/* key 0: mv_read_const, 1: mv_bump, 2: mv_table (bench/gpubpf/modvars.cu) */
struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, u32);
	__type(value, u64);
} kernel_exits SEC(".maps");

static __always_inline void count(u32 key)
{
	u64 *n = bpf_map_lookup_elem(&kernel_exits, &key);

	if (n)
		__sync_fetch_and_add(n, 1);
}

SEC("kretprobe/mv_read_const")
int read_const_exit(void *ctx)
{
	count(0);
	return 0;
}

SEC("kretprobe/mv_bump")
int bump_exit(void *ctx)
{
	count(1);
	return 0;
}

SEC("kretprobe/mv_table")
int table_exit(void *ctx)
{
	count(2);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
