// SPDX-License-Identifier: GPL-2.0
/* Uprobes on libcuda entry points that count, sum and time calls in maps: no event per call.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pid_filter.bpf.h"
#include "drop_counter.bpf.h"
#include "cuda_abi.bpf.h"
#include "cuda_agg.h"

char LICENSE[] SEC("license") = "GPL";

/* this process: never counted (it calls no CUDA, but a library it loads might) */
const volatile __u32 self_tgid = 0;

/*
 * Bumped by user space after it deletes processes' entries (exits, exec):
 * every thread's cached verdict (agg_call_slot.known_tgid) is then checked
 * again, so a process whose counters were deleted while it still runs (it
 * exec'd) gets them back at its next call, as it would without the cache.
 */
__u32 procs_generation = 0;

/* Sized by user space before load: processes x APIs, processes x kernels, live allocations. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct agg_api_key);
	__type(value, struct agg_api_stats);
} api_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct agg_launch_key);
	__type(value, __u64);
} launches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct agg_proc_stats);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct agg_alloc_key);
	__type(value, struct agg_alloc);
} allocs SEC(".maps");

/*
 * The user stack of each thread's allocation in flight, walked at its entry.
 * Not a stack map: a stack whose hash falls in a bucket another one holds
 * gets no id there. Allocations keep a digest of their frames, and the frames
 * go to user space with the allocation's event.
 */
struct agg_call_stack {
	__u64 ips[AGG_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct agg_call_stack);
} call_stacks SEC(".maps");

/* rare events only (first call, exit, names, allocation stacks) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} agg_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AGG_LOSSES);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct agg_call_slot);
} call_slots SEC(".maps");

static __always_inline void count_loss(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&losses, &what);

	if (n)
		*n += 1;
}

static __always_inline void add(__u64 *counter, __u64 v)
{
	__sync_fetch_and_add(counter, v);
}

/*
 * grtrace's own threads inside a target (the inject library's) are not the
 * application. Checked at every call: the library lends application threads
 * by renaming them for a while. The name is read in place off the task (the
 * first byte mostly decides), not copied out by a helper.
 */
static __always_inline bool own_thread(struct task_struct *task)
{
	const char *comm = task->comm;

	return comm[0] == 'g' && comm[1] == 'r' && comm[2] == 't' && comm[3] == 'r' &&
	       comm[4] == 'a' && comm[5] == 'c' && comm[6] == 'e' && comm[7] == '-';
}

/* A ring slot for an event, its header filled; NULL (and the loss counted) when the ring is full. */
static __always_inline struct agg_event *new_event(__u32 kind, __u32 tgid, __u64 handle,
						   __u64 other)
{
	struct agg_event *e = bpf_ringbuf_reserve(&agg_events, sizeof(*e), 0);

	if (!e) {
		count_loss(AGG_LOST_EVENT);
		return NULL;
	}
	e->kind = kind;
	e->tgid = tgid;
	e->ts_ns = bpf_ktime_get_ns();
	e->handle = handle;
	e->other = other;
	e->reserved = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

static __always_inline void send_event(__u32 kind, __u32 tgid, __u64 handle, __u64 other,
				       __u64 name_ptr)
{
	struct agg_event *e = new_event(kind, tgid, handle, other);
	long n = 0;

	if (!e)
		return;
	if (name_ptr)
		n = bpf_probe_read_user_str(e->name, sizeof(e->name), (void *)name_ptr);
	e->name_len = n > 0 ? n : 0;
	bpf_ringbuf_submit(e, 0);
}

/* Walks the thread's user stack into its agg_call_stack: the frames walked, -1 when none. */
static __always_inline __s32 walk_stack(struct pt_regs *ctx, struct task_struct *task,
					struct agg_call_slot *slot, __u64 sp)
{
	struct agg_call_stack *st =
	    bpf_task_storage_get(&call_stacks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	long n;

	if (!st)
		return -1;
	n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), BPF_F_USER_STACK);
	/* the one stack a thread keeps is this call's from now on */
	slot->stack_sp = sp;
	return n >= (long)sizeof(__u64) ? n / sizeof(__u64) : -1;
}

