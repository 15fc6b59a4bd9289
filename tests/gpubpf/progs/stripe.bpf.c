/* Which maps are counters kept per SM: only adds reach `adds` and `adds32`; every other map is
 * also read, fetched, updated, mixed in width, too large, or not an array shared by all threads. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

#define ARRAY_MAP(name, map_type, entries, value_type)                                            \
	struct {                                                                                   \
		__uint(type, map_type);                                                            \
		__uint(max_entries, entries);                                                      \
		__type(key, u32);                                                                  \
		__type(value, value_type);                                                         \
	} name SEC(".maps")

struct pair {
	u64 a;
	u64 b;
};

ARRAY_MAP(adds, BPF_MAP_TYPE_GPU_ARRAY, 4, struct pair);
ARRAY_MAP(adds32, BPF_MAP_TYPE_ARRAY, 2, u32);
ARRAY_MAP(read_too, BPF_MAP_TYPE_GPU_ARRAY, 1, u64);
ARRAY_MAP(fetched, BPF_MAP_TYPE_GPU_ARRAY, 1, u64);
ARRAY_MAP(updated, BPF_MAP_TYPE_GPU_ARRAY, 1, u64);
ARRAY_MAP(mixed, BPF_MAP_TYPE_GPU_ARRAY, 1, struct pair);
ARRAY_MAP(big, BPF_MAP_TYPE_GPU_ARRAY, 65536, u64);
ARRAY_MAP(per_sm, BPF_MAP_TYPE_PERCPU_ARRAY, 1, u64);
ARRAY_MAP(out, BPF_MAP_TYPE_GPU_ARRAY, 1, u64);

SEC("kretprobe/stripe_kernel")
int count_exits(struct grt_kernel_ctx *ctx)
{
	u32 key = bpf_get_sm_id() & 3, zero = 0;
	struct pair *p = bpf_map_lookup_elem(&adds, &key), *m;
	u32 *w = bpf_map_lookup_elem(&adds32, &zero);
	u64 *r = bpf_map_lookup_elem(&read_too, &zero), *f, *u, *b, *c, *o, one = 1;

	if (p) {
		__sync_fetch_and_add(&p->a, 1);
		__sync_fetch_and_add(&p->b, ctx->param[0]);
	}
	if (w)
		__sync_fetch_and_add(w, 1);
	if (r && __sync_fetch_and_add(r, 1) == 0) /* the old value read */
		bpf_printk("first");
	f = bpf_map_lookup_elem(&fetched, &zero);
	o = bpf_map_lookup_elem(&out, &zero);
	if (f && o)
		*o = __sync_fetch_and_add(f, 2);
	u = bpf_map_lookup_elem(&updated, &zero);
	if (u)
		__sync_fetch_and_add(u, 1);
	bpf_map_update_elem(&updated, &zero, &one, BPF_ANY);
	m = bpf_map_lookup_elem(&mixed, &zero);
	if (m) {
		__sync_fetch_and_add(&m->a, 1);
		__sync_fetch_and_add((u32 *)&m->b, 1);
	}
	b = bpf_map_lookup_elem(&big, &key);
	if (b)
		__sync_fetch_and_add(b, 1);
	c = bpf_map_lookup_elem(&per_sm, &zero);
	if (c)
		__sync_fetch_and_add(c, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
