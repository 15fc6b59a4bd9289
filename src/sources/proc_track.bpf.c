// SPDX-License-Identifier: GPL-2.0
/* Follows forks and exits of traced processes: children join the pid filter, exits are recorded. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pid_filter.bpf.h"
#include "drop_counter.bpf.h"
#include "proc_track.h"

#define GRT_PROC_START 2
#define GRT_PROC_EXIT 3

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} proc_events SEC(".maps");

static __always_inline void emit(__u32 kind, __u32 pid, __u32 ppid, __s32 exit_code,
				 struct task_struct *task)
{
	struct proc_track_event *e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);

	if (!e) {
		count_dropped_event();
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->kind = kind;
	e->pid = pid;
	e->ppid = ppid;
	e->exit_code = exit_code;
	e->cpu = bpf_get_smp_processor_id();
	e->reserved = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
}

/* raw_tp, not tp_btf: BPF tracing programs do not exist on the kernels we target */
SEC("raw_tp/sched_process_fork")
int handle_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 parent_tgid = BPF_CORE_READ(parent, tgid);
	__u32 child_tgid = BPF_CORE_READ(child, tgid);
	__u32 child_pid = BPF_CORE_READ(child, pid);
	__u8 one = 1;

	if (child_pid != child_tgid || !tgid_is_traced(parent_tgid))
		return 0; /* a new thread, or an untraced parent */
	if (filter_by_tgid)
		bpf_map_update_elem(&traced_tgids, &child_tgid, &one, BPF_ANY);
	emit(GRT_PROC_START, child_tgid, parent_tgid, 0, child);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int handle_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u32 pid = BPF_CORE_READ(task, pid);

	if (pid != tgid || !tgid_is_traced(tgid))
		return 0; /* only the thread-group leader marks the process's end */
	/* the wait status as is: exit code, or the killing signal and the core-dump bit */
	emit(GRT_PROC_EXIT, tgid, BPF_CORE_READ(task, real_parent, tgid),
	     BPF_CORE_READ(task, exit_code), task);
	return 0;
}
