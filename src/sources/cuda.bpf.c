// SPDX-License-Identifier: GPL-2.0
/* Uprobes on libcuda.so.1 entry points: arguments at entry, results at return, one event per call.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pid_filter.bpf.h"
#include "drop_counter.bpf.h"
#include "cuda.h"
#include "cuda_abi.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* user stacks of launches and allocations; set false to save the unwinding cost */
const volatile bool capture_stacks = true;
/*
 * Launch stacks are opt-in (record --launch-stacks): the user-stack walk is
 * about a third of a launch's tracing cost, and leaks need only allocation
 * stacks.
 */
const volatile bool capture_launch_stacks = false;
/* kernel argument words of launches */
const volatile bool capture_args = true;
/*
 * Consumers are not woken per event (a wakeup costs more than the event in a
 * VM): user space drains on its tick, and is woken once this much is queued.
 */
const volatile __u64 wakeup_bytes = 4 * 1024 * 1024;

/* Sized by user space before load (cuda.c); this is only the default. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 * 1024 * 1024);
} events SEC(".maps");

/*
 * The calls each thread is inside, from entry to return. LRU: a thread that
 * died inside a call must not pin its slot forever.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct cuda_call_key);
	__type(value, struct cuda_event);
} calls SEC(".maps");

/*
 * The user stacks of each thread's calls in flight, walked at the entry and
 * sent with the return (cuda_stack_event), each tagged with its call's entry
 * stack pointer: a call inside a call keeps its own. Not a stack map: two
 * stacks whose hashes share a bucket there get no id, and user space names
 * stacks by their frames instead (stack_store.h).
 */
#define CALL_STACK_SLOTS 4

struct cuda_call_stack {
	struct {
		__u64 sp; /* 0: free */
		__u64 ips[CUDA_STACK_DEPTH];
	} slot[CALL_STACK_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cuda_call_stack);
} call_stacks SEC(".maps");

/* (tgid << 32 | a digest of the frames) of stacks sent: a new one wakes the reader (new_stack) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} stacks_sent SEC(".maps");

/*
 * record --cuda-via inject: processes whose calls libgrtrace-inject.so
 * records in-process (cuda_inproc.c) are left out here, so that a process is
 * recorded once whichever path records it. The library announces itself by
 * calling grt_cuda_inproc_begin(), probed by inproc_begin below, before the
 * process's first driver call; an exec forgets it.
 */
const volatile bool inproc_filter = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} inproc_tgids SEC(".maps");

static __always_inline bool call_traced(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!tgid_is_traced(tgid))
		return false;
	return !inproc_filter || !bpf_map_lookup_elem(&inproc_tgids, &tgid);
}

SEC("uprobe")
int inproc_begin(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 one = 1;

	if (tgid_is_traced(tgid))
		bpf_map_update_elem(&inproc_tgids, &tgid, &one, BPF_ANY);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int inproc_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&inproc_tgids, &tgid);
	return 0;
}

/*
 * Walks the calling thread's user stack into ips: the event says how many
 * frames, or that the walk failed.
 */
static __always_inline void take_stack(struct pt_regs *ctx, struct cuda_event *ev, __u64 *ips)
{
	long n = bpf_get_stack(ctx, ips, CUDA_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK);

	if (n >= (long)sizeof(__u64))
		ev->stack_id = n / sizeof(__u64);
	else
		ev->flags |= CUDA_EVENT_STACK_LOST;
}

/*
 * The stack of a call entering, kept until its return: in a slot of no
 * call around it (those entered with a higher stack pointer; one with a
 * lower or the same is of a call that is over). None free: lost.
 */
static __always_inline void keep_stack(struct pt_regs *ctx, struct cuda_event *ev)
{
	struct cuda_call_stack *st = bpf_task_storage_get(&call_stacks, bpf_get_current_task_btf(),
							  0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 sp = entry_sp(ctx);

	if (st)
		for (int i = 0; i < CALL_STACK_SLOTS; i++)
			if (st->slot[i].sp <= sp) {
				st->slot[i].sp = sp;
				take_stack(ctx, ev, st->slot[i].ips);
				return;
			}
	ev->flags |= CUDA_EVENT_STACK_LOST;
}

/* Fills everything of a call's event but the class's arguments. */
static __always_inline void call_fill(struct pt_regs *ctx, struct cuda_event *ev, bool want_stack)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task;
	__u64 cookie;

	__builtin_memset(ev, 0, sizeof(*ev));
	ev->entry_ns = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	ev->pid = id >> 32;
	ev->tid = (__u32)id;
	/* a BTF pointer: the loads are direct, not two probe-read helper calls */
	task = bpf_get_current_task_btf();
	ev->ppid = task->real_parent->tgid;
	ev->cpu = bpf_get_smp_processor_id();
	ev->api = cookie & CUDA_COOKIE_API_MASK;
	ev->flags = cookie & CUDA_COOKIE_LEGACY32 ? CUDA_EVENT_LEGACY32 : 0;
	ev->stack_id = -1;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	if (want_stack && capture_stacks)
		keep_stack(ctx, ev);
}

/* Starts a call's event: false when the thread is not traced. */
static __always_inline bool call_begin(struct pt_regs *ctx, struct cuda_event *ev, bool want_stack)
{
	if (!call_traced())
		return false;
	call_fill(ctx, ev, want_stack);
	return true;
}

static __always_inline int call_save(struct pt_regs *ctx, const struct cuda_event *ev)
{
	struct cuda_call_key key = {((__u64)ev->pid << 32) | ev->tid, entry_sp(ctx)};

	bpf_map_update_elem(&calls, &key, ev, BPF_ANY);
	return 0;
}