/* A 64-bit digest of a stack's frames (FNV-1a on the words), never 0: the stack's key. */
static __always_inline __u64 frames_digest(const struct agg_call_stack *st)
{
	__u64 h = 0xcbf29ce484222325ull;

	for (int i = 0; i < AGG_STACK_DEPTH; i++)
		h = (h ^ st->ips[i]) * 0x100000001b3ull;
	return h | 1;
}

/* An allocation's stack: its key and frames (the walk zeroed the words past its depth). */
static __always_inline void send_stack(__u32 tgid, __u64 addr, __u64 stack_key,
				       const struct agg_call_stack *st)
{
	struct agg_event *e = new_event(AGG_EV_STACK, tgid, addr, stack_key);

	if (!e)
		return;
	e->name_len = sizeof(st->ips);
	__builtin_memcpy(e->name, st->ips, sizeof(st->ips));
	bpf_ringbuf_submit(e, 0);
}

/* The process's counters; created (and announced to user space) at its first call. */
static __always_inline struct agg_proc_stats *proc_of(__u32 tgid)
{
	struct agg_proc_stats *p = bpf_map_lookup_elem(&procs, &tgid);
	struct agg_proc_stats fresh = {};

	if (p)
		return p;
	fresh.first_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST) == 0)
		send_event(AGG_EV_PROCESS, tgid, 0, 0, 0);
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		count_loss(AGG_LOST_PROC);
	return p;
}

static __always_inline struct agg_api_stats *api_of(__u32 tgid, __u32 api)
{
	struct agg_api_key key = {.tgid = tgid, .api = api};
	struct agg_api_stats *s = bpf_map_lookup_elem(&api_stats, &key);
	static const struct agg_api_stats zero;

	if (s)
		return s;
	bpf_map_update_elem(&api_stats, &key, &zero, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&api_stats, &key);
	if (!s)
		count_loss(AGG_LOST_API);
	return s;
}

/*
 * A launch in its kernel's counter; the process's total is their sum (the
 * agent adds them), plus here the launches the table had no room for.
 */
static __always_inline void count_launch(__u32 tgid, __u64 function)
{
	struct agg_launch_key key = {.tgid = tgid, .function = function};
	__u64 one = 1, *n = bpf_map_lookup_elem(&launches, &key);
	struct agg_proc_stats *p;

	if (n) {
		add(n, 1);
		return;
	}
	/* a racing first launch on another CPU: add to what it created */
	if (bpf_map_update_elem(&launches, &key, &one, BPF_NOEXIST) == 0)
		return;
	n = bpf_map_lookup_elem(&launches, &key);
	if (n) {
		add(n, 1);
		return;
	}
	count_loss(AGG_LOST_LAUNCH);
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p)
		add(&p->launches, 1);
}

/* floor(log2(v)) for v >= 1, clamped to the last bucket */
static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r < AGG_HIST_BUCKETS ? r : AGG_HIST_BUCKETS - 1;
}

static __always_inline __u64 low32_if(bool legacy, __u64 v)
{
	return legacy ? v & 0xffffffffull : v;
}

/* The bytes and direction of a 2D/3D copy, from its descriptor's memory types. */
static __always_inline __u32 copy_kind_of_types(__u32 dst, __u32 src)
{
	if (!dst || !src)
		return 0; /* GRT_COPY_UNKNOWN */
	if (dst == CU_MEMORYTYPE_UNIFIED || src == CU_MEMORYTYPE_UNIFIED)
		return 6; /* GRT_COPY_DEFAULT */
	if (dst == CU_MEMORYTYPE_HOST && src == CU_MEMORYTYPE_HOST)
		return 4; /* GRT_COPY_HTOH */
	if (src == CU_MEMORYTYPE_HOST)
		return 1; /* GRT_COPY_HTOD */
	return dst == CU_MEMORYTYPE_HOST ? 2 : 3; /* GRT_COPY_DTOH, GRT_COPY_DTOD */
}

/* The slot's copy direction (in kind bits of aux's top byte) and bytes (the rest). */
#define COPY_AUX(kind, bytes) (((__u64)(kind) << 56) | ((bytes) & ((1ull << 56) - 1)))

