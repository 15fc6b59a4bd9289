// SPDX-License-Identifier: GPL-2.0
/* Pairs sys_enter/sys_exit of traced processes; ioctls on NVIDIA device files carry their argument. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pid_filter.bpf.h"
#include "drop_counter.bpf.h"
#include "ringbuf_wakeup.bpf.h"
#include "syscall.h"

char LICENSE[] SEC("license") = "GPL";

#define NR_IOCTL 16
#define NR_EXIT 60
#define NR_EXIT_GROUP 231
#define S_IFMT 00170000
#define S_IFCHR 0020000
#define NV_MAJOR 195		/* the NVIDIA driver's fixed character major */
#define NV_IOCTL_MAGIC 'F'
#define NV_ESC_IOCTL_XFER_CMD 211
#define EVENTS_BYTES (8 << 20)

/* rodata, set before load */
const volatile bool filter_syscalls = false;
/* grtrace itself: tracing its own writes of the trace would feed back into itself (system-wide) */
const volatile __u32 recorder_tgid = 0;
const volatile __u64 syscall_set[SYSCALL_SET_WORDS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_BYTES);
} syscall_events SEC(".maps");

/*
 * The syscall each thread is in. Task-local storage: cheaper than a hash
 * keyed by tid, and freed with the thread (a thread killed inside a syscall
 * leaves nothing behind).
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct syscall_inflight);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} call_seq SEC(".maps");

struct xfer_args {
	__u32 cmd;
	__u32 size;
	__u64 ptr;
};

static __always_inline bool syscall_wanted(__u32 nr)
{
	if (!filter_syscalls)
		return true;
	__u32 word = nr / 64;

	/* opaque to clang, so the bound below is checked on the register that indexes */
	asm volatile("" : "+r"(word));
	if (word >= SYSCALL_SET_WORDS)
		return false;
	return (syscall_set[word] >> (nr % 64)) & 1;
}

/* Unique per recording: the CPU in the top bits, a per-CPU sequence below. */
static __always_inline __u64 next_call_id(__u32 cpu)
{
	__u32 zero = 0;
	__u64 *seq = bpf_map_lookup_elem(&call_seq, &zero);

	if (!seq)
		return 0;
	*seq += 1;
	return (__u64)cpu << 48 | *seq;
}

static __always_inline bool name_is_nvidia(const char *name)
{
	return name[0] == 'n' && name[1] == 'v' && name[2] == 'i' && name[3] == 'd' &&
	       name[4] == 'i' && name[5] == 'a';
}

/*
 * Resolves fd in the current task's file table. The decoder keys on what the
 * driver's nodes are: character devices with NVIDIA's major, or named
 * nvidia* (nvidia-uvm has a dynamic major).
 */
static __always_inline bool nv_device_of_fd(__u64 fd, struct syscall_inflight *e)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **files;
	struct file *file = NULL;
	struct inode *inode;
	const unsigned char *name;
	__u32 rdev;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return false;
	files = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &files[fd]) || !file)
		return false;
	inode = BPF_CORE_READ(file, f_inode);
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFCHR)
		return false;
	rdev = BPF_CORE_READ(inode, i_rdev);
	e->dev_major = rdev >> 20;
	e->dev_minor = rdev & 0xfffff;
	name = BPF_CORE_READ(file, f_path.dentry, d_name.name);
	if (bpf_probe_read_kernel_str(e->dev_name, sizeof(e->dev_name), name) < 0)
		e->dev_name[0] = 0;
	return e->dev_major == NV_MAJOR || name_is_nvidia(e->dev_name);
}

/*
 * x86-64 pt_regs keeps the six argument registers in one 64-byte run
 * (r10 r9 r8 ax cx dx si di): one read instead of six.
 */
struct syscall_arg_regs {
	__u64 r10, r9, r8, ax, cx, dx, si, di;
};

static __always_inline void read_args(struct pt_regs *regs, __u64 *args)
{
	struct syscall_arg_regs r;

	if (bpf_probe_read_kernel(&r, sizeof(r), (void *)regs + bpf_core_field_offset(struct pt_regs, r10))) {
		__builtin_memset(args, 0, 6 * sizeof(__u64));
		return;
	}
	args[0] = r.di;
	args[1] = r.si;
	args[2] = r.dx;
	args[3] = r.r10;
	args[4] = r.r8;
	args[5] = r.r9;
}