/* 8 bytes at p, but never past the end of p's page: a smaller argument may end there. */
static __always_inline __u64 read_arg_word(__u64 p)
{
	__u64 room = 4096 - (p & 4095);
	__u64 word = 0;

	if (room >= sizeof(word))
		bpf_probe_read_user(&word, sizeof(word), (void *)p);
	else
		bpf_probe_read_user(&word, room & 7, (void *)p);
	return word;
}

/*
 * The kernelParams slots, in one read when they cannot run past the array's
 * page: each user read costs ~0.1 us, and a launch is worth little more.
 */
static __always_inline int read_param_slots(__u64 params, __u64 *slots)
{
	if (4096 - (params & 4095) >= CUDA_LAUNCH_ARG_WORDS * 8)
		return bpf_probe_read_user(slots, CUDA_LAUNCH_ARG_WORDS * 8, (void *)params)
			   ? 0
			   : CUDA_LAUNCH_ARG_WORDS;
#pragma unroll
	for (int i = 0; i < CUDA_LAUNCH_ARG_WORDS; i++)
		if (bpf_probe_read_user(&slots[i], 8, (void *)(params + 8 * i)))
			return i;
	return CUDA_LAUNCH_ARG_WORDS;
}

/*
 * The driver is not told how many parameters a kernel has, so the slots
 * after the last one are whatever follows the caller's array. Parameter
 * pointers point into one place (the launch stub's frame, a packed buffer):
 * a slot that is no user pointer or lies far from the previous one ends the
 * list. Following it would mostly fault, and a faulting read costs ~0.5 us.
 */
#define USER_PTR_MIN 0x10000ull
#define USER_PTR_MAX 0x7ffffffff000ull
#define ARG_SLOT_SPAN 0x10000ull

static __always_inline bool plausible_slot(__u64 slot, __u64 prev)
{
	if (slot < USER_PTR_MIN || slot > USER_PTR_MAX)
		return false;
	return !prev || (slot > prev ? slot - prev : prev - slot) <= ARG_SLOT_SPAN;
}

/*
 * Launch stubs point the slots into one frame or buffer, so the words mostly
 * lie within a few dozen bytes of each other: one read of that span replaces
 * a read per word when it fits and stays in its page.
 */
#define ARG_SPAN_BYTES 64

static __always_inline bool read_arg_span(struct cuda_launch_args *l, const __u64 *slots, int n,
					  __u64 lo, __u64 hi)
{
	__u8 span[ARG_SPAN_BYTES] = {};

	if (hi - lo > ARG_SPAN_BYTES - 8 || 4096 - (lo & 4095) < ARG_SPAN_BYTES ||
	    bpf_probe_read_user(span, sizeof(span), (void *)lo))
		return false;
	for (int i = 0; i < CUDA_LAUNCH_ARG_WORDS && i < n; i++) {
		__u64 at = slots[i] - lo;

		if (at > ARG_SPAN_BYTES - 8)
			return false;
		__builtin_memcpy(&l->args[i], &span[at], sizeof(l->args[i]));
	}
	return true;
}

static __always_inline void read_kernel_args(struct cuda_launch_args *l, __u64 params)
{
	__u64 slots[CUDA_LAUNCH_ARG_WORDS] = {};
	__u64 prev = 0, lo = ~0ull, hi = 0;
	int n, words = 0;

	if (!params || !capture_args)
		return;
	n = read_param_slots(params, slots);
	for (int i = 0; i < CUDA_LAUNCH_ARG_WORDS && i < n; i++) {
		if (!plausible_slot(slots[i], prev))
			break;
		lo = slots[i] < lo ? slots[i] : lo;
		hi = slots[i] > hi ? slots[i] : hi;
		prev = slots[i];
		words = i + 1;
	}
	if (!words)
		return;
	l->arg_words = words;
	if (read_arg_span(l, slots, words, lo, hi))
		return;
	for (int i = 0; i < CUDA_LAUNCH_ARG_WORDS && i < words; i++)
		l->args[i] = read_arg_word(slots[i]);
}

/* ---- return side ---- */

/* The returning call's key in `calls`. */
static __always_inline struct cuda_call_key return_key(struct pt_regs *ctx)
{
	return (struct cuda_call_key){bpf_get_current_pid_tgid(), entry_sp_at_return(ctx)};
}

/* This thread's saved entry, when it belongs to the call that is returning. */
static __always_inline struct cuda_event *pending_call(struct pt_regs *ctx,
						       const struct cuda_call_key *key)
{
	struct cuda_event *saved = bpf_map_lookup_elem(&calls, key);

	if (!saved || saved->api != (bpf_get_attach_cookie(ctx) & CUDA_COOKIE_API_MASK))
		return NULL;
	return saved;
}

/*
 * A copy of a saved entry in a ring buffer slot of size bytes, with the
 * return values. NULL (and a counted drop) when the ring buffer is full.
 */
static __always_inline struct cuda_event *event_from_saved(struct pt_regs *ctx,
							   const struct cuda_event *saved,
							   __u64 now, const __u32 size)
{
	struct cuda_event *ev = bpf_ringbuf_reserve(&events, size, 0);

	if (!ev) {
		count_dropped_event();
		return NULL;
	}
	__builtin_memcpy(ev, saved, sizeof(*ev));
	ev->return_ns = now;
	ev->ret = (__s32)PT_REGS_RC(ctx);
	return ev;
}