static __always_inline void save_copy_2d3d(struct pt_regs *ctx, struct agg_call *slot,
					   __u32 op, bool legacy)
{
	if (legacy)
		return; /* pre-3.2 descriptors are not decoded */
	if (op == AGG_OP_COPY_2D) {
		struct cu_memcpy2d p = {};

		if (!bpf_probe_read_user(&p, sizeof(p), (void *)ARG1(ctx)))
			slot->aux = COPY_AUX(copy_kind_of_types(p.dst.memory_type,
								p.src.memory_type),
					     p.width_bytes * p.height);
	} else {
		struct cu_memcpy3d p = {};

		if (!bpf_probe_read_user(&p, sizeof(p), (void *)ARG1(ctx)))
			slot->aux = COPY_AUX(copy_kind_of_types(p.dst.memory_type,
								p.src.memory_type),
					     p.width_bytes * p.height * p.depth);
	}
}

/*
 * A thread's first call, or its first since procs_generation moved: the
 * checks that need map lookups, and the process's counters created. Returns
 * whether the call is counted; *slot is then the thread's slot (NULL when out
 * of memory), its verdict cached where the process's counters exist.
 */
static __always_inline bool admit_call(__u32 tgid, struct task_struct *task,
				       struct agg_call_slot **slot)
{
	__u32 generation = procs_generation;
	bool counted;

	if (tgid == self_tgid || !tgid_is_traced(tgid))
		return false;
	/* without them (the table is full) it is looked at again at the next call */
	counted = proc_of(tgid) != NULL;
	*slot = bpf_task_storage_get(&call_slots, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (*slot) {
		(*slot)->known_tgid = counted ? tgid : 0;
		(*slot)->known_generation = generation;
	}
	return true;
}

/*
 * Where a call entered at sp is kept until its return: a free place, or the
 * place of a call entered at the same sp (which the thread left without
 * its return, by longjmp: no call inside it starts there). With every place
 * taken by calls still open around this one, the call is counted but not
 * timed (AGG_LOST_NESTED).
 */
static __always_inline struct agg_call *call_at_entry(struct agg_call_slot *thread, __u64 sp)
{
	__u32 free = AGG_NEST;

	for (__u32 i = 0; i < AGG_NEST; i++) {
		__u64 at = thread->calls[i].sp;

		if (at == sp)
			return &thread->calls[i];
		if (!at && free == AGG_NEST)
			free = i;
	}
	if (free >= AGG_NEST) {
		count_loss(AGG_LOST_NESTED);
		return NULL;
	}
	/* an index, masked: the verifier follows it where it would not follow a chosen pointer */
	return &thread->calls[free & (AGG_NEST - 1)];
}

/* The call entered at sp (entry_sp_at_return) that a return to the same api ends, or NULL. */
static __always_inline struct agg_call *call_at_return(struct agg_call_slot *thread, __u64 sp,
						       __u64 cookie)
{
	for (__u32 i = 0; i < AGG_NEST; i++) {
		struct agg_call *c = &thread->calls[i];

		if (c->sp && c->sp == sp &&
		    AGG_COOKIE_API(c->cookie) == AGG_COOKIE_API(cookie))
			return c;
	}
	return NULL;
}

SEC("uprobe")
int agg_enter(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 op = AGG_COOKIE_OP(cookie);
	bool legacy = cookie & AGG_COOKIE_LEGACY32;
	__u64 sp = entry_sp(ctx);
	struct agg_call_slot *thread;
	struct agg_api_stats *s;
	struct agg_call *slot;

	if (own_thread(task))
		return 0;
	thread = bpf_task_storage_get(&call_slots, task, 0, 0);
	if ((!thread || thread->known_tgid != tgid || thread->known_generation != procs_generation) &&
	    !admit_call(tgid, task, &thread))
		return 0;
	s = api_of(tgid, AGG_COOKIE_API(cookie));
	if (s)
		add(&s->calls, 1);
	if (!thread)
		return 0;
	slot = call_at_entry(thread, sp);
	if (!slot)
		return 0;
	slot->sp = sp;
	slot->entry_ns = bpf_ktime_get_ns();
	slot->cookie = cookie;
	slot->out = ARG1(ctx);
	slot->aux = 0;
	slot->bytes = 0;
	slot->stack_depth = -1;
	switch (op) {
	case AGG_OP_LAUNCH:
		slot->aux = ARG1(ctx);
		break;
	case AGG_OP_LAUNCH_EX:
		slot->aux = ARG2(ctx);
		break;
	case AGG_OP_ALLOC:
		slot->bytes = low32_if(legacy, ARG2(ctx));
		slot->stack_depth = walk_stack(ctx, task, thread, sp);
		break;
	case AGG_OP_ALLOC_PITCH:
		slot->aux = ARG2(ctx);
		slot->bytes = low32_if(legacy, ARG4(ctx));
		slot->stack_depth = walk_stack(ctx, task, thread, sp);
		break;
	case AGG_OP_FREE:
		slot->aux = AGG_COOKIE_KIND(cookie) == 4 ? ARG1(ctx) : low32_if(legacy, ARG1(ctx));
		break;
	case AGG_OP_COPY:
		slot->aux = COPY_AUX(AGG_COOKIE_KIND(cookie), low32_if(legacy, ARG3(ctx)));
		break;
	case AGG_OP_COPY_PEER:
		slot->aux = COPY_AUX(AGG_COOKIE_KIND(cookie), ARG5(ctx));
		break;
	case AGG_OP_COPY_2D:
	case AGG_OP_COPY_3D:
		save_copy_2d3d(ctx, slot, op, legacy);
		break;
	case AGG_OP_NAME_ARG:
		slot->aux = ARG3(ctx);
		break;
	case AGG_OP_NAME_ALIAS:
	case AGG_OP_NAME_OUT:
		slot->aux = ARG2(ctx);
		break;
	}
	return 0;
}

static __always_inline void finish_alloc(struct agg_call *slot, bool own_stack, __u32 tgid,
					 struct agg_proc_stats *p, bool legacy)
{
	__u32 kind = AGG_COOKIE_KIND(slot->cookie) & (AGG_ALLOC_KINDS - 1);
	struct agg_alloc_key key = {.tgid = tgid};
	struct agg_alloc a = {.kind = kind};
	struct agg_call_stack *st = NULL;
	__u64 addr = 0, pitch = 0;

