/* Maps and events shared by cuda_agg.bpf.c and cuda_agg.c: per-process CUDA counters kept in the kernel.
 */
#ifndef GRT_CUDA_AGG_H
#define GRT_CUDA_AGG_H

/* log2 buckets of API durations in ns: bucket i holds [2^i, 2^(i+1)), the last everything above */
#define AGG_HIST_BUCKETS 40
/* enum grt_alloc_kind and enum grt_copy_kind index these (records_cuda.h) */
#define AGG_ALLOC_KINDS 8
#define AGG_COPY_KINDS 8
#define AGG_COMM_LEN 16
#define AGG_NAME_LEN 256
#define AGG_STACK_DEPTH 32

/*
 * The probe cookie: what the BPF side needs to know of an entry point,
 * computed once in user space from GRT_CUDA_API_LIST.
 */
#define AGG_COOKIE_API(c) ((c) & 0xffffu)
#define AGG_COOKIE_OP(c) (((c) >> 16) & 0xffu)
#define AGG_COOKIE_KIND(c) (((c) >> 24) & 0xffu)
#define AGG_COOKIE_LEGACY32 (1ull << 32)
#define AGG_COOKIE(api, op, kind) ((__u64)(api) | ((__u64)(op) << 16) | ((__u64)(kind) << 24))

/* What the programs do with a call, beyond counting it and timing it. */
enum agg_op {
	AGG_OP_PLAIN,	   /* counted and timed only */
	AGG_OP_LAUNCH,	   /* cuLaunchKernel(f, ...), cuLaunchCooperativeKernel */
	AGG_OP_LAUNCH_EX,  /* cuLaunchKernelEx(config, f, ...) */
	AGG_OP_ALLOC,	   /* (out, bytes, ...); kind: enum grt_alloc_kind */
	AGG_OP_ALLOC_PITCH, /* (out, pitch_out, width, height, elem) */
	AGG_OP_FREE,	   /* (addr, ...) */
	AGG_OP_COPY,	   /* (dst, src, bytes, ...); kind: enum grt_copy_kind */
	AGG_OP_COPY_PEER,  /* (dst, dst_ctx, src, src_ctx, bytes, ...) */
	AGG_OP_COPY_2D,	   /* (const CUDA_MEMCPY2D *, ...) */
	AGG_OP_COPY_3D,	   /* (const CUDA_MEMCPY3D *, ...) */
	AGG_OP_SYNC,	   /* the host waits: ctx/stream/event synchronize */
	AGG_OP_NAME_ARG,   /* (out handle, module, name): cuModuleGetFunction, cuLibraryGetKernel */
	AGG_OP_NAME_ALIAS, /* (out function, kernel): cuKernelGetFunction */
	AGG_OP_NAME_OUT,   /* (const char **name, function): cuFuncGetName */
};

/* Calls, errors and times of one API in one process. */
struct agg_api_key {
	__u32 tgid;
	__u32 api; /* enum grt_cuda_api */
};

struct agg_api_stats {
	__u64 calls;	/* at entry */
	/*
	 * Returns seen: the histogram's count. The programs leave it 0 (one
	 * atomic add fewer per call); cuda_agg_read() sums the histogram into it.
	 */
	__u64 returns;
	__u64 errors;	/* returns with a CUresult other than 0 */
	__u64 duration_ns;
	__u64 hist[AGG_HIST_BUCKETS];
};

/* Launches of one function handle (CUfunction, or a CUkernel in its place) in one process. */
struct agg_launch_key {
	__u32 tgid;
	__u32 reserved;
	__u64 function;
};

/* Everything else of one process. */
struct agg_proc_stats {
	__u64 first_ns;
	/*
	 * In the map: only the launches the per-kernel table had no room for.
	 * The agent adds the per-kernel counts, so a launch costs one counter
	 * update, not two.
	 */
	__u64 launches;
	__u64 sync_wait_ns;
	__u64 untracked_frees; /* frees of addresses the allocation table does not hold */
	__u64 alloc_bytes[AGG_ALLOC_KINDS];
	__u64 in_use_bytes[AGG_ALLOC_KINDS]; /* wraps below 0 only if a free was counted twice */
	__u64 copy_bytes[AGG_COPY_KINDS];
	__u64 copies[AGG_COPY_KINDS];
};

