/* Overhead benchmark: a per-thread exit counter (bpftime's threadhist). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} exits SEC(".maps");

SEC("kretprobe/vec_add")
int count_exit(void *ctx)
{
	u32 zero = 0;
	u64 *n = bpf_map_lookup_elem(&exits, &zero);

	if (n)
		*n += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
