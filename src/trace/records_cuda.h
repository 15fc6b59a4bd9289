/* Payloads of the `cuda` source: driver API calls seen by uprobes on libcuda.so.1. */
#ifndef GRT_RECORDS_CUDA_H
#define GRT_RECORDS_CUDA_H

#include <stdint.h>

/*
 * Every probed libcuda entry point, once: X(ENUM_SUFFIX, "symbol", PROBE_CLASS).
 * The class says how the cuda source decodes the call's arguments; the
 * enum values and the symbol names used by parse both come from this list.
 */
#define GRT_CUDA_API_LIST(X) \
	X(LAUNCH_KERNEL, "cuLaunchKernel", LAUNCH) \
	X(LAUNCH_KERNEL_PTSZ, "cuLaunchKernel_ptsz", LAUNCH) \
	X(LAUNCH_KERNEL_EX, "cuLaunchKernelEx", LAUNCH_EX) \
	X(LAUNCH_KERNEL_EX_PTSZ, "cuLaunchKernelEx_ptsz", LAUNCH_EX) \
	X(LAUNCH_COOPERATIVE_KERNEL, "cuLaunchCooperativeKernel", LAUNCH) \
	X(LAUNCH_COOPERATIVE_KERNEL_PTSZ, "cuLaunchCooperativeKernel_ptsz", LAUNCH) \
	X(GRAPH_LAUNCH, "cuGraphLaunch", GRAPH_LAUNCH) \
	X(GRAPH_LAUNCH_PTSZ, "cuGraphLaunch_ptsz", GRAPH_LAUNCH) \
	X(MEM_ALLOC, "cuMemAlloc", MEM_ALLOC) \
	X(MEM_ALLOC_V2, "cuMemAlloc_v2", MEM_ALLOC) \
	X(MEM_ALLOC_ASYNC, "cuMemAllocAsync", MEM_ALLOC_ASYNC) \
	X(MEM_ALLOC_ASYNC_PTSZ, "cuMemAllocAsync_ptsz", MEM_ALLOC_ASYNC) \
	X(MEM_ALLOC_MANAGED, "cuMemAllocManaged", MEM_ALLOC_MANAGED) \
	X(MEM_ALLOC_HOST, "cuMemAllocHost", MEM_ALLOC_HOST) \
	X(MEM_ALLOC_HOST_V2, "cuMemAllocHost_v2", MEM_ALLOC_HOST) \
	X(MEM_HOST_ALLOC, "cuMemHostAlloc", MEM_HOST_ALLOC) \
	X(MEM_ALLOC_PITCH, "cuMemAllocPitch", MEM_ALLOC_PITCH) \
	X(MEM_ALLOC_PITCH_V2, "cuMemAllocPitch_v2", MEM_ALLOC_PITCH) \
	X(MEM_ALLOC_FROM_POOL_ASYNC, "cuMemAllocFromPoolAsync", MEM_ALLOC_FROM_POOL_ASYNC) \
	X(MEM_ALLOC_FROM_POOL_ASYNC_PTSZ, "cuMemAllocFromPoolAsync_ptsz", MEM_ALLOC_FROM_POOL_ASYNC) \
	X(MEM_FREE, "cuMemFree", MEM_FREE) \
	X(MEM_FREE_V2, "cuMemFree_v2", MEM_FREE) \
	X(MEM_FREE_ASYNC, "cuMemFreeAsync", MEM_FREE_ASYNC) \
	X(MEM_FREE_ASYNC_PTSZ, "cuMemFreeAsync_ptsz", MEM_FREE_ASYNC) \
	X(MEM_FREE_HOST, "cuMemFreeHost", MEM_FREE_HOST) \
	X(MEMCPY, "cuMemcpy", MEMCPY) \
	X(MEMCPY_PTDS, "cuMemcpy_ptds", MEMCPY) \
	X(MEMCPY_ASYNC, "cuMemcpyAsync", MEMCPY_ASYNC) \
	X(MEMCPY_ASYNC_PTSZ, "cuMemcpyAsync_ptsz", MEMCPY_ASYNC) \
	X(MEMCPY_HTOD, "cuMemcpyHtoD", MEMCPY_HTOD) \
	X(MEMCPY_HTOD_V2, "cuMemcpyHtoD_v2", MEMCPY_HTOD) \
	X(MEMCPY_HTOD_V2_PTDS, "cuMemcpyHtoD_v2_ptds", MEMCPY_HTOD) \
	X(MEMCPY_DTOH, "cuMemcpyDtoH", MEMCPY_DTOH) \
	X(MEMCPY_DTOH_V2, "cuMemcpyDtoH_v2", MEMCPY_DTOH) \
	X(MEMCPY_DTOH_V2_PTDS, "cuMemcpyDtoH_v2_ptds", MEMCPY_DTOH) \
	X(MEMCPY_DTOD, "cuMemcpyDtoD", MEMCPY_DTOD) \
	X(MEMCPY_DTOD_V2, "cuMemcpyDtoD_v2", MEMCPY_DTOD) \
	X(MEMCPY_DTOD_V2_PTDS, "cuMemcpyDtoD_v2_ptds", MEMCPY_DTOD) \
	X(MEMCPY_HTOD_ASYNC, "cuMemcpyHtoDAsync", MEMCPY_HTOD_ASYNC) \
	X(MEMCPY_HTOD_ASYNC_V2, "cuMemcpyHtoDAsync_v2", MEMCPY_HTOD_ASYNC) \
	X(MEMCPY_HTOD_ASYNC_V2_PTSZ, "cuMemcpyHtoDAsync_v2_ptsz", MEMCPY_HTOD_ASYNC) \
	X(MEMCPY_DTOH_ASYNC, "cuMemcpyDtoHAsync", MEMCPY_DTOH_ASYNC) \
	X(MEMCPY_DTOH_ASYNC_V2, "cuMemcpyDtoHAsync_v2", MEMCPY_DTOH_ASYNC) \
	X(MEMCPY_DTOH_ASYNC_V2_PTSZ, "cuMemcpyDtoHAsync_v2_ptsz", MEMCPY_DTOH_ASYNC) \
	X(MEMCPY_DTOD_ASYNC, "cuMemcpyDtoDAsync", MEMCPY_DTOD_ASYNC) \
	X(MEMCPY_DTOD_ASYNC_V2, "cuMemcpyDtoDAsync_v2", MEMCPY_DTOD_ASYNC) \
	X(MEMCPY_DTOD_ASYNC_V2_PTSZ, "cuMemcpyDtoDAsync_v2_ptsz", MEMCPY_DTOD_ASYNC) \
	X(MEMCPY_PEER, "cuMemcpyPeer", MEMCPY_PEER) \
	X(MEMCPY_PEER_PTDS, "cuMemcpyPeer_ptds", MEMCPY_PEER) \
	X(MEMCPY_PEER_ASYNC, "cuMemcpyPeerAsync", MEMCPY_PEER_ASYNC) \
	X(MEMCPY_PEER_ASYNC_PTSZ, "cuMemcpyPeerAsync_ptsz", MEMCPY_PEER_ASYNC) \
	X(MEMCPY_2D, "cuMemcpy2D", MEMCPY_2D) \
	X(MEMCPY_2D_V2, "cuMemcpy2D_v2", MEMCPY_2D) \
	X(MEMCPY_2D_V2_PTDS, "cuMemcpy2D_v2_ptds", MEMCPY_2D) \
	X(MEMCPY_2D_UNALIGNED, "cuMemcpy2DUnaligned", MEMCPY_2D) \
	X(MEMCPY_2D_UNALIGNED_V2, "cuMemcpy2DUnaligned_v2", MEMCPY_2D) \
	X(MEMCPY_2D_UNALIGNED_V2_PTDS, "cuMemcpy2DUnaligned_v2_ptds", MEMCPY_2D) \
	X(MEMCPY_2D_ASYNC, "cuMemcpy2DAsync", MEMCPY_2D_ASYNC) \
	X(MEMCPY_2D_ASYNC_V2, "cuMemcpy2DAsync_v2", MEMCPY_2D_ASYNC) \
	X(MEMCPY_2D_ASYNC_V2_PTSZ, "cuMemcpy2DAsync_v2_ptsz", MEMCPY_2D_ASYNC) \
	X(MEMCPY_3D, "cuMemcpy3D", MEMCPY_3D) \
	X(MEMCPY_3D_V2, "cuMemcpy3D_v2", MEMCPY_3D) \
	X(MEMCPY_3D_V2_PTDS, "cuMemcpy3D_v2_ptds", MEMCPY_3D) \
	X(MEMCPY_3D_ASYNC, "cuMemcpy3DAsync", MEMCPY_3D_ASYNC) \
	X(MEMCPY_3D_ASYNC_V2, "cuMemcpy3DAsync_v2", MEMCPY_3D_ASYNC) \
	X(MEMCPY_3D_ASYNC_V2_PTSZ, "cuMemcpy3DAsync_v2_ptsz", MEMCPY_3D_ASYNC) \
	X(MEMSET_D8, "cuMemsetD8", MEMSET_D8) \
	X(MEMSET_D8_V2, "cuMemsetD8_v2", MEMSET_D8) \
	X(MEMSET_D8_V2_PTDS, "cuMemsetD8_v2_ptds", MEMSET_D8) \
	X(MEMSET_D16, "cuMemsetD16", MEMSET_D16) \
	X(MEMSET_D16_V2, "cuMemsetD16_v2", MEMSET_D16) \
	X(MEMSET_D16_V2_PTDS, "cuMemsetD16_v2_ptds", MEMSET_D16) \
	X(MEMSET_D32, "cuMemsetD32", MEMSET_D32) \
	X(MEMSET_D32_V2, "cuMemsetD32_v2", MEMSET_D32) \
	X(MEMSET_D32_V2_PTDS, "cuMemsetD32_v2_ptds", MEMSET_D32) \
	X(MEMSET_D8_ASYNC, "cuMemsetD8Async", MEMSET_D8_ASYNC) \
	X(MEMSET_D8_ASYNC_PTSZ, "cuMemsetD8Async_ptsz", MEMSET_D8_ASYNC) \
	X(MEMSET_D16_ASYNC, "cuMemsetD16Async", MEMSET_D16_ASYNC) \
	X(MEMSET_D16_ASYNC_PTSZ, "cuMemsetD16Async_ptsz", MEMSET_D16_ASYNC) \
	X(MEMSET_D32_ASYNC, "cuMemsetD32Async", MEMSET_D32_ASYNC) \
	X(MEMSET_D32_ASYNC_PTSZ, "cuMemsetD32Async_ptsz", MEMSET_D32_ASYNC) \
	X(CTX_SYNCHRONIZE, "cuCtxSynchronize", CTX_SYNCHRONIZE) \
	X(CTX_SYNCHRONIZE_V2, "cuCtxSynchronize_v2", CTX_SYNCHRONIZE) \
	X(STREAM_SYNCHRONIZE, "cuStreamSynchronize", STREAM_SYNCHRONIZE) \
	X(STREAM_SYNCHRONIZE_PTSZ, "cuStreamSynchronize_ptsz", STREAM_SYNCHRONIZE) \
	X(EVENT_SYNCHRONIZE, "cuEventSynchronize", EVENT_SYNCHRONIZE) \
	X(STREAM_WAIT_EVENT, "cuStreamWaitEvent", STREAM_WAIT_EVENT) \
	X(STREAM_WAIT_EVENT_PTSZ, "cuStreamWaitEvent_ptsz", STREAM_WAIT_EVENT) \
	X(EVENT_RECORD, "cuEventRecord", EVENT_RECORD) \
	X(EVENT_RECORD_PTSZ, "cuEventRecord_ptsz", EVENT_RECORD) \
	X(EVENT_RECORD_WITH_FLAGS, "cuEventRecordWithFlags", EVENT_RECORD) \
	X(EVENT_RECORD_WITH_FLAGS_PTSZ, "cuEventRecordWithFlags_ptsz", EVENT_RECORD) \
	X(EVENT_QUERY, "cuEventQuery", EVENT_QUERY) \
	X(STREAM_QUERY, "cuStreamQuery", STREAM_QUERY) \
	X(STREAM_QUERY_PTSZ, "cuStreamQuery_ptsz", STREAM_QUERY) \
	X(MODULE_LOAD, "cuModuleLoad", MODULE_LOAD) \
	X(MODULE_LOAD_DATA, "cuModuleLoadData", MODULE_LOAD_DATA) \
	X(MODULE_LOAD_DATA_EX, "cuModuleLoadDataEx", MODULE_LOAD_DATA) \
	X(MODULE_LOAD_FAT_BINARY, "cuModuleLoadFatBinary", MODULE_LOAD_FAT_BINARY) \
	X(MODULE_UNLOAD, "cuModuleUnload", MODULE_UNLOAD) \
	X(LIBRARY_LOAD_DATA, "cuLibraryLoadData", LIBRARY_LOAD_DATA) \
	X(LIBRARY_LOAD_FROM_FILE, "cuLibraryLoadFromFile", LIBRARY_LOAD_FROM_FILE) \
	X(LIBRARY_UNLOAD, "cuLibraryUnload", LIBRARY_UNLOAD) \
	X(MODULE_GET_FUNCTION, "cuModuleGetFunction", MODULE_GET_FUNCTION) \
	X(LIBRARY_GET_KERNEL, "cuLibraryGetKernel", LIBRARY_GET_KERNEL) \
	X(KERNEL_GET_FUNCTION, "cuKernelGetFunction", KERNEL_GET_FUNCTION) \
	X(FUNC_GET_NAME, "cuFuncGetName", FUNC_GET_NAME) \
	X(CTX_CREATE, "cuCtxCreate_v2", CTX_CREATE) \
	X(CTX_CREATE_V4, "cuCtxCreate_v4", CTX_CREATE_V4) \
	X(DEVICE_PRIMARY_CTX_RETAIN, "cuDevicePrimaryCtxRetain", CTX_RETAIN) \
	X(CTX_SET_CURRENT, "cuCtxSetCurrent", CTX_SET_CURRENT) \
	X(CTX_PUSH_CURRENT, "cuCtxPushCurrent", CTX_PUSH_CURRENT) \
	X(CTX_PUSH_CURRENT_V2, "cuCtxPushCurrent_v2", CTX_PUSH_CURRENT) \
	X(CTX_POP_CURRENT, "cuCtxPopCurrent", CTX_POP_CURRENT) \
	X(CTX_POP_CURRENT_V2, "cuCtxPopCurrent_v2", CTX_POP_CURRENT) \
	X(DEVICE_GET_PCI_BUS_ID, "cuDeviceGetPCIBusId", DEVICE_PCI_BUS_ID) \
	X(DEVICE_GET_UUID, "cuDeviceGetUuid", DEVICE_UUID) \
	X(DEVICE_GET_UUID_V2, "cuDeviceGetUuid_v2", DEVICE_UUID)

