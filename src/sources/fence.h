/* Event shared by fence.bpf.c and fence.c: one dma_fence tracepoint hit. */
#ifndef GRT_FENCE_H
#define GRT_FENCE_H

#define FENCE_NAME_LEN 32

/* Field offsets of the dma_fence event class, from its format file (rodata). */
struct fence_layout {
	__u32 driver;		/* __data_loc fields */
	__u32 timeline;
	__u32 context;
	__u32 seqno;
	__u32 context_size;	/* 4 or 8 */
	__u32 seqno_size;
};

struct fence_event {
	__u64 ts_ns;
	__u64 context;
	__u64 seqno;
	__u64 wait_ns;
	__u32 kind;		/* enum grt_fence_event */
	__u32 flags;		/* enum grt_fence_flags */
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u32 reserved;
	char driver[FENCE_NAME_LEN];
	char timeline[FENCE_NAME_LEN];
};

struct fence_key {
	__u64 context;
	__u64 seqno;
};

struct fence_wait_key {
	__u64 context;
	__u64 seqno;
	__u32 tid;
	__u32 reserved;
};

#endif