/*
 * Whether the event carries a stack this process has not sent before. User
 * space symbolizes stacks with the memory map it reads from /proc while the
 * process runs; a program that exits before the next drain tick would leave
 * its stacks as bare addresses. Such an event wakes the reader at once: a new
 * stack of a process is rare (allocation sites), so this costs little. The
 * frames are told apart by a digest of the call site and its callers: two
 * stacks sharing one only lose the early wake, not their frames.
 */
static __always_inline bool new_stack(const struct cuda_stack_event *se)
{
	__u64 key, digest;
	__u8 one = 1;

	if (se->event.stack_id <= 0)
		return false;
	digest = se->ips[1] ^ (se->ips[2] << 7) ^ (se->ips[3] << 13) ^ (se->ips[4] << 19);
	key = ((__u64)se->event.pid << 32) | (__u32)(digest ^ digest >> 32);
	if (bpf_map_lookup_elem(&stacks_sent, &key))
		return false;
	bpf_map_update_elem(&stacks_sent, &key, &one, BPF_ANY);
	return true;
}

/*
 * A saved entry's event: with the frames its entry walked when it has them
 * (a cuda_stack_event), else a plain one.
 */
static __always_inline struct cuda_event *event_with_stack(struct pt_regs *ctx,
							   const struct cuda_event *saved, __u64 now)
{
	struct cuda_stack_event *se;
	struct cuda_call_stack *st;

	if (saved->stack_id <= 0)
		return event_from_saved(ctx, saved, now, sizeof(struct cuda_event));
	se = (void *)event_from_saved(ctx, saved, now, sizeof(*se));
	if (!se)
		return NULL;
	st = bpf_task_storage_get(&call_stacks, bpf_get_current_task_btf(), 0, 0);
	if (st) {
		__u64 sp = entry_sp_at_return(ctx);

		for (int i = 0; i < CALL_STACK_SLOTS; i++)
			if (st->slot[i].sp == sp) {
				__builtin_memcpy(se->ips, st->slot[i].ips, sizeof(se->ips));
				st->slot[i].sp = 0;
				if (new_stack(se))
					se->event.flags |= CUDA_EVENT_NEW_STACK;
				return &se->event;
			}
	}
	se->event.stack_id = -1;
	se->event.flags |= CUDA_EVENT_STACK_LOST;
	return &se->event;
}

/* The returning call's event from the per-thread table, which lets go of it. */
static __always_inline struct cuda_event *event_from_call(struct pt_regs *ctx, __u64 now,
							  const __u32 size)
{
	struct cuda_call_key key = return_key(ctx);
	struct cuda_event *saved = pending_call(ctx, &key);
	struct cuda_event *ev;

	if (!saved)
		return NULL;
	ev = event_from_saved(ctx, saved, now, size);
	bpf_map_delete_elem(&calls, &key);
	return ev;
}

