/* Memory accesses by site: the context's address, size, direction and site number. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct site_stat {
	u64 loads;
	u64 stores;
	u64 bytes;
	u64 last_addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, u32);
	__type(value, struct site_stat);
} sites SEC(".maps");

SEC("kprobe/__memcapture")
int by_site(struct grt_mem_ctx *ctx)
{
	u32 site = ctx->site;
	struct site_stat *s = bpf_map_lookup_elem(&sites, &site), fresh = {};

	if (!s) {
		bpf_map_update_elem(&sites, &site, &fresh, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&sites, &site);
		if (!s)
			return 0;
	}
	if (ctx->flags & GRT_MEM_STORE)
		__sync_fetch_and_add(&s->stores, 1);
	else
		__sync_fetch_and_add(&s->loads, 1);
	__sync_fetch_and_add(&s->bytes, ctx->size);
	s->last_addr = ctx->addr;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