enum grt_cuda_api {
	GRT_CUDA_API_UNKNOWN = 0,
#define GRT_CUDA_API_ENUM(suffix, symbol, probe_class) GRT_CUDA_##suffix,
	GRT_CUDA_API_LIST(GRT_CUDA_API_ENUM)
#undef GRT_CUDA_API_ENUM
	GRT_CUDA_API_COUNT,
};

/* Flags of grt_cuda_call.flags */
enum grt_cuda_call_flags {
	GRT_CUDA_F_NO_RETURN = 1, /* the return probe did not fire (thread exited, trace stopped) */
	/*
	 * The call returned, but its return was not sampled (record
	 * --launch-returns N, launches only): return_ns and ret are unknown.
	 */
	GRT_CUDA_F_RETURN_UNSAMPLED = 2,
	/*
	 * grtrace's own call inside the target (a grtrace-* thread of the
	 * injected library: calibration, probe collection, CUPTI flushing).
	 * Kept in the trace, left out of every user-facing count unless asked.
	 */
	GRT_CUDA_F_OWN = 4,
};

/* What every cuda record starts with; the record header's ts_ns is the entry time. */
struct grt_cuda_call {
	uint64_t return_ns;	/* 0 unless grt_cuda_call_returned() */
	int32_t ret;		/* CUresult; 0 unless grt_cuda_call_returned() */
	uint16_t api;		/* enum grt_cuda_api */
	uint16_t flags;		/* enum grt_cuda_call_flags */
	uint32_t ppid;
	uint32_t comm_str;	/* thread's comm at the call */
};

