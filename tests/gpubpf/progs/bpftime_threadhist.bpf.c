/* bpftime's threadhist, as its README describes it: how often each GPU thread left the kernel. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

#define BPF_MAP_TYPE_PERGPUTD_ARRAY_MAP 1502

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY_MAP);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} exits SEC(".maps");

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int count_exit()
{
	u32 zero = 0;
	u64 *n = bpf_map_lookup_elem(&exits, &zero);

	if (n)
		*n += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
