/* Events shared by sched.bpf.c and sched.c: an off-CPU interval or a wakeup of a traced thread. */
#ifndef GRT_SCHED_H
#define GRT_SCHED_H

enum sched_event_kind {
	SCHED_EV_OFFCPU = 1,
	SCHED_EV_WAKEUP = 2,
};

struct sched_event {
	__u64 ts_ns;		/* offcpu: when the thread left the CPU; wakeup: now */
	__u64 on_cpu_ns;	/* offcpu: when it ran again */
	__u32 kind;		/* enum sched_event_kind */
	__u32 pid;		/* offcpu: the thread's; wakeup: the waker's */
	__u32 tid;
	__u32 cpu;
	__u32 prev_state;	/* offcpu: task state at switch-out */
	__u32 waker_tid;	/* offcpu: who woke it, 0 when unknown */
	__u32 target_pid;	/* wakeup: the woken thread */
	__u32 target_tid;
	__u32 target_cpu;
	__s32 prio;
};

/* Kept per traced thread while it is off the CPU. */
struct sched_offcpu_start {
	__u64 ts_ns;
	__u32 prev_state;
	__u32 pid;
};

#endif