/* Whether the record holds the call's return: return_ns and ret. */
static inline int grt_cuda_call_returned(const struct grt_cuda_call *call)
{
	return !(call->flags & (GRT_CUDA_F_NO_RETURN | GRT_CUDA_F_RETURN_UNSAMPLED));
}

#define GRT_LAUNCH_ARG_WORDS 4

struct grt_cuda_launch_rec {
	struct grt_cuda_call call;
	uint64_t function;	/* CUfunction (or CUkernel) handle */
	uint64_t stream;
	uint32_t kernel_str;	/* resolved name, 0 when unknown */
	uint32_t shared_mem;
	uint32_t grid[3];
	uint32_t block[3];
	int32_t user_stack_id;	/* GRT_STACK_NONE, GRT_STACK_LOST or a stack record's id */
	uint32_t arg_words;	/* valid entries of args */
	uint64_t args[GRT_LAUNCH_ARG_WORDS]; /* first 8 bytes of each leading kernel argument */
};

/*
 * GRT_REC_CUDA_LAUNCH_REPEAT: a launch that the writer found equal to the
 * launch record before it in the file (whichever thread's) in everything but
 * its record header, return, flags and argument words: the kernel, its
 * geometry, stream, stack and thread name are the earlier record's. A launch
 * storm repeats one launch millions of times; this writes 48 bytes of the
 * 144 a full record takes. Readers never hand it out: grt_reader_next()
 * expands it into the GRT_REC_CUDA_LAUNCH the writer was given, byte for
 * byte (launch_repeat.h). It names the record it repeats, so a launch
 * record lost before it is an error and not a wrong launch. Format 2.0.
 */
