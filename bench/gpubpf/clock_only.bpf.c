/* Overhead experiment: one clock read per thread at exit, kept in the thread's own slot. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} last_exit SEC(".maps");

SEC("kretprobe/vec_add")
int clock_at_exit(void *ctx)
{
	u32 zero = 0;
	u64 *t = bpf_map_lookup_elem(&last_exit, &zero);

	if (t)
		*t = bpf_get_globaltimer();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
