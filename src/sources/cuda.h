/* Event shared by cuda.bpf.c and cuda.c: one libcuda call, its arguments decoded per probe class.
 */
#ifndef GRT_CUDA_SOURCE_H
#define GRT_CUDA_SOURCE_H

#define CUDA_COMM_LEN 16
#define CUDA_TEXT_LEN 512	/* kernel names, module paths; longer ones are cut */
#define CUDA_LAUNCH_ARG_WORDS 4 /* = GRT_LAUNCH_ARG_WORDS of records_cuda.h */
#define CUDA_STACK_DEPTH 32	/* = GRT_MAX_STACK_DEPTH of records_core.h */

/* The BPF cookie of every probe: the api id, plus flags for the BPF side. */
#define CUDA_COOKIE_API_MASK 0xffffull
#define CUDA_COOKIE_LEGACY32 (1ull << 16)

/* Bits of cuda_event.flags */
enum cuda_event_flags {
	/* a pre-3.2 (v1) entry point: 32-bit device pointers and sizes */
	CUDA_EVENT_LEGACY32 = 1,
	/* the return probe never fired: emitted from the pending table at detach */
	CUDA_EVENT_NO_RETURN = 2,
	/* a launch whose return is not sampled (--launch-returns): sent at entry */
	CUDA_EVENT_RETURN_UNSAMPLED = 4,
	/* a stack was asked for and the kernel could not walk it */
	CUDA_EVENT_STACK_LOST = 8,
	/* the first of its stack in its process: woke the reader (the BPF side's own) */
	CUDA_EVENT_NEW_STACK = 16,
};

/*
 * How a class's arguments land in the event. Fields a class does not have
 * stay 0; "out" fields are the caller's result pointers, dereferenced by the
 * return probe into the field beside them.
 */
struct cuda_launch_args {
	__u64 function; /* CUfunction, or a CUkernel passed in its place */
	__u64 stream;
	__u32 grid[3];
	__u32 block[3];
	__u32 shared_mem;
	__u32 arg_words; /* how many of args were readable */
	__u64 args[CUDA_LAUNCH_ARG_WORDS];
};

struct cuda_graph_args {
	__u64 graph_exec;
	__u64 stream;
};

struct cuda_alloc_args {
	__u64 out;	 /* CUdeviceptr * / void ** */
	__u64 pitch_out; /* cuMemAllocPitch's size_t *pPitch */
	__u64 addr;	 /* *out, read at return */
	__u64 pitch;	 /* *pitch_out, read at return */
	__u64 bytes;	 /* cuMemAllocPitch: its Height (bytes = pitch * Height) */
	__u64 stream;
};

struct cuda_free_args {
	__u64 addr;
	__u64 stream;
};

/* CUmemorytype values of CUDA_MEMCPY2D/3D, 0 for the other copy classes */
struct cuda_copy_args {
	__u64 dst;
	__u64 src;
	__u64 bytes;
	__u64 stream;
	__u8 dst_type;
	__u8 src_type;
	__u8 dims;
	__u8 reserved[5];
	__u64 dst_ctx; /* peer copies: the contexts of the two sides */
	__u64 src_ctx;
};

struct cuda_memset_args {
	__u64 dst;
	__u64 count; /* elements, not bytes */
	__u64 stream;
	__u32 value;
	__u32 reserved;
};

struct cuda_sync_args {
	__u64 stream;
	__u64 event;
};

struct cuda_module_args {
	__u64 out;    /* CUmodule * / CUlibrary *, 0 for unloads */
	__u64 module; /* *out at return, or the unloaded handle */
	__u64 image;  /* *LoadData* image pointer */
	__u64 path;   /* file name pointer, copied into the text at return */
};

struct cuda_name_args {
	__u64 out;    /* CUfunction * / CUkernel * / const char ** */
	__u64 handle; /* *out at return (cuFuncGetName: its hfunc argument) */
	__u64 module; /* CUmodule, CUlibrary or CUkernel the handle comes from */
	__u64 name;   /* name pointer argument (cuFuncGetName: *out) */
};

/* Context calls: the context argument, or the one written through out at return. */
struct cuda_ctx_args {
	__u64 out;    /* CUcontext * of create, retain and pop; 0 otherwise */
	__u64 ctx;
	__s32 device; /* create and retain: the CUdevice argument; -1 otherwise */
	__u32 reserved;
};

/* Device queries: what the driver wrote through out (a bus id string, or a CUuuid). */
struct cuda_device_args {
	__u64 out;
	__s32 device;
	__u32 has_uuid;
	__u8 uuid[16];
};

union cuda_call_args {
	struct cuda_launch_args launch;
	struct cuda_graph_args graph;
	struct cuda_alloc_args alloc;
	struct cuda_free_args free;
	struct cuda_copy_args copy;
	struct cuda_memset_args memset;
	struct cuda_sync_args sync;
	struct cuda_module_args module;
	struct cuda_name_args name;
	struct cuda_ctx_args context;
	struct cuda_device_args device;
};

/*
 * One completed call. The entry probe fills everything up to the arguments
 * and keeps it per thread; the return probe adds return_ns and ret, the
 * values only known then, and sends it. Classes that carry a string send a
 * cuda_text_event instead.
 */
struct cuda_event {
	__u64 entry_ns;
	__u64 return_ns;
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 ppid;
	__u32 cpu;	/* at entry */
	__s32 ret;	/* CUresult */
	__u16 api;	/* enum grt_cuda_api */
	__u16 flags;	/* enum cuda_event_flags */
	__s32 stack_id; /* in a ring: frames that follow (cuda_stack_event); in the decoder: an id */
	__u32 text_len; /* bytes of text used, with the NUL; 0 when none */
	char comm[CUDA_COMM_LEN];
	union cuda_call_args args;
};