struct grt_cuda_launch_repeat_rec {
	uint32_t api_ns;	/* return_ns - the header's ts_ns; 0 when the return is not recorded */
	int32_t ret;
	uint16_t flags;		/* the call's flags */
	uint16_t arg_words;	/* words of args that follow; 0: the earlier record's args */
	uint32_t base;		/* the low 32 bits of the file offset of the launch it repeats */
	/* uint64_t args[arg_words] */
};

struct grt_cuda_graph_launch_rec {
	struct grt_cuda_call call;
	uint64_t graph_exec;
	uint64_t stream;
	int32_t user_stack_id;
	uint32_t reserved;
};

enum grt_alloc_kind {
	GRT_ALLOC_DEVICE = 1,
	GRT_ALLOC_ASYNC = 2,
	GRT_ALLOC_MANAGED = 3,
	GRT_ALLOC_HOST = 4,	/* cuMemAllocHost: pinned host memory */
	GRT_ALLOC_HOST_ALLOC = 5, /* cuMemHostAlloc */
	GRT_ALLOC_PITCH = 6,
	GRT_ALLOC_POOL_ASYNC = 7,
};

struct grt_cuda_alloc_rec {
	struct grt_cuda_call call;
	uint64_t addr;		/* 0 when the call failed */
	uint64_t bytes;		/* pitch allocations: pitch * height */
	uint64_t stream;	/* async kinds only */
	uint32_t kind;		/* enum grt_alloc_kind */
	int32_t user_stack_id;
};

