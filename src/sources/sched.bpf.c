// SPDX-License-Identifier: GPL-2.0
/* Off-CPU intervals and wakeups of traced threads from sched_switch and sched_wakeup. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pid_filter.bpf.h"
#include "drop_counter.bpf.h"
#include "ringbuf_wakeup.bpf.h"
#include "sched.h"

char LICENSE[] SEC("license") = "GPL";

#define EVENTS_BYTES (4 << 20)

/* rodata: intervals shorter than this are not reported; wakeup records on or off */
const volatile __u64 min_offcpu_ns = 0;
const volatile bool record_wakeups = true;
/* grtrace itself, left out of system-wide recordings */
const volatile __u32 recorder_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_BYTES);
} sched_events SEC(".maps");

/* LRU: a thread that exits while off the CPU leaves an entry nobody deletes */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct sched_offcpu_start);
} offcpu_start SEC(".maps");

/* woken thread -> the thread that woke it, until the woken one runs */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u32);
} wakers SEC(".maps");

static __always_inline void emit_offcpu(__u32 tid, const struct sched_offcpu_start *start, __u64 now)
{
	struct sched_event *e;
	__u32 *waker;

	if (now - start->ts_ns < min_offcpu_ns)
		return;
	e = bpf_ringbuf_reserve(&sched_events, sizeof(*e), 0);
	if (!e) {
		count_dropped_event();
		return;
	}
	waker = bpf_map_lookup_elem(&wakers, &tid);
	e->ts_ns = start->ts_ns;
	e->on_cpu_ns = now;
	e->kind = SCHED_EV_OFFCPU;
	e->pid = start->pid;
	e->tid = tid;
	e->cpu = bpf_get_smp_processor_id();
	e->prev_state = start->prev_state;
	e->waker_tid = waker ? *waker : 0;
	e->target_pid = e->target_tid = e->target_cpu = 0;
	e->prio = 0;
	bpf_ringbuf_submit(e, ringbuf_wakeup_flags(&sched_events, EVENTS_BYTES / 8));
}

/* raw_tp args: bool preempt, struct task_struct *prev, *next, unsigned int prev_state */
SEC("raw_tp/sched_switch")
int handle_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 prev_tgid = BPF_CORE_READ(prev, tgid), next_tid = BPF_CORE_READ(next, pid);
	struct sched_offcpu_start *start;
	__u64 now = bpf_ktime_get_ns();

	if (prev_tgid && prev_tgid != recorder_tgid && tgid_is_traced(prev_tgid)) {
		struct sched_offcpu_start s = {
			.ts_ns = now, .prev_state = (__u32)ctx->args[3], .pid = prev_tgid,
		};
		__u32 prev_tid = BPF_CORE_READ(prev, pid);

		bpf_map_update_elem(&offcpu_start, &prev_tid, &s, BPF_ANY);
	}
	start = next_tid ? bpf_map_lookup_elem(&offcpu_start, &next_tid) : NULL;
	if (start) {
		emit_offcpu(next_tid, start, now);
		bpf_map_delete_elem(&offcpu_start, &next_tid);
		bpf_map_delete_elem(&wakers, &next_tid);
	}
	return 0;
}

/* raw_tp args: struct task_struct *p */
SEC("raw_tp/sched_wakeup")
int handle_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 waker = (__u32)pid_tgid;
	struct sched_event *e;

	if (!tgid || tgid == recorder_tgid || !tgid_is_traced(tgid))
		return 0;
	bpf_map_update_elem(&wakers, &tid, &waker, BPF_ANY);
	if (!record_wakeups)
		return 0;
	e = bpf_ringbuf_reserve(&sched_events, sizeof(*e), 0);
	if (!e) {
		count_dropped_event();
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->on_cpu_ns = 0;
	e->kind = SCHED_EV_WAKEUP;
	e->pid = pid_tgid >> 32;
	e->tid = waker;
	e->cpu = bpf_get_smp_processor_id();
	e->prev_state = 0;
	e->waker_tid = 0;
	e->target_pid = tgid;
	e->target_tid = tid;
	e->target_cpu = BPF_CORE_READ(p, thread_info.cpu);
	e->prio = BPF_CORE_READ(p, prio);
	bpf_ringbuf_submit(e, ringbuf_wakeup_flags(&sched_events, EVENTS_BYTES / 8));
	return 0;
}
