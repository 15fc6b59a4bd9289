/* Refused: a loop bounded only by a kernel parameter. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} sum SEC(".maps");

SEC("kprobe/loop_kernel")
int spin(struct grt_kernel_ctx *ctx)
{
	u32 zero = 0;
	u64 *s = bpf_map_lookup_elem(&sum, &zero), i;

	if (!s)
		return 0;
#pragma clang loop unroll(disable)
	for (i = 0; i < ctx->param[0]; i++)
		*s += i;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