struct grt_cuda_free_rec {
	struct grt_cuda_call call;
	uint64_t addr;
	uint64_t stream;
	uint32_t kind;		/* GRT_ALLOC_DEVICE, _ASYNC or _HOST */
	uint32_t reserved;
};

enum grt_copy_kind {
	GRT_COPY_UNKNOWN = 0,	/* unified addressing: the driver decides */
	GRT_COPY_HTOD = 1,
	GRT_COPY_DTOH = 2,
	GRT_COPY_DTOD = 3,
	GRT_COPY_HTOH = 4,
	GRT_COPY_PEER = 5,
	GRT_COPY_DEFAULT = 6,	/* cuMemcpy/cuMemcpyAsync with unified pointers */
};

struct grt_cuda_memcpy_rec {
	struct grt_cuda_call call;
	uint64_t dst;
	uint64_t src;
	uint64_t bytes;
	uint64_t stream;
	uint32_t kind;		/* enum grt_copy_kind */
	uint8_t is_async;
	uint8_t dims;		/* 1, 2 or 3 */
	uint16_t reserved;
	/*
	 * Appended (older writers: 64 bytes), peer copies (cuMemcpyPeer*): the contexts of the two
	 * sides, which name their devices (context records). 0 for other
	 * copies and older writers.
	 */
	uint64_t dst_ctx;
	uint64_t src_ctx;
};

