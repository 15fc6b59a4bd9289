// SPDX-License-Identifier: GPL-2.0
/* All dma_fence tracepoints: fence life cycle, and wait durations per (context, seqno, thread). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pid_filter.bpf.h"
#include "drop_counter.bpf.h"
#include "fence.h"

char LICENSE[] SEC("license") = "GPL";

/* enum grt_fence_event (records_kernel.h) */
#define FENCE_INIT 1
#define FENCE_EMIT 2
#define FENCE_ENABLE_SIGNAL 3
#define FENCE_SIGNALED 4
#define FENCE_DESTROY 5
#define FENCE_WAIT_START 6
#define FENCE_WAIT_END 7
#define FENCE_F_WAIT_MATCHED 1

/* Offsets as this kernel's format file gives them; the defaults are Linux 6.x's. */
const volatile struct fence_layout layout = {
	.driver = 8, .timeline = 12, .context = 16, .seqno = 20, .context_size = 4, .seqno_size = 4,
};

/* The kind fence_test_event() handles; set by the tests only. */
__u32 test_fence_kind = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} fence_events SEC(".maps");

/*
 * Fences a traced process touched: signaled/destroy usually fire in an IRQ or
 * a kernel thread, so they are kept for these fences whoever runs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct fence_key);
	__type(value, __u8);
} fences_of_interest SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct fence_wait_key);
	__type(value, __u64);
} wait_starts SEC(".maps");

static __always_inline __u64 read_number(const void *entry, __u32 off, __u32 size)
{
	__u64 v = 0;

	if (size == 8)
		bpf_probe_read_kernel(&v, 8, entry + off);
	else
		bpf_probe_read_kernel(&v, 4, entry + off);
	return v;
}

/* A __data_loc string: the u32 at off holds the string's length << 16 | its offset in the entry. */
static __always_inline void read_loc_string(const void *entry, __u32 off, char *out)
{
	__u32 loc = 0;

	out[0] = 0;
	if (bpf_probe_read_kernel(&loc, sizeof(loc), entry + off))
		return;
	bpf_probe_read_kernel_str(out, FENCE_NAME_LEN, entry + (loc & 0xffff));
}

static __always_inline bool fence_is_followed(struct fence_key *key, __u32 tgid, __u32 kind)
{
	__u8 one = 1;

	if (!filter_by_tgid)
		return true;
	if (tgid_is_traced(tgid)) {
		/*
		 * An init with seqno 0 is a fence its driver numbers at emit (virtio-gpu):
		 * (context, 0) names every such fence, so it is not followed.
		 */
		if (kind != FENCE_DESTROY && !(kind == FENCE_INIT && key->seqno == 0))
			bpf_map_update_elem(&fences_of_interest, key, &one, BPF_ANY);
		return true;
	}
	return bpf_map_lookup_elem(&fences_of_interest, key) != NULL;
}

/* Pairs wait_start with wait_end of the same thread on the same fence. */
static __always_inline void track_wait(struct fence_event *e, __u32 kind)
{
	struct fence_wait_key key = { .context = e->context, .seqno = e->seqno, .tid = e->tid };
	__u64 *start;

	if (kind == FENCE_WAIT_START) {
		/* a copy: 6.1's verifier refuses ring buffer memory as a map value */
		__u64 start_ns = e->ts_ns;

		bpf_map_update_elem(&wait_starts, &key, &start_ns, BPF_ANY);
		return;
	}
	start = bpf_map_lookup_elem(&wait_starts, &key);
	if (!start)
		return;
	e->wait_ns = e->ts_ns - *start;
	e->flags |= FENCE_F_WAIT_MATCHED;
	bpf_map_delete_elem(&wait_starts, &key);
}

/* entry: the tracepoint's record (driver, timeline, context, seqno at the layout's offsets) */
static __always_inline int handle_fence(const void *entry, __u32 kind)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct fence_key key = {
		.context = read_number(entry, layout.context, layout.context_size),
		.seqno = read_number(entry, layout.seqno, layout.seqno_size),
	};
	struct fence_event *e;

	if (!fence_is_followed(&key, pid_tgid >> 32, kind))
		return 0;
	if (kind == FENCE_DESTROY)
		bpf_map_delete_elem(&fences_of_interest, &key);
	e = bpf_ringbuf_reserve(&fence_events, sizeof(*e), 0);
	if (!e) {
		count_dropped_event();
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->context = key.context;
	e->seqno = key.seqno;
	e->wait_ns = 0;
	e->kind = kind;
	e->flags = 0;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->cpu = bpf_get_smp_processor_id();
	e->reserved = 0;
	read_loc_string(entry, layout.driver, e->driver);
	read_loc_string(entry, layout.timeline, e->timeline);
	if (kind == FENCE_WAIT_START || kind == FENCE_WAIT_END)
		track_wait(e, kind);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tracepoint/dma_fence/dma_fence_init")
int fence_init(void *ctx) { return handle_fence(ctx, FENCE_INIT); }
SEC("tracepoint/dma_fence/dma_fence_emit")
int fence_emit(void *ctx) { return handle_fence(ctx, FENCE_EMIT); }
SEC("tracepoint/dma_fence/dma_fence_enable_signal")
int fence_enable_signal(void *ctx) { return handle_fence(ctx, FENCE_ENABLE_SIGNAL); }
SEC("tracepoint/dma_fence/dma_fence_signaled")
int fence_signaled(void *ctx) { return handle_fence(ctx, FENCE_SIGNALED); }
SEC("tracepoint/dma_fence/dma_fence_destroy")
int fence_destroy(void *ctx) { return handle_fence(ctx, FENCE_DESTROY); }
SEC("tracepoint/dma_fence/dma_fence_wait_start")
int fence_wait_start(void *ctx) { return handle_fence(ctx, FENCE_WAIT_START); }
SEC("tracepoint/dma_fence/dma_fence_wait_end")
int fence_wait_end(void *ctx) { return handle_fence(ctx, FENCE_WAIT_END); }

/*
 * The same handler behind a raw tracepoint program, for BPF_PROG_TEST_RUN:
 * tracepoint programs cannot be test-run, raw_tp ones can, and their context
 * (the test's input bytes) is laid out as a dma_fence trace entry. Not
 * attached or loaded by the source.
 */
SEC("raw_tp")
int fence_test_event(void *ctx) { return handle_fence(ctx, test_fence_kind); }
