/* The atomics of instruction set v3, fetching and not, 32- and 64-bit, on a shared GPU array. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct counters {
	u64 add, add_fetched, or, and, xor, xchg, cas, fetched_sum;
	u32 add32, cas32;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct counters);
} counters SEC(".maps");

SEC("kprobe/atomic_kernel")
int atomics(struct grt_kernel_ctx *ctx)
{
	u32 zero = 0;
	struct counters *c = bpf_map_lookup_elem(&counters, &zero);
	u64 tx, ty, tz, old;

	if (!c)
		return 0;
	bpf_get_thread_idx(&tx, &ty, &tz);
	__sync_fetch_and_add(&c->add, 1);
	old = __sync_fetch_and_add(&c->add_fetched, tx + 1);
	__sync_fetch_and_add(&c->fetched_sum, old & 1);
	__sync_fetch_and_or(&c->or, 1ull << (tx & 63));
	__sync_fetch_and_and(&c->and, ~(1ull << (tx & 63)));
	__sync_fetch_and_xor(&c->xor, tx);
	__sync_lock_test_and_set(&c->xchg, tx);
	__sync_val_compare_and_swap(&c->cas, tx, tx + 1);
	__sync_fetch_and_add(&c->add32, 2);
	__sync_val_compare_and_swap(&c->cas32, (u32)tx, (u32)tx + 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