	bpf_probe_read_user(&addr, sizeof(addr), (void *)slot->out);
	/* v1 cuMemAllocHost returns a full host pointer; v1 device pointers are 32-bit */
	if (legacy && kind != 4)
		addr &= 0xffffffffull;
	a.bytes = slot->bytes;
	if (AGG_COOKIE_OP(slot->cookie) == AGG_OP_ALLOC_PITCH) {
		bpf_probe_read_user(&pitch, sizeof(pitch), (void *)slot->aux);
		a.bytes *= low32_if(legacy, pitch);
	}
	if (!addr || !p)
		return;
	/* own_stack: no call inside this one walked the stack since */
	if (slot->stack_depth > 0 && own_stack)
		st = bpf_task_storage_get(&call_stacks, bpf_get_current_task_btf(), 0, 0);
	if (st)
		a.stack_key = frames_digest(st);
	key.addr = addr;
	if (bpf_map_update_elem(&allocs, &key, &a, BPF_ANY)) {
		count_loss(AGG_LOST_ALLOC);
		return;
	}
	add(&p->alloc_bytes[kind], a.bytes);
	add(&p->in_use_bytes[kind], a.bytes);
	if (st)
		send_stack(tgid, addr, a.stack_key, st);
}

static __always_inline void finish_free(struct agg_call *slot, __u32 tgid,
					struct agg_proc_stats *p)
{
	struct agg_alloc_key key = {.tgid = tgid, .addr = slot->aux};
	struct agg_alloc *a;

