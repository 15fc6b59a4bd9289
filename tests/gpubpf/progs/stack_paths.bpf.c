/* A buffer chosen per path: its stack offset is not fixed, so the stack lives in local memory. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct pair {
	u64 a, b;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF);
	__uint(max_entries, 64);
	__type(key, u32);
	__type(value, struct pair);
} out SEC(".maps");

SEC("kprobe/stack_kernel")
int choose(struct grt_kernel_ctx *ctx)
{
	volatile struct pair left = {1, 2}, right = {3, 4};
	struct pair *p = ctx->param[0] & 1 ? (struct pair *)&left : (struct pair *)&right;

	p->a += ctx->param[1];
	bpf_perf_event_output(ctx, &out, BPF_F_CURRENT_CPU, p, sizeof(*p));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