static __always_inline void event_submit(void *ev)
{
	__u64 queued = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	bool wake = queued >= wakeup_bytes || ((struct cuda_event *)ev)->flags & CUDA_EVENT_NEW_STACK;

	bpf_ringbuf_submit(ev, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

static __always_inline void read_text(struct cuda_text_event *t, __u64 str)
{
	long n = str ? bpf_probe_read_user_str(t->text, sizeof(t->text), (void *)str) : 0;

	t->event.text_len = n > 0 ? n : 0;
}

static __always_inline int finish_plain(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct cuda_event *ev = event_from_call(ctx, now, sizeof(*ev));

	if (ev)
		event_submit(ev);
	return 0;
}

/* Allocations: the address (and pitch) the call wrote through its out pointers. */
static __always_inline int finish_alloc(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct cuda_call_key key = return_key(ctx);
	struct cuda_event *saved = pending_call(ctx, &key);
	struct cuda_event *ev;

	if (!saved)
		return 0;
	ev = event_with_stack(ctx, saved, now);
	bpf_map_delete_elem(&calls, &key);
	if (!ev)
		return 0;
	ev->args.alloc.addr = read_user_u64(ev->args.alloc.out);
	ev->args.alloc.pitch = read_user_u64(ev->args.alloc.pitch_out);
	event_submit(ev);
	return 0;
}

/* Module and library loads: the handle written through out, and the file name if any. */
static __always_inline int finish_module(struct pt_regs *ctx, const bool has_path)
{
	__u64 now = bpf_ktime_get_ns();
	struct cuda_text_event *t;
	struct cuda_event *ev;

	if (!has_path) {
		ev = event_from_call(ctx, now, sizeof(*ev));
		if (!ev)
			return 0;
		ev->args.module.module = read_user_u64(ev->args.module.out);
		event_submit(ev);
		return 0;
	}
	t = (void *)event_from_call(ctx, now, sizeof(*t));
	if (!t)
		return 0;
	t->event.args.module.module = read_user_u64(t->event.args.module.out);
	read_text(t, t->event.args.module.path);
	event_submit(t);
	return 0;
}

enum name_source {
	NAME_NONE, /* cuKernelGetFunction: user space knows the kernel's name */
	NAME_ARG,  /* name argument, handle written through out */
	NAME_OUT,  /* cuFuncGetName: the name pointer is written through out */
};

static __always_inline int finish_name(struct pt_regs *ctx, const enum name_source source)
{
	__u64 now = bpf_ktime_get_ns();
	struct cuda_text_event *t;
	struct cuda_event *ev;

	if (source == NAME_NONE) {
		ev = event_from_call(ctx, now, sizeof(*ev));
		if (!ev)
			return 0;
		ev->args.name.handle = read_user_u64(ev->args.name.out);
		event_submit(ev);
		return 0;
	}
	t = (void *)event_from_call(ctx, now, sizeof(*t));
	if (!t)
		return 0;
	if (source == NAME_ARG)
		t->event.args.name.handle = read_user_u64(t->event.args.name.out);
	else
		t->event.args.name.name = read_user_u64(t->event.args.name.out);
	read_text(t, t->event.args.name.name);
	event_submit(t);
	return 0;
}

/*
 * One program pair per probe class of GRT_CUDA_API_LIST, named
 * enter_<class>/exit_<class>; cuda.c attaches them per symbol with the api
 * id as the cookie. The launch classes have a third, session_<class>, that
 * does both ends on kernels with uprobe sessions.
 */
#define ENTER(cls) SEC("uprobe") int enter_##cls(struct pt_regs *ctx)
#define EXIT(cls) SEC("uretprobe") int exit_##cls(struct pt_regs *ctx)

/* ---- launches ---- */

/*
 * record --launch-returns N: the return of one launch in N is recorded, per
 * thread (its 1st, N+1st, 2N+1st... launch), 0: none. A launch whose return
 * is not recorded is sent at its entry. Values other than 0 and 1 need the
 * session programs: only they can skip a return (cuda.c checks).
 */
const volatile __u32 launch_return_every = 1;

/*
 * Per thread, for the launch classes: the launch in flight and the sampling
 * countdown (struct cuda_launch_slot). Task storage rather than the `calls`
 * table: a lookup is a pointer off the task, with no hashing, LRU lists or
 * copy in and out, which were a fifth of a traced thread's time in a launch
 * storm. Per thread rather than per CPU so that the countdown samples each
 * thread's launches evenly wherever it runs, and a single-threaded program
 * gets an exact count.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cuda_launch_slot);
} launch_slots SEC(".maps");

/* kernel 6.13+; the session programs are not loaded where it is missing */
extern bool bpf_session_is_return(void) __ksym __weak;

static __always_inline struct cuda_launch_slot *launch_slot(bool create)
{
	return bpf_task_storage_get(&launch_slots, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* Whether this launch's return is recorded: the thread's 1st, N+1st, 2N+1st... */
static __always_inline bool launch_return_sampled(struct cuda_launch_slot *slot)
{
	if (launch_return_every <= 1)
		return launch_return_every == 1;
	if (slot->to_skip) {
		slot->to_skip -= 1;
		return false;
	}
	slot->to_skip = launch_return_every - 1;
	return true;
}

enum launch_kind {
	LAUNCH_KERNEL, /* cuLaunchKernel, cuLaunchCooperativeKernel */
	LAUNCH_KERNEL_EX,
	LAUNCH_GRAPH,
};

/* cuLaunchCooperativeKernel shares cuLaunchKernel's first ten arguments. */
static __always_inline void launch_kernel_args(struct pt_regs *ctx, struct cuda_launch_args *l)
{
	struct launch_stack_args more = {};

	bpf_probe_read_user(&more, sizeof(more), stack_args(ctx));
	l->function = ARG1(ctx);
	l->grid[0] = ARG2(ctx);
	l->grid[1] = ARG3(ctx);
	l->grid[2] = ARG4(ctx);
	l->block[0] = ARG5(ctx);
	l->block[1] = ARG6(ctx);
	l->block[2] = more.block_z;
	l->shared_mem = more.shared_mem;
	l->stream = more.stream;
	read_kernel_args(l, more.params);
}

/* cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra) */
static __always_inline void launch_kernel_ex_args(struct pt_regs *ctx, struct cuda_launch_args *l)
{
	struct cu_launch_config cfg = {};

	bpf_probe_read_user(&cfg, sizeof(cfg), (void *)ARG1(ctx));
	l->function = ARG2(ctx);
	__builtin_memcpy(l->grid, cfg.grid, sizeof(l->grid));
	__builtin_memcpy(l->block, cfg.block, sizeof(l->block));
	l->shared_mem = cfg.shared_mem;
	l->stream = cfg.stream;
	read_kernel_args(l, ARG3(ctx));
}

static __always_inline void launch_args(struct pt_regs *ctx, struct cuda_event *ev,
					const enum launch_kind kind)
{
	if (kind == LAUNCH_KERNEL) {
		launch_kernel_args(ctx, &ev->args.launch);
	} else if (kind == LAUNCH_KERNEL_EX) {
		launch_kernel_ex_args(ctx, &ev->args.launch);
	} else {
		/* cuGraphLaunch(CUgraphExec exec, CUstream stream) */
		ev->args.graph.graph_exec = ARG1(ctx);
		ev->args.graph.stream = ARG2(ctx);
	}
}

/*
 * A launch's entry, whichever program probes it: kept for the return when
 * the return is sampled, else sent now and flagged. Returns whether the
 * return is wanted.
 */
static __always_inline bool launch_entry(struct pt_regs *ctx, const enum launch_kind kind)
{
	struct cuda_stack_event *se = NULL;
	struct cuda_launch_slot *slot;
	struct cuda_event *ev;

	if (!call_traced())
		return false;
	/* no slot (out of memory): the launch goes out now, without its return */
	slot = launch_return_every ? launch_slot(true) : NULL;
	/* so does a launch inside one in flight (entered higher up the stack), which keeps the slot */
	if (slot && slot->in_flight && slot->sp > entry_sp(ctx))
		slot = NULL;
	if (slot && launch_return_sampled(slot)) {
		call_fill(ctx, &slot->ev, capture_launch_stacks);
		launch_args(ctx, &slot->ev, kind);
		slot->sp = entry_sp(ctx);
		slot->in_flight = 1;
		return true;
	}
	/* built in place: no copy through the stack */
	if (capture_launch_stacks && capture_stacks) {
		se = bpf_ringbuf_reserve(&events, sizeof(*se), 0);
		ev = se ? &se->event : NULL;
	} else {
		ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	}
	if (!ev) {
		count_dropped_event();
		return false;
	}
	call_fill(ctx, ev, false);
	if (se) {
		take_stack(ctx, ev, se->ips);
		if (new_stack(se))
			ev->flags |= CUDA_EVENT_NEW_STACK;
	}
	launch_args(ctx, ev, kind);
	ev->flags |= CUDA_EVENT_RETURN_UNSAMPLED;
	event_submit(ev);
	return false;
}

/* A launch's return, whichever program probes it: its saved entry goes out with the result. */
static __always_inline int launch_exit(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct cuda_launch_slot *slot = launch_slot(false);
	struct cuda_event *ev;

	if (!slot || !slot->in_flight || slot->sp != entry_sp_at_return(ctx) ||
	    slot->ev.api != (bpf_get_attach_cookie(ctx) & CUDA_COOKIE_API_MASK))
		return 0;
	slot->in_flight = 0;
	ev = event_with_stack(ctx, &slot->ev, now);
	if (ev)
		event_submit(ev);
	return 0;
}

/*
 * A launch class's uprobe session program: at the entry, returning 1 tells
 * the kernel not to hijack the return at all, so an unsampled launch costs
 * one trap.
 */
static __always_inline int launch_session(struct pt_regs *ctx, const enum launch_kind kind)
{
	if (bpf_session_is_return())
		return launch_exit(ctx);
	return launch_entry(ctx, kind) ? 0 : 1;
}

#define SESSION(cls) SEC("uprobe") int session_##cls(struct pt_regs *ctx)

/* A launch class's three programs: entry and return probes, or one session program. */
#define LAUNCH_PROGRAMS(cls, kind)                                                                 \
	ENTER(cls)                                                                                 \
	{                                                                                          \
		launch_entry(ctx, kind);                                                           \
		return 0;                                                                          \
	}                                                                                          \
	EXIT(cls)                                                                                  \
	{                                                                                          \
		return launch_exit(ctx);                                                           \
	}                                                                                          \
	SESSION(cls)                                                                               \
	{                                                                                          \
		return launch_session(ctx, kind);                                                  \
	}

LAUNCH_PROGRAMS(launch, LAUNCH_KERNEL)
LAUNCH_PROGRAMS(launch_ex, LAUNCH_KERNEL_EX)
LAUNCH_PROGRAMS(graph_launch, LAUNCH_GRAPH)

/* ---- allocations and frees ---- */

/* (out, bytesize[, ...]); the stream argument's position varies */
static __always_inline int save_alloc(struct pt_regs *ctx, __u64 stream)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, true))
		return 0;
	ev.args.alloc.out = ARG1(ctx);
	ev.args.alloc.bytes = ARG2(ctx);
	ev.args.alloc.stream = stream;
	return call_save(ctx, &ev);
}

/* cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) */
ENTER(mem_alloc)
{
	return save_alloc(ctx, 0);
}
EXIT(mem_alloc)
{
	return finish_alloc(ctx);
}
/* cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream) */
ENTER(mem_alloc_async)
{
	return save_alloc(ctx, ARG3(ctx));
}
EXIT(mem_alloc_async)
{
	return finish_alloc(ctx);
}
/* cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned flags) */
ENTER(mem_alloc_managed)
{
	return save_alloc(ctx, 0);
}
EXIT(mem_alloc_managed)
{
	return finish_alloc(ctx);
}
/* cuMemAllocHost(void **pp, size_t bytesize) */
ENTER(mem_alloc_host)
{
	return save_alloc(ctx, 0);
}
EXIT(mem_alloc_host)
{
	return finish_alloc(ctx);
}
/* cuMemHostAlloc(void **pp, size_t bytesize, unsigned flags) */
ENTER(mem_host_alloc)
{
	return save_alloc(ctx, 0);
}
EXIT(mem_host_alloc)
{
	return finish_alloc(ctx);
}
/* cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream)
 */
ENTER(mem_alloc_from_pool_async)
{
	return save_alloc(ctx, ARG4(ctx));
}
EXIT(mem_alloc_from_pool_async)
{
	return finish_alloc(ctx);
}

/* cuMemAllocPitch(CUdeviceptr *dptr, size_t *pPitch, size_t width, size_t height, unsigned elem) */
ENTER(mem_alloc_pitch)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, true))
		return 0;
	ev.args.alloc.out = ARG1(ctx);
	ev.args.alloc.pitch_out = ARG2(ctx);
	ev.args.alloc.bytes = ARG4(ctx);
	return call_save(ctx, &ev);
}
EXIT(mem_alloc_pitch)
{
	return finish_alloc(ctx);
}

