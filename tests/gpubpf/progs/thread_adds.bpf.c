/* Adds to a thread's own PERGPUTD_ARRAY value: fused into one red.global.add unless the sum is read again. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct counts {
	u64 exits;
	u64 sum_x;
	u32 small;
	u32 pad;
	u64 read_back;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct counts);
} per_thread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} last SEC(".maps");

SEC("kretprobe/adds_kernel")
int thread_adds(struct grt_kernel_ctx *ctx)
{
	u32 zero = 0;
	struct counts *c = bpf_map_lookup_elem(&per_thread, &zero);
	u64 x, y, z, *l;

	if (!c)
		return 0;
	bpf_get_thread_idx(&x, &y, &z);
	c->exits += 1;
	c->sum_x += x;
	c->small += 3;
	c->read_back += 2;
	l = bpf_map_lookup_elem(&last, &zero);
	if (l)
		*l = c->read_back;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
