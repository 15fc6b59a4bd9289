/* Events shared by syscall.bpf.c and syscall.c: one finished syscall, optionally an NVIDIA ioctl. */
#ifndef GRT_SYSCALL_H
#define GRT_SYSCALL_H

#define SYSCALL_DEV_NAME_LEN 32
#define SYSCALL_NV_ARG_BYTES 64
/* 512 syscall numbers, one bit each, in rodata */
#define SYSCALL_SET_WORDS 8

enum syscall_event_flags {
	SYSCALL_EV_NO_RETURN = 1,	/* exit/exit_group, sent at entry */
	SYSCALL_EV_NV = 2,		/* the event is a struct syscall_nv_event */
	SYSCALL_EV_UNFINISHED = 4,	/* built by user space from a leftover entry at stop */
};

struct syscall_event {
	__u64 call_id;
	__u64 enter_ns;
	__u64 exit_ns;
	__u64 args[6];
	__s64 ret;
	__u32 nr;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u32 flags;		/* enum syscall_event_flags */
	__u32 reserved;
};

/* An ioctl on a character device that looks like NVIDIA's, with its argument read after the call. */
struct syscall_nv_event {
	struct syscall_event call;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 inner_cmd;	/* NV_ESC_IOCTL_XFER_CMD: the escape it carries; else 0 */
	__u32 arg_size;		/* the parameter size the call declared (inner size for XFER) */
	__u32 arg_len;		/* bytes of it in arg */
	__s32 arg_err;		/* 0, or the error reading the argument */
	char dev_name[SYSCALL_DEV_NAME_LEN];
	__u8 arg[SYSCALL_NV_ARG_BYTES];
};

/* A syscall in progress: the thread's task-local storage between entry and exit. */
struct syscall_inflight {
	__u64 call_id;
	__u64 enter_ns;
	__u64 args[6];
	__u32 nr;
	__u32 nv;		/* 1: ioctl on an NVIDIA-like device, dev_* valid */
	__u32 dev_major;
	__u32 dev_minor;
	__u32 pid;
	__u32 cpu;
	__u32 active;		/* entered and not yet exited */
	__u32 reserved;
	char dev_name[SYSCALL_DEV_NAME_LEN];
};

#endif