static __always_inline int save_free(struct pt_regs *ctx, __u64 stream)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.free.addr = ARG1(ctx);
	ev.args.free.stream = stream;
	return call_save(ctx, &ev);
}

/* cuMemFree(CUdeviceptr), cuMemFreeAsync(CUdeviceptr, CUstream), cuMemFreeHost(void *) */
ENTER(mem_free)
{
	return save_free(ctx, 0);
}
EXIT(mem_free)
{
	return finish_plain(ctx);
}
ENTER(mem_free_async)
{
	return save_free(ctx, ARG2(ctx));
}
EXIT(mem_free_async)
{
	return finish_plain(ctx);
}
ENTER(mem_free_host)
{
	return save_free(ctx, 0);
}
EXIT(mem_free_host)
{
	return finish_plain(ctx);
}

/* ---- copies ---- */

/* (dst, src, bytes[, stream]): cuMemcpy, cuMemcpyHtoD/DtoH/DtoD and their Async forms */
static __always_inline int save_copy(struct pt_regs *ctx, bool has_stream)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.copy.dst = ARG1(ctx);
	ev.args.copy.src = ARG2(ctx);
	ev.args.copy.bytes = ARG3(ctx);
	ev.args.copy.stream = has_stream ? ARG4(ctx) : 0;
	ev.args.copy.dims = 1;
	return call_save(ctx, &ev);
}