	if (!p || !slot->aux)
		return;
	a = bpf_map_lookup_elem(&allocs, &key);
	if (!a) {
		add(&p->untracked_frees, 1);
		return;
	}
	add(&p->in_use_bytes[a->kind & (AGG_ALLOC_KINDS - 1)], -a->bytes);
	bpf_map_delete_elem(&allocs, &key);
}

static __always_inline void finish_name(struct agg_call *slot, __u32 tgid, __u32 op)
{
	__u64 out = 0;

	bpf_probe_read_user(&out, sizeof(out), (void *)slot->out);
	if (op == AGG_OP_NAME_ARG && out)
		send_event(AGG_EV_NAME, tgid, out, 0, slot->aux);
	else if (op == AGG_OP_NAME_ALIAS && out)
		send_event(AGG_EV_ALIAS, tgid, out, slot->aux, 0);
	else if (op == AGG_OP_NAME_OUT && out)
		send_event(AGG_EV_NAME, tgid, slot->aux, 0, out);
}

SEC("uretprobe")
int agg_exit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), now = bpf_ktime_get_ns(), dur;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct agg_call_slot *thread;
	struct agg_proc_stats *p;
	struct agg_api_stats *s;
	struct agg_call *slot;
	bool own_stack;
	__u32 op, kind;
	int ret;

	thread = bpf_task_storage_get(&call_slots, bpf_get_current_task_btf(), 0, 0);
	slot = thread ? call_at_return(thread, entry_sp_at_return(ctx), cookie) : NULL;
	if (!slot)
		return 0;
	own_stack = thread->stack_sp == slot->sp;
	slot->sp = 0;
	dur = now - slot->entry_ns;
	ret = (int)PT_REGS_RC(ctx);
	op = AGG_COOKIE_OP(cookie);
	s = api_of(tgid, AGG_COOKIE_API(cookie));
	if (s) {
		/* the returns are the histogram's sum (cuda_agg_read) */
		add(&s->duration_ns, dur);
		add(&s->hist[log2_bucket(dur ? dur : 1)], 1);
		if (ret)
			add(&s->errors, 1);
	}
	if (op == AGG_OP_LAUNCH || op == AGG_OP_LAUNCH_EX) {
		/* launches that the driver accepted: what the program itself counts as launched */
		if (!ret)
			count_launch(tgid, slot->aux);
		return 0;
	}
	/* the process's own counters: every op but launches and plain calls */
	if (op == AGG_OP_PLAIN)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (op == AGG_OP_SYNC && p)
		add(&p->sync_wait_ns, dur);
	if (ret)
		return 0; /* a failed call allocated, freed, copied and named nothing */
	switch (op) {
	case AGG_OP_ALLOC:
	case AGG_OP_ALLOC_PITCH:
		finish_alloc(slot, own_stack, tgid, p, cookie & AGG_COOKIE_LEGACY32);
		break;
	case AGG_OP_FREE:
		finish_free(slot, tgid, p);
		break;
	case AGG_OP_COPY:
	case AGG_OP_COPY_PEER:
	case AGG_OP_COPY_2D:
	case AGG_OP_COPY_3D:
		kind = (slot->aux >> 56) & (AGG_COPY_KINDS - 1);
		if (p) {
			add(&p->copy_bytes[kind], slot->aux & ((1ull << 56) - 1));
			add(&p->copies[kind], 1);
		}
		break;
	case AGG_OP_NAME_ARG:
	case AGG_OP_NAME_ALIAS:
	case AGG_OP_NAME_OUT:
		finish_name(slot, tgid, op);
		break;
	}
	return 0;
}

/*
 * The end of a process: its last thread exits (signal->live reached 0), or
 * it exec's another program, which ends its CUDA life just as well.
 */
static __always_inline void process_ended(__u32 tgid)
{
	if (bpf_map_lookup_elem(&procs, &tgid))
		send_event(AGG_EV_EXIT, tgid, 0, 0, 0);
}

SEC("raw_tp/sched_process_exit")
int agg_process_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	process_ended(BPF_CORE_READ(task, tgid));
	return 0;
}

SEC("raw_tp/sched_process_exec")
int agg_process_exec(struct bpf_raw_tracepoint_args *ctx)
{
	process_ended(bpf_get_current_pid_tgid() >> 32);
	return 0;
}
