/* A hash map with 12-byte keys: insert, update, look up, delete, re-insert. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct where {
	u32 block;
	u32 warp;
	u32 kernel;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct where);
	__type(value, u64);
} per_warp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, u64);
	__type(value, u64);
} scratch SEC(".maps");

SEC("kprobe/hash_kernel")
int hash(struct grt_kernel_ctx *ctx)
{
	u64 bx, by, bz, tx, ty, tz, one = 1, k;
	struct where w = {};
	u64 *n;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	w.block = bx;
	w.warp = tx / 32;
	w.kernel = ctx->kernel_id;
	n = bpf_map_lookup_elem(&per_warp, &w);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&per_warp, &w, &one, BPF_NOEXIST))
		__sync_fetch_and_add(&one, 0);
	k = tx;
	bpf_map_update_elem(&scratch, &k, &k, BPF_ANY);
	bpf_map_delete_elem(&scratch, &k);
	bpf_map_update_elem(&scratch, &k, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
