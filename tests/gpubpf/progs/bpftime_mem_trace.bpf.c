/* bpftime's mem_trace, as its README describes it: a count of the kernels' memory accesses. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define BPF_MAP_TYPE_GPU_ARRAY_MAP 1503

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_MAP);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, u64);
} accesses SEC(".maps");

SEC("kprobe/__memcapture")
int count_access(struct pt_regs *ctx)
{
	u32 key = 0;
	u64 *n = bpf_map_lookup_elem(&accesses, &key);

	if (n)
		*n = *n + 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
