// SPDX-License-Identifier: GPL-2.0
/* Tells user space which processes may have mapped a new library: exec and the loader's dlopen hook.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pid_filter.bpf.h"
#include "drop_counter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 self_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} look_at SEC(".maps");

static __always_inline void ask_for_look(__u32 tgid)
{
	__u32 *slot;

	if (tgid == self_tgid || !tgid_is_traced(tgid))
		return;
	slot = bpf_ringbuf_reserve(&look_at, sizeof(*slot), 0);
	if (!slot) {
		count_dropped_event();
		return;
	}
	*slot = tgid;
	/* rare (exec, dlopen): every one wakes the reader */
	bpf_ringbuf_submit(slot, 0);
}

SEC("raw_tp/sched_process_exec")
int watch_exec(struct bpf_raw_tracepoint_args *ctx)
{
	ask_for_look(bpf_get_current_pid_tgid() >> 32);
	return 0;
}

/* _dl_debug_state(): the loader calls it before and after each change of the link map */
SEC("uprobe")
int watch_loader(struct pt_regs *ctx)
{
	ask_for_look(bpf_get_current_pid_tgid() >> 32);
	return 0;
}

/* With a pid filter: a watched process's children are watched too. */
SEC("raw_tp/sched_process_fork")
int watch_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 parent_tgid = BPF_CORE_READ(parent, tgid);
	__u32 child_tgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (!filter_by_tgid || BPF_CORE_READ(child, pid) != child_tgid ||
	    !tgid_is_traced(parent_tgid))
		return 0;
	bpf_map_update_elem(&traced_tgids, &child_tgid, &one, BPF_ANY);
	return 0;
}