ENTER(memcpy)
{
	return save_copy(ctx, false);
}
EXIT(memcpy)
{
	return finish_plain(ctx);
}
ENTER(memcpy_async)
{
	return save_copy(ctx, true);
}
EXIT(memcpy_async)
{
	return finish_plain(ctx);
}
ENTER(memcpy_htod)
{
	return save_copy(ctx, false);
}
EXIT(memcpy_htod)
{
	return finish_plain(ctx);
}
ENTER(memcpy_dtoh)
{
	return save_copy(ctx, false);
}
EXIT(memcpy_dtoh)
{
	return finish_plain(ctx);
}
ENTER(memcpy_dtod)
{
	return save_copy(ctx, false);
}
EXIT(memcpy_dtod)
{
	return finish_plain(ctx);
}
ENTER(memcpy_htod_async)
{
	return save_copy(ctx, true);
}
EXIT(memcpy_htod_async)
{
	return finish_plain(ctx);
}
ENTER(memcpy_dtoh_async)
{
	return save_copy(ctx, true);
}
EXIT(memcpy_dtoh_async)
{
	return finish_plain(ctx);
}
ENTER(memcpy_dtod_async)
{
	return save_copy(ctx, true);
}
EXIT(memcpy_dtod_async)
{
	return finish_plain(ctx);
}

/* cuMemcpyPeer(dst, dstCtx, src, srcCtx, bytes[, stream]) */
static __always_inline int save_copy_peer(struct pt_regs *ctx, bool has_stream)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.copy.dst = ARG1(ctx);
	ev.args.copy.dst_ctx = ARG2(ctx);
	ev.args.copy.src = ARG3(ctx);
	ev.args.copy.src_ctx = ARG4(ctx);
	ev.args.copy.bytes = ARG5(ctx);
	ev.args.copy.stream = has_stream ? ARG6(ctx) : 0;
	ev.args.copy.dims = 1;
	return call_save(ctx, &ev);
}

ENTER(memcpy_peer)
{
	return save_copy_peer(ctx, false);
}
EXIT(memcpy_peer)
{
	return finish_plain(ctx);
}
ENTER(memcpy_peer_async)
{
	return save_copy_peer(ctx, true);
}
EXIT(memcpy_peer_async)
{
	return finish_plain(ctx);
}

/* cuMemcpy2D*(const CUDA_MEMCPY2D *p[, stream]); pre-3.2 layouts are not decoded */
static __always_inline int save_copy_2d(struct pt_regs *ctx, bool has_stream)
{
	struct cu_memcpy2d p = {};
	struct cuda_event ev;
	struct cuda_copy_args *c = &ev.args.copy;

	if (!call_begin(ctx, &ev, false))
		return 0;
	c->dims = 2;
	c->stream = has_stream ? ARG2(ctx) : 0;
	if (!(ev.flags & CUDA_EVENT_LEGACY32) &&
	    !bpf_probe_read_user(&p, sizeof(p), (void *)ARG1(ctx))) {
		c->src = copy_side_start(p.src.memory_type, p.src.host, p.src.device, p.src.array,
					 p.src.y * p.src.pitch + p.src.x_bytes);
		c->dst = copy_side_start(p.dst.memory_type, p.dst.host, p.dst.device, p.dst.array,
					 p.dst.y * p.dst.pitch + p.dst.x_bytes);
		c->src_type = p.src.memory_type;
		c->dst_type = p.dst.memory_type;
		c->bytes = p.width_bytes * p.height;
	}
	return call_save(ctx, &ev);
}

ENTER(memcpy_2d)
{
	return save_copy_2d(ctx, false);
}
EXIT(memcpy_2d)
{
	return finish_plain(ctx);
}
ENTER(memcpy_2d_async)
{
	return save_copy_2d(ctx, true);
}
EXIT(memcpy_2d_async)
{
	return finish_plain(ctx);
}

/* cuMemcpy3D*(const CUDA_MEMCPY3D *p[, stream]) */
static __always_inline int save_copy_3d(struct pt_regs *ctx, bool has_stream)
{
	struct cu_memcpy3d p = {};
	struct cuda_event ev;
	struct cuda_copy_args *c = &ev.args.copy;

	if (!call_begin(ctx, &ev, false))
		return 0;
	c->dims = 3;
	c->stream = has_stream ? ARG2(ctx) : 0;
	if (!(ev.flags & CUDA_EVENT_LEGACY32) &&
	    !bpf_probe_read_user(&p, sizeof(p), (void *)ARG1(ctx))) {
		c->src = copy_side_start(p.src.memory_type, p.src.host, p.src.device, p.src.array,
					 copy3d_offset(&p.src));
		c->dst = copy_side_start(p.dst.memory_type, p.dst.host, p.dst.device, p.dst.array,
					 copy3d_offset(&p.dst));
		c->src_type = p.src.memory_type;
		c->dst_type = p.dst.memory_type;
		c->bytes = p.width_bytes * p.height * p.depth;
	}
	return call_save(ctx, &ev);
}

