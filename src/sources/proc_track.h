/* Event shared by proc_track.bpf.c and proc_track.c: a traced process started or exited. */
#ifndef GRT_PROC_TRACK_H
#define GRT_PROC_TRACK_H

#define PROC_TRACK_COMM_LEN 16

struct proc_track_event {
	__u64 ts_ns;
	__u32 kind;		/* enum grt_process_event: START or EXIT */
	__u32 pid;		/* tgid */
	__u32 ppid;
	__s32 exit_code;	/* EXIT: the task's exit_code, a wait status (code << 8, or signal | core bit) */
	__u32 cpu;
	__u32 reserved;
	char comm[PROC_TRACK_COMM_LEN];
};

#endif
