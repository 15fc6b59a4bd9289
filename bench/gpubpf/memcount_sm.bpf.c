/* Overhead benchmark: every global memory access counted in a per-SM counter (less contention). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} accesses SEC(".maps");

SEC("kprobe/__memcapture")
int count_access(void *ctx)
{
	u32 zero = 0;
	u64 *n = bpf_map_lookup_elem(&accesses, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