ENTER(memcpy_3d)
{
	return save_copy_3d(ctx, false);
}
EXIT(memcpy_3d)
{
	return finish_plain(ctx);
}
ENTER(memcpy_3d_async)
{
	return save_copy_3d(ctx, true);
}
EXIT(memcpy_3d_async)
{
	return finish_plain(ctx);
}

/* ---- memsets: cuMemsetD8/16/32[Async](dst, value, count[, stream]) ---- */

static __always_inline int save_memset(struct pt_regs *ctx, bool has_stream)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.memset.dst = ARG1(ctx);
	ev.args.memset.value = ARG2(ctx);
	ev.args.memset.count = ARG3(ctx);
	ev.args.memset.stream = has_stream ? ARG4(ctx) : 0;
	return call_save(ctx, &ev);
}

ENTER(memset_d8)
{
	return save_memset(ctx, false);
}
EXIT(memset_d8)
{
	return finish_plain(ctx);
}
ENTER(memset_d16)
{
	return save_memset(ctx, false);
}
EXIT(memset_d16)
{
	return finish_plain(ctx);
}
ENTER(memset_d32)
{
	return save_memset(ctx, false);
}
EXIT(memset_d32)
{
	return finish_plain(ctx);
}
ENTER(memset_d8_async)
{
	return save_memset(ctx, true);
}
EXIT(memset_d8_async)
{
	return finish_plain(ctx);
}
ENTER(memset_d16_async)
{
	return save_memset(ctx, true);
}
EXIT(memset_d16_async)
{
	return finish_plain(ctx);
}
ENTER(memset_d32_async)
{
	return save_memset(ctx, true);
}
EXIT(memset_d32_async)
{
	return finish_plain(ctx);
}

/* ---- synchronisation ---- */

static __always_inline int save_sync(struct pt_regs *ctx, __u64 stream, __u64 event)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.sync.stream = stream;
	ev.args.sync.event = event;
	return call_save(ctx, &ev);
}

/* cuCtxSynchronize(void), cuCtxSynchronize_v2(CUcontext) */
ENTER(ctx_synchronize)
{
	return save_sync(ctx, 0, 0);
}
EXIT(ctx_synchronize)
{
	return finish_plain(ctx);
}
/* cuStreamSynchronize(CUstream) */
ENTER(stream_synchronize)
{
	return save_sync(ctx, ARG1(ctx), 0);
}
EXIT(stream_synchronize)
{
	return finish_plain(ctx);
}
/* cuEventSynchronize(CUevent) */
ENTER(event_synchronize)
{
	return save_sync(ctx, 0, ARG1(ctx));
}
EXIT(event_synchronize)
{
	return finish_plain(ctx);
}
/* cuStreamWaitEvent(CUstream, CUevent, unsigned flags) */
ENTER(stream_wait_event)
{
	return save_sync(ctx, ARG1(ctx), ARG2(ctx));
}
EXIT(stream_wait_event)
{
	return finish_plain(ctx);
}
/* cuEventRecord(CUevent, CUstream), cuEventRecordWithFlags(CUevent, CUstream, unsigned) */
ENTER(event_record)
{
	return save_sync(ctx, ARG2(ctx), ARG1(ctx));
}
EXIT(event_record)
{
	return finish_plain(ctx);
}
/* cuEventQuery(CUevent) */
ENTER(event_query)
{
	return save_sync(ctx, 0, ARG1(ctx));
}
EXIT(event_query)
{
	return finish_plain(ctx);
}
/* cuStreamQuery(CUstream) */
ENTER(stream_query)
{
	return save_sync(ctx, ARG1(ctx), 0);
}
EXIT(stream_query)
{
	return finish_plain(ctx);
}

/* ---- modules and libraries ---- */

/* (out, image-or-path, ...): every load; the second argument's meaning is the class's */
static __always_inline int save_module_load(struct pt_regs *ctx, bool is_path)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.module.out = ARG1(ctx);
	if (is_path)
		ev.args.module.path = ARG2(ctx);
	else
		ev.args.module.image = ARG2(ctx);
	return call_save(ctx, &ev);
}

static __always_inline int save_module_unload(struct pt_regs *ctx)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.module.module = ARG1(ctx);
	return call_save(ctx, &ev);
}

/* cuModuleLoad(CUmodule *, const char *fname) */
ENTER(module_load)
{
	return save_module_load(ctx, true);
}
EXIT(module_load)
{
	return finish_module(ctx, true);
}
/* cuModuleLoadData(CUmodule *, const void *image), cuModuleLoadDataEx(same, options...) */
ENTER(module_load_data)
{
	return save_module_load(ctx, false);
}
EXIT(module_load_data)
{
	return finish_module(ctx, false);
}
/* cuModuleLoadFatBinary(CUmodule *, const void *fatCubin) */
ENTER(module_load_fat_binary)
{
	return save_module_load(ctx, false);
}
EXIT(module_load_fat_binary)
{
	return finish_module(ctx, false);
}
/* cuModuleUnload(CUmodule) */
ENTER(module_unload)
{
	return save_module_unload(ctx);
}
EXIT(module_unload)
{
	return finish_plain(ctx);
}
/* cuLibraryLoadData(CUlibrary *, const void *code, ...) */
ENTER(library_load_data)
{
	return save_module_load(ctx, false);
}
EXIT(library_load_data)
{
	return finish_module(ctx, false);
}
/* cuLibraryLoadFromFile(CUlibrary *, const char *fileName, ...) */
ENTER(library_load_from_file)
{
	return save_module_load(ctx, true);
}
EXIT(library_load_from_file)
{
	return finish_module(ctx, true);
}
/* cuLibraryUnload(CUlibrary) */
ENTER(library_unload)
{
	return save_module_unload(ctx);
}
EXIT(library_unload)
{
	return finish_plain(ctx);
}