/* Bytes of a memcpy record before the peer contexts were appended. */
#define GRT_CUDA_MEMCPY_REC_V1_2_LEN 64

struct grt_cuda_memset_rec {
	struct grt_cuda_call call;
	uint64_t dst;
	uint64_t bytes;		/* elements * element size */
	uint64_t stream;
	uint32_t value;
	uint8_t elem_size;	/* 1, 2 or 4 */
	uint8_t is_async;
	uint16_t reserved;
};

enum grt_sync_kind {
	GRT_SYNC_CTX = 1,
	GRT_SYNC_STREAM = 2,
	GRT_SYNC_EVENT = 3,
	GRT_SYNC_STREAM_WAIT_EVENT = 4,
	GRT_SYNC_EVENT_RECORD = 5,
	GRT_SYNC_EVENT_QUERY = 6,
	GRT_SYNC_STREAM_QUERY = 7,
};

struct grt_cuda_sync_rec {
	struct grt_cuda_call call;
	uint64_t stream;	/* 0 for ctx/event-only calls */
	uint64_t event;		/* 0 for ctx/stream-only calls */
	uint32_t kind;		/* enum grt_sync_kind */
	uint32_t reserved;
};

enum grt_module_kind {
	GRT_MODULE_LOAD_FILE = 1,
	GRT_MODULE_LOAD_DATA = 2,
	GRT_MODULE_LOAD_FATBIN = 3,
	GRT_MODULE_UNLOAD = 4,
	GRT_LIBRARY_LOAD_DATA = 5,
	GRT_LIBRARY_LOAD_FILE = 6,
	GRT_LIBRARY_UNLOAD = 7,
};

struct grt_cuda_module_rec {
	struct grt_cuda_call call;
	uint64_t module;	/* CUmodule or CUlibrary */
	uint64_t image;		/* data pointer for *LoadData*, 0 otherwise */
	uint32_t kind;		/* enum grt_module_kind */
	uint32_t path_str;	/* file loads only */
};

/* A function/kernel handle learned its name. */
struct grt_cuda_func_name_rec {
	struct grt_cuda_call call;
	uint64_t handle;	/* CUfunction or CUkernel */
	uint64_t module;	/* CUmodule, CUlibrary or CUkernel it came from */
	uint32_t name_str;
	uint32_t reserved;
};

/*
 * What a context call did. The driver's current context is per thread and a
 * stack: every later call of that thread goes to the device of the context
 * on top, so these records are how a launch, copy or sync learns its device.
 */
