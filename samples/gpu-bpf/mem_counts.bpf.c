/* mem_counts: global loads, stores and bytes of every instrumented kernel. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct mem_totals {
	u64 loads;
	u64 stores;
	u64 bytes;
	u64 generic; /* accesses through generic pointers found global */
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct mem_totals);
} totals SEC(".maps");

SEC("kprobe/__memcapture")
int on_access(struct grt_mem_ctx *ctx)
{
	u32 zero = 0;
	struct mem_totals *t = bpf_map_lookup_elem(&totals, &zero);

	if (!t)
		return 0;
	if (ctx->flags & GRT_MEM_STORE)
		__sync_fetch_and_add(&t->stores, 1);
	else
		__sync_fetch_and_add(&t->loads, 1);
	__sync_fetch_and_add(&t->bytes, ctx->size);
	if (ctx->flags & GRT_MEM_GENERIC)
		__sync_fetch_and_add(&t->generic, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