SEC("raw_tp/sys_enter")
int handle_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u32 nr = (__u32)ctx->args[1];
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	struct syscall_inflight *e;

	if (tgid == recorder_tgid || !tgid_is_traced(tgid) || !syscall_wanted(nr))
		return 0;
	e = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!e) {
		count_dropped_event();
		return 0;
	}
	e->enter_ns = bpf_ktime_get_ns();
	e->nr = nr;
	e->pid = tgid;
	e->cpu = bpf_get_smp_processor_id();
	e->call_id = next_call_id(e->cpu);
	read_args(regs, e->args);
	e->nv = nr == NR_IOCTL && nv_device_of_fd(e->args[0], e);

	if (nr == NR_EXIT || nr == NR_EXIT_GROUP) {
		/* these never reach sys_exit: report them now */
		struct syscall_event *ev = bpf_ringbuf_reserve(&syscall_events, sizeof(*ev), 0);

		if (!ev) {
			count_dropped_event();
			return 0;
		}
		ev->call_id = e->call_id;
		ev->enter_ns = e->enter_ns;
		ev->exit_ns = 0;
		__builtin_memcpy(ev->args, e->args, sizeof(ev->args));
		ev->ret = 0;
		ev->nr = nr;
		ev->pid = tgid;
		ev->tid = tid;
		ev->cpu = e->cpu;
		ev->flags = SYSCALL_EV_NO_RETURN;
		ev->reserved = 0;
		bpf_ringbuf_submit(ev, 0);
		return 0;
	}
	e->active = 1;
	return 0;
}

static __always_inline void fill_call(struct syscall_event *ev, const struct syscall_inflight *e,
				      __u32 tid, __s64 ret, __u64 now, __u32 flags)
{
	ev->call_id = e->call_id;
	ev->enter_ns = e->enter_ns;
	ev->exit_ns = now;
	__builtin_memcpy(ev->args, e->args, sizeof(ev->args));
	ev->ret = ret;
	ev->nr = e->nr;
	ev->pid = e->pid;
	ev->tid = tid;
	ev->cpu = e->cpu;
	ev->flags = flags;
	ev->reserved = 0;
}

/* Reads the ioctl's parameter block after the driver wrote its results (status, new handles) into it. */
static __always_inline void read_nv_argument(struct syscall_nv_event *ev, const struct syscall_inflight *e)
{
	__u32 request = (__u32)e->args[1];
	__u64 ptr = e->args[2];
	__u32 size = (request >> 16) & 0x3fff;
	struct xfer_args xfer;
	__u32 len;

	ev->inner_cmd = 0;
	ev->arg_size = 0;
	ev->arg_len = 0;
	ev->arg_err = 0;
	/* nvidia-uvm's requests are plain numbers with no size: nothing to read */
	if (((request >> 8) & 0xff) != NV_IOCTL_MAGIC)
		return;
	if ((request & 0xff) == NV_ESC_IOCTL_XFER_CMD) {
		ev->arg_err = bpf_probe_read_user(&xfer, sizeof(xfer), (void *)ptr);
		if (ev->arg_err)
			return;
		ev->inner_cmd = xfer.cmd;
		size = xfer.size;
		ptr = xfer.ptr;
	}
	ev->arg_size = size;
	if (size == 0)
		return;
	/*
	 * Fixed sizes keep the verifier simple; a block near the end of a mapping
	 * may not have 64 readable bytes after it, so smaller reads follow.
	 */
	len = SYSCALL_NV_ARG_BYTES;
	ev->arg_err = bpf_probe_read_user(ev->arg, SYSCALL_NV_ARG_BYTES, (void *)ptr);
	if (ev->arg_err && size <= 32) {
		len = 32;
		ev->arg_err = bpf_probe_read_user(ev->arg, 32, (void *)ptr);
	}
	if (ev->arg_err && size <= 16) {
		len = 16;
		ev->arg_err = bpf_probe_read_user(ev->arg, 16, (void *)ptr);
	}
	if (!ev->arg_err)
		ev->arg_len = size < len ? size : len;
}

static __always_inline void emit_nv(const struct syscall_inflight *e, __u32 tid, __s64 ret, __u64 now)
{
	struct syscall_nv_event *ev = bpf_ringbuf_reserve(&syscall_events, sizeof(*ev), 0);

	if (!ev) {
		count_dropped_event();
		return;
	}
	fill_call(&ev->call, e, tid, ret, now, SYSCALL_EV_NV);
	ev->dev_major = e->dev_major;
	ev->dev_minor = e->dev_minor;
	__builtin_memcpy(ev->dev_name, e->dev_name, sizeof(ev->dev_name));
	read_nv_argument(ev, e);
	bpf_ringbuf_submit(ev, 0);
}

SEC("raw_tp/sys_exit")
int handle_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct syscall_inflight *e = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), NULL, 0);
	struct syscall_event *ev;
	__u64 now;

	if (!e || !e->active)
		return 0;
	e->active = 0;
	now = bpf_ktime_get_ns();
	if (e->nv) {
		emit_nv(e, tid, (__s64)ctx->args[1], now);
	} else {
		ev = bpf_ringbuf_reserve(&syscall_events, sizeof(*ev), 0);
		if (ev) {
			fill_call(ev, e, tid, (__s64)ctx->args[1], now, 0);
			bpf_ringbuf_submit(ev, ringbuf_wakeup_flags(&syscall_events, EVENTS_BYTES / 8));
		} else {
			count_dropped_event();
		}
	}
	return 0;
}
