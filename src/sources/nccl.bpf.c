// SPDX-License-Identifier: GPL-2.0
/* Uprobes on libnccl's communicator and collective entry points: arguments at entry, result at return. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "pid_filter.bpf.h"
#include "drop_counter.bpf.h"
#include "cuda_abi.bpf.h"
#include "nccl.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} nccl_events SEC(".maps");

/* The call each thread is inside; LRU so a thread that died inside one does not pin its slot. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct nccl_event);
} nccl_calls SEC(".maps");

static __always_inline bool begin(struct nccl_event *ev)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!tgid_is_traced(id >> 32))
		return false;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->entry_ns = bpf_ktime_get_ns();
	ev->pid = id >> 32;
	ev->tid = (__u32)id;
	ev->cpu = bpf_get_smp_processor_id();
	ev->root = -1;
	return true;
}

static __always_inline int save(struct nccl_event *ev, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();

	ev->kind = kind;
	bpf_map_update_elem(&nccl_calls, &id, ev, BPF_ANY);
	return 0;
}

/* x86-64: the n-th stack argument (0 = the seventh argument of the call). */
static __always_inline __u64 stack_arg(struct pt_regs *ctx, int n)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (char *)stack_args(ctx) + 8 * n);
	return v;
}

/*
 * ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank[, config]):
 * the 128-byte id is passed in memory, on the stack; rank and config stay in registers.
 * Its first words are random per id: folded, they name the communicator in every rank.
 */
SEC("uprobe")
int nccl_enter_comm_init(struct pt_regs *ctx)
{
	struct nccl_event ev;
	__u64 words[4] = {};

	if (!begin(&ev))
		return 0;
	ev.comm_out = ARG1(ctx);
	ev.nranks = (__u32)ARG2(ctx);
	ev.rank = (__u32)ARG3(ctx);
	bpf_probe_read_user(words, sizeof(words), stack_args(ctx));
	ev.comm_id = words[0] ^ (words[1] * 31) ^ (words[2] * 131) ^ (words[3] * 1031);
	return save(&ev, NCCL_CALL_COMM_INIT);
}

/*
 * ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nIds,
 * ncclUniqueId *ids, config): the ids by pointer; the first names the communicator.
 */
SEC("uprobe")
int nccl_enter_comm_init_scalable(struct pt_regs *ctx)
{
	struct nccl_event ev;
	__u64 words[4] = {};

	if (!begin(&ev))
		return 0;
	ev.comm_out = ARG1(ctx);
	ev.nranks = (__u32)ARG2(ctx);
	ev.rank = (__u32)ARG3(ctx);
	bpf_probe_read_user(words, sizeof(words), (void *)ARG5(ctx));
	ev.comm_id = words[0] ^ (words[1] * 31) ^ (words[2] * 131) ^ (words[3] * 1031);
	return save(&ev, NCCL_CALL_COMM_INIT);
}

/* (sendbuff, recvbuff, count, datatype, op, comm, stream): all-reduce and reduce-scatter */
SEC("uprobe")
int nccl_enter_reduction(struct pt_regs *ctx)
{
	struct nccl_event ev;

	if (!begin(&ev))
		return 0;
	ev.count = ARG3(ctx);
	ev.datatype = (__u32)ARG4(ctx);
	ev.redop = (__u32)ARG5(ctx);
	ev.comm = ARG6(ctx);
	ev.stream = stack_arg(ctx, 0);
	return save(&ev, (__u32)bpf_get_attach_cookie(ctx));
}

/* ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream) */
SEC("uprobe")
int nccl_enter_all_gather(struct pt_regs *ctx)
{
	struct nccl_event ev;

	if (!begin(&ev))
		return 0;
	ev.count = ARG3(ctx);
	ev.datatype = (__u32)ARG4(ctx);
	ev.comm = ARG5(ctx);
	ev.stream = ARG6(ctx);
	return save(&ev, (__u32)bpf_get_attach_cookie(ctx));
}

/* ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream) */
SEC("uprobe")
int nccl_enter_broadcast(struct pt_regs *ctx)
{
	struct nccl_event ev;

	if (!begin(&ev))
		return 0;
	ev.count = ARG3(ctx);
	ev.datatype = (__u32)ARG4(ctx);
	ev.root = (__s32)ARG5(ctx);
	ev.comm = ARG6(ctx);
	ev.stream = stack_arg(ctx, 0);
	return save(&ev, (__u32)bpf_get_attach_cookie(ctx));
}

/* ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream) */
SEC("uprobe")
int nccl_enter_reduce(struct pt_regs *ctx)
{
	struct nccl_event ev;

	if (!begin(&ev))
		return 0;
	ev.count = ARG3(ctx);
	ev.datatype = (__u32)ARG4(ctx);
	ev.redop = (__u32)ARG5(ctx);
	ev.root = (__s32)ARG6(ctx);
	ev.comm = stack_arg(ctx, 0);
	ev.stream = stack_arg(ctx, 1);
	return save(&ev, (__u32)bpf_get_attach_cookie(ctx));
}

/*
 * ncclSend(sendbuff, count, datatype, peer, comm, stream) and
 * ncclRecv(recvbuff, count, datatype, peer, comm, stream)
 */
SEC("uprobe")
int nccl_enter_p2p(struct pt_regs *ctx)
{
	struct nccl_event ev;

	if (!begin(&ev))
		return 0;
	ev.count = ARG2(ctx);
	ev.datatype = (__u32)ARG3(ctx);
	ev.root = (__s32)ARG4(ctx);
	ev.comm = ARG5(ctx);
	ev.stream = ARG6(ctx);
	return save(&ev, (__u32)bpf_get_attach_cookie(ctx));
}

/* ncclCommSplit(comm, color, key, ncclComm_t *newcomm, config): the new one is read at return */
SEC("uprobe")
int nccl_enter_comm_split(struct pt_regs *ctx)
{
	struct nccl_event ev;

	if (!begin(&ev))
		return 0;
	ev.parent = ARG1(ctx);
	ev.color = (__s32)ARG2(ctx);
	ev.key = (__s32)ARG3(ctx);
	ev.comm_out = ARG4(ctx);
	return save(&ev, NCCL_CALL_COMM_SPLIT);
}

/* Every probed call's return: the saved entry goes out with the result. */
SEC("uretprobe")
int nccl_exit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct nccl_event *saved = bpf_map_lookup_elem(&nccl_calls, &id);
	struct nccl_event *ev;

	if (!saved || saved->kind != (__u32)bpf_get_attach_cookie(ctx))
		return 0;
	ev = bpf_ringbuf_reserve(&nccl_events, sizeof(*ev), 0);
	if (!ev) {
		count_dropped_event();
		bpf_map_delete_elem(&nccl_calls, &id);
		return 0;
	}
	__builtin_memcpy(ev, saved, sizeof(*ev));
	bpf_map_delete_elem(&nccl_calls, &id);
	ev->return_ns = bpf_ktime_get_ns();
	ev->ret = (__s32)PT_REGS_RC(ctx);
	if ((ev->kind == NCCL_CALL_COMM_INIT || ev->kind == NCCL_CALL_COMM_SPLIT) && ev->comm_out)
		ev->comm = read_user_u64(ev->comm_out);
	bpf_ringbuf_submit(ev, 0);
	return 0;
}