enum grt_ctx_op {
	GRT_CTX_CREATE = 1,	/* cuCtxCreate*: a new context of device, pushed as current */
	GRT_CTX_RETAIN = 2,	/* cuDevicePrimaryCtxRetain: device's primary context, not current */
	GRT_CTX_SET = 3,	/* cuCtxSetCurrent: replaces the top of the stack (0: pops it) */
	GRT_CTX_PUSH = 4,	/* cuCtxPushCurrent */
	GRT_CTX_POP = 5,	/* cuCtxPopCurrent: ctx is the one popped */
};

struct grt_cuda_context_rec {
	struct grt_cuda_call call;
	uint64_t ctx;		/* CUcontext; for CREATE/RETAIN written through the out pointer */
	int32_t device;		/* CREATE/RETAIN: its device ordinal; -1 otherwise */
	uint32_t op;		/* enum grt_ctx_op */
};

/*
 * What the program asked the driver about one device: its PCI bus id
 * (cuDeviceGetPCIBusId) or its UUID (cuDeviceGetUuid*). The answers are the
 * device description analyses print beside the ordinal.
 */
struct grt_cuda_device_rec {
	struct grt_cuda_call call;
	int32_t device;		/* CUdevice: the ordinal */
	uint32_t pci_bus_id_str; /* "0000:3b:00.0" as the driver wrote it, 0 when not this call */
	uint8_t uuid[16];	/* cuDeviceGetUuid's answer when has_uuid */
	uint32_t has_uuid;
	uint32_t reserved;
};

/* How the launch entry points were probed: what launch records can hold. */
enum grt_cuda_launch_probes {
	GRT_CUDA_PROBES_RETPROBE = 1,	/* an entry uprobe and a uretprobe: every return seen */
	GRT_CUDA_PROBES_SESSION = 2,	/* uprobe sessions: the entry program picks the returns seen */
	GRT_CUDA_PROBES_ENTRY = 3,	/* entry uprobes only: no return seen */
	/*
	 * libgrtrace-inject.so records in-process (record --cuda-via inject):
	 * returns as --launch-returns asks; uprobes only for processes without it
	 */
	GRT_CUDA_PROBES_INPROC = 4,
};

/*
 * The cuda source's settings, written once when it attaches (type
 * GRT_REC_CUDA_CONFIG, the one cuda record without a call header).
 */
struct grt_cuda_config_rec {
	uint32_t launch_return_every;	/* --launch-returns: one launch in N per thread; 0 none */
	uint32_t launch_probes;		/* enum grt_cuda_launch_probes */
	uint32_t launch_stacks;		/* 1: launches carry user stacks (--launch-stacks) */
	uint32_t reserved;
};

_Static_assert(sizeof(struct grt_cuda_config_rec) == 16, "cuda config layout");
_Static_assert(sizeof(struct grt_cuda_call) == 24, "cuda call layout");
_Static_assert(sizeof(struct grt_cuda_launch_rec) == 112, "launch layout");
_Static_assert(sizeof(struct grt_cuda_graph_launch_rec) == 48, "graph launch layout");
_Static_assert(sizeof(struct grt_cuda_launch_repeat_rec) == 16, "launch repeat layout");
_Static_assert(sizeof(struct grt_cuda_alloc_rec) == 56, "alloc layout");
_Static_assert(sizeof(struct grt_cuda_free_rec) == 48, "free layout");
_Static_assert(sizeof(struct grt_cuda_memcpy_rec) == 80, "memcpy layout");
_Static_assert(sizeof(struct grt_cuda_context_rec) == 40, "context layout");
_Static_assert(sizeof(struct grt_cuda_device_rec) == 56, "device layout");
_Static_assert(sizeof(struct grt_cuda_memset_rec) == 56, "memset layout");
_Static_assert(sizeof(struct grt_cuda_sync_rec) == 48, "sync layout");
_Static_assert(sizeof(struct grt_cuda_module_rec) == 48, "module layout");
_Static_assert(sizeof(struct grt_cuda_func_name_rec) == 48, "func name layout");

#endif
