/* Overhead benchmark: every global memory access counted (bpftime's mem_trace, with an atomic). */
/* Built twice: one counter shared by all threads, and with -DPER_SM one per SM. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct {
#ifdef PER_SM
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
#else
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
#endif
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