/* ---- handle -> name ---- */

/* (out, module-or-kernel[, name]) */
static __always_inline int save_get_handle(struct pt_regs *ctx, bool has_name)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.name.out = ARG1(ctx);
	ev.args.name.module = ARG2(ctx);
	if (has_name)
		ev.args.name.name = ARG3(ctx);
	return call_save(ctx, &ev);
}

/* cuModuleGetFunction(CUfunction *, CUmodule, const char *name) */
ENTER(module_get_function)
{
	return save_get_handle(ctx, true);
}
EXIT(module_get_function)
{
	return finish_name(ctx, NAME_ARG);
}
/* cuLibraryGetKernel(CUkernel *, CUlibrary, const char *name) */
ENTER(library_get_kernel)
{
	return save_get_handle(ctx, true);
}
EXIT(library_get_kernel)
{
	return finish_name(ctx, NAME_ARG);
}
/* cuKernelGetFunction(CUfunction *, CUkernel) */
ENTER(kernel_get_function)
{
	return save_get_handle(ctx, false);
}
EXIT(kernel_get_function)
{
	return finish_name(ctx, NAME_NONE);
}

/* cuFuncGetName(const char **name, CUfunction hfunc) */
ENTER(func_get_name)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.name.out = ARG1(ctx);
	ev.args.name.handle = ARG2(ctx);
	return call_save(ctx, &ev);
}
EXIT(func_get_name)
{
	return finish_name(ctx, NAME_OUT);
}

/* ---- contexts and devices: which device each later call of a thread goes to ---- */

static __always_inline int save_context(struct pt_regs *ctx, __u64 out, __u64 context,
					__s32 device)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.context.out = out;
	ev.args.context.ctx = context;
	ev.args.context.device = device;
	return call_save(ctx, &ev);
}

/* Calls that write the context through out: it is read at their return. */
static __always_inline int finish_context(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct cuda_event *ev = event_from_call(ctx, now, sizeof(*ev));

	if (!ev)
		return 0;
	if (ev->args.context.out)
		ev->args.context.ctx = read_user_u64(ev->args.context.out);
	event_submit(ev);
	return 0;
}

/* cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) */
ENTER(ctx_create)
{
	return save_context(ctx, ARG1(ctx), 0, (__s32)ARG3(ctx));
}
EXIT(ctx_create)
{
	return finish_context(ctx);
}
/* cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev) */
ENTER(ctx_create_v4)
{
	return save_context(ctx, ARG1(ctx), 0, (__s32)ARG4(ctx));
}
EXIT(ctx_create_v4)
{
	return finish_context(ctx);
}
/* cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) */
ENTER(ctx_retain)
{
	return save_context(ctx, ARG1(ctx), 0, (__s32)ARG2(ctx));
}
EXIT(ctx_retain)
{
	return finish_context(ctx);
}
/* cuCtxSetCurrent(CUcontext ctx) */
ENTER(ctx_set_current)
{
	return save_context(ctx, 0, ARG1(ctx), -1);
}
EXIT(ctx_set_current)
{
	return finish_plain(ctx);
}
/* cuCtxPushCurrent(CUcontext ctx) */
ENTER(ctx_push_current)
{
	return save_context(ctx, 0, ARG1(ctx), -1);
}
EXIT(ctx_push_current)
{
	return finish_plain(ctx);
}
/* cuCtxPopCurrent(CUcontext *pctx): pctx may be NULL */
ENTER(ctx_pop_current)
{
	return save_context(ctx, ARG1(ctx), 0, -1);
}
EXIT(ctx_pop_current)
{
	return finish_context(ctx);
}

static __always_inline int save_device_query(struct pt_regs *ctx, __u64 out, __s32 device)
{
	struct cuda_event ev;

	if (!call_begin(ctx, &ev, false))
		return 0;
	ev.args.device.out = out;
	ev.args.device.device = device;
	return call_save(ctx, &ev);
}

/* cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev): the string, read at return */
ENTER(device_pci_bus_id)
{
	return save_device_query(ctx, ARG1(ctx), (__s32)ARG3(ctx));
}
EXIT(device_pci_bus_id)
{
	__u64 now = bpf_ktime_get_ns();
	struct cuda_text_event *t;

	t = (void *)event_from_call(ctx, now, sizeof(*t));
	if (!t)
		return 0;
	if (!t->event.ret)
		read_text(t, t->event.args.device.out);
	event_submit(t);
	return 0;
}
/* cuDeviceGetUuid(CUuuid *uuid, CUdevice dev), and its _v2 */
ENTER(device_uuid)
{
	return save_device_query(ctx, ARG1(ctx), (__s32)ARG2(ctx));
}
EXIT(device_uuid)
{
	__u64 now = bpf_ktime_get_ns();
	struct cuda_event *ev = event_from_call(ctx, now, sizeof(*ev));

	if (!ev)
		return 0;
	if (!ev->ret && !bpf_probe_read_user(ev->args.device.uuid, sizeof(ev->args.device.uuid),
					     (void *)ev->args.device.out))
		ev->args.device.has_uuid = 1;
	event_submit(ev);
	return 0;
}