struct cuda_text_event {
	struct cuda_event event;
	char text[CUDA_TEXT_LEN];
};

/*
 * A call with its user stack: event.stack_id frames (innermost first) in ips,
 * the rest 0. User space names stacks by their frames (stack_store.h): a
 * kernel stack map would give two stacks whose hashes collide no id at all.
 */
struct cuda_stack_event {
	struct cuda_event event;
	__u64 ips[CUDA_STACK_DEPTH];
};

/*
 * A call in flight in the BPF `calls` table: its thread and the stack pointer
 * it entered with. A driver call made inside another on the same thread (a
 * profiler's CUPTI callback calling an entry point) has an entry of its own,
 * and each return finds its own call's.
 */
struct cuda_call_key {
	__u64 pid_tgid;
	__u64 sp;
};

/*
 * Per thread (BPF task storage), for the launch classes: the launch between
 * its entry and its return, and the --launch-returns countdown.
 */
struct cuda_launch_slot {
	__u32 to_skip;	 /* launches to send without their return before the next kept one */
	__u32 in_flight; /* ev is a launch whose return has not come yet */
	__u64 sp;	 /* the stack pointer it entered with */
	struct cuda_event ev;
};

_Static_assert(sizeof(struct cuda_launch_args) == 80, "launch args layout");
_Static_assert(sizeof(union cuda_call_args) == 80, "call args layout");
_Static_assert(sizeof(struct cuda_event) == 144, "cuda event layout");
_Static_assert(sizeof(struct cuda_launch_slot) == 160, "launch slot layout");

/*
 * The probe classes of GRT_CUDA_API_LIST (records_cuda.h): each has a BPF
 * program pair enter_<class>/exit_<class> in cuda.bpf.c, the class name in
 * lower case; the launch classes also a uprobe session program
 * session_<class>.
 */
enum cuda_probe_class {
	CUDA_CLASS_LAUNCH,
	CUDA_CLASS_LAUNCH_EX,
	CUDA_CLASS_GRAPH_LAUNCH,
	CUDA_CLASS_MEM_ALLOC,
	CUDA_CLASS_MEM_ALLOC_ASYNC,
	CUDA_CLASS_MEM_ALLOC_MANAGED,
	CUDA_CLASS_MEM_ALLOC_HOST,
	CUDA_CLASS_MEM_HOST_ALLOC,
	CUDA_CLASS_MEM_ALLOC_PITCH,
	CUDA_CLASS_MEM_ALLOC_FROM_POOL_ASYNC,
	CUDA_CLASS_MEM_FREE,
	CUDA_CLASS_MEM_FREE_ASYNC,
	CUDA_CLASS_MEM_FREE_HOST,
	CUDA_CLASS_MEMCPY,
	CUDA_CLASS_MEMCPY_ASYNC,
	CUDA_CLASS_MEMCPY_HTOD,
	CUDA_CLASS_MEMCPY_DTOH,
	CUDA_CLASS_MEMCPY_DTOD,
	CUDA_CLASS_MEMCPY_HTOD_ASYNC,
	CUDA_CLASS_MEMCPY_DTOH_ASYNC,
	CUDA_CLASS_MEMCPY_DTOD_ASYNC,
	CUDA_CLASS_MEMCPY_PEER,
	CUDA_CLASS_MEMCPY_PEER_ASYNC,
	CUDA_CLASS_MEMCPY_2D,
	CUDA_CLASS_MEMCPY_2D_ASYNC,
	CUDA_CLASS_MEMCPY_3D,
	CUDA_CLASS_MEMCPY_3D_ASYNC,
	CUDA_CLASS_MEMSET_D8,
	CUDA_CLASS_MEMSET_D16,
	CUDA_CLASS_MEMSET_D32,
	CUDA_CLASS_MEMSET_D8_ASYNC,
	CUDA_CLASS_MEMSET_D16_ASYNC,
	CUDA_CLASS_MEMSET_D32_ASYNC,
	CUDA_CLASS_CTX_SYNCHRONIZE,
	CUDA_CLASS_STREAM_SYNCHRONIZE,
	CUDA_CLASS_EVENT_SYNCHRONIZE,
	CUDA_CLASS_STREAM_WAIT_EVENT,
	CUDA_CLASS_EVENT_RECORD,
	CUDA_CLASS_EVENT_QUERY,
	CUDA_CLASS_STREAM_QUERY,
	CUDA_CLASS_MODULE_LOAD,
	CUDA_CLASS_MODULE_LOAD_DATA,
	CUDA_CLASS_MODULE_LOAD_FAT_BINARY,
	CUDA_CLASS_MODULE_UNLOAD,
	CUDA_CLASS_LIBRARY_LOAD_DATA,
	CUDA_CLASS_LIBRARY_LOAD_FROM_FILE,
	CUDA_CLASS_LIBRARY_UNLOAD,
	CUDA_CLASS_MODULE_GET_FUNCTION,
	CUDA_CLASS_LIBRARY_GET_KERNEL,
	CUDA_CLASS_KERNEL_GET_FUNCTION,
	CUDA_CLASS_FUNC_GET_NAME,
	CUDA_CLASS_CTX_CREATE,
	CUDA_CLASS_CTX_CREATE_V4,
	CUDA_CLASS_CTX_RETAIN,
	CUDA_CLASS_CTX_SET_CURRENT,
	CUDA_CLASS_CTX_PUSH_CURRENT,
	CUDA_CLASS_CTX_POP_CURRENT,
	CUDA_CLASS_DEVICE_PCI_BUS_ID,
	CUDA_CLASS_DEVICE_UUID,
	CUDA_CLASS_COUNT,
};

#endif