/* A live allocation, for memory in use and for leaks at exit. */
struct agg_alloc_key {
	__u32 tgid;
	__u32 reserved;
	__u64 addr;
};

struct agg_alloc {
	__u64 bytes;
	__u64 stack_key; /* a digest of its user stack's frames (never 0), 0 when none */
	__u32 kind;
	__u32 reserved;
};

/*
 * Calls of one thread timed at once: a call made inside a call (a
 * profiler's CUPTI callback calling the driver on the calling thread)
 * is timed beside the call around it.
 */
#define AGG_NEST 4

/* A call between its entry and its return. */
struct agg_call {
	__u64 sp;	 /* its entry_sp() (its return finds it by entry_sp_at_return()); 0: free */
	__u64 entry_ns;
	__u64 cookie;
	__u64 out;	 /* result pointer (allocations, names) */
	__u64 aux;	 /* pitch pointer, free address, copy bytes, name pointer, kernel */
	__u64 bytes;	 /* allocation bytes (pitch: the height) */
	__s32 stack_depth; /* frames walked into the thread's agg_call_stack; -1 when none */
	__u32 reserved;
};

/* Per thread: its calls in flight, found at their returns by their entry's stack pointer. */
struct agg_call_slot {
	/*
	 * The process this thread was last found counted in (traced, not
	 * grtrace itself, its counters created), and procs_generation then:
	 * while both hold, a call skips those checks' map lookups.
	 */
	__u32 known_tgid;
	__u32 known_generation;
	__u64 stack_sp; /* the call whose entry walked the thread's agg_call_stack */
	struct agg_call calls[AGG_NEST];
};

/* What could not be counted because a map was full: the `losses` per-CPU array's slots. */
enum agg_loss {
	AGG_LOST_API,
	AGG_LOST_LAUNCH,
	AGG_LOST_PROC,
	AGG_LOST_ALLOC,
	AGG_LOST_EVENT,
	AGG_LOST_NESTED, /* a call inside AGG_NEST others of its thread: counted, not timed */
	AGG_LOSSES,
};

/* What the BPF side tells user space through the ring buffer: rare events only. */
enum agg_event_kind {
	AGG_EV_PROCESS = 1, /* first call of a process: read its comm and maps now */
	AGG_EV_EXIT,	    /* the last thread of a seen process exited, or it exec'd */
	AGG_EV_NAME,	    /* handle -> name */
	AGG_EV_ALIAS,	    /* handle -> the name of another handle (cuKernelGetFunction) */
	AGG_EV_STACK,	    /* an allocation's user stack: key in other, frames in name */
};

struct agg_event {
	__u32 kind;
	__u32 tgid;
	__u64 ts_ns;
	__u64 handle;
	__u64 other; /* alias: the kernel handle; stack: its key (agg_alloc.stack_key) */
	char comm[AGG_COMM_LEN];
	__u32 name_len; /* with the NUL, 0 when none; stack: the frames' bytes */
	__u32 reserved;
	char name[AGG_NAME_LEN]; /* stack: AGG_STACK_DEPTH frames, innermost first */
};

_Static_assert(sizeof(struct agg_api_stats) == 32 + 8 * AGG_HIST_BUCKETS, "api stats layout");
_Static_assert(sizeof(struct agg_call) == 56 && sizeof(struct agg_call_slot) == 16 + 56 * AGG_NEST,
	       "call slot layout");
_Static_assert(sizeof(struct agg_event) == 312, "event layout");
_Static_assert(AGG_NAME_LEN == AGG_STACK_DEPTH * 8, "a stack's frames fill an event's name");

#endif
