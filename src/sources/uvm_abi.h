/* The NVIDIA UVM tools interface (/dev/nvidia-uvm-tools): ioctls and queue records. */
#ifndef GRT_UVM_ABI_H
#define GRT_UVM_ABI_H

#include <stdint.h>

/*
 * Re-declared from the public open-gpu-kernel-modules sources
 * (kernel-open/nvidia-uvm/uvm_ioctl.h, uvm_linux_ioctl.h, uvm_types.h,
 * uvm_tools.c), read at 560.28.03, 570.133.07 and 575.57.08; the GPU
 * machine runs 580.159.04, which speaks the 575 form (checked there, see
 * docs/uvm.md). Names are ours; offsets and sizes are the driver's and are
 * pinned with static asserts, because the driver copies these bytes as they
 * are.
 *
 * Two generations of the tracker ioctl exist:
 *  - 560 and older: one ioctl (56) whose params carry a `version` word
 *    (1 or 2) before rmStatus.
 *  - 570 and newer: ioctl 56 always makes a version-1 tracker and has no
 *    version word (rmStatus sits where `version` was); ioctl 76 makes a
 *    version-2 tracker with the same params.
 * Both param structs are 56 bytes, so a version-1 request through ioctl 56
 * with version=1 works on both; see uvm_tracker_open() for the probing order.
 *
 * Linux UVM ioctl numbers are plain integers (not _IOWR encodings); the
 * driver answers with 0 and puts its own NV_STATUS in rm_status, or with
 * -EINVAL for a number it does not know.
 */

#define UVM_IOCTL_TOOLS_INIT_EVENT_TRACKER 56
#define UVM_IOCTL_TOOLS_SET_NOTIFICATION_THRESHOLD 57
#define UVM_IOCTL_TOOLS_EVENT_QUEUE_ENABLE_EVENTS 58
#define UVM_IOCTL_TOOLS_EVENT_QUEUE_DISABLE_EVENTS 59
#define UVM_IOCTL_TOOLS_ENABLE_COUNTERS 60	 /* on a counters tracker (no queue) */
#define UVM_IOCTL_TOOLS_FLUSH_EVENTS 67		 /* on the /dev/nvidia-uvm fd, not the tools fd */
#define UVM_IOCTL_TOOLS_INIT_EVENT_TRACKER_V2 76 /* 570+ */

/* NV_STATUS values the tracker ioctls return (nvstatuscodes.h). */
#define UVM_NV_OK 0x00000000u
#define UVM_NV_ERR_ILLEGAL_ACTION 0x00000016u		/* uvm fd not (yet) a VA-space fd */
#define UVM_NV_ERR_INSUFFICIENT_PERMISSIONS 0x0000001Bu /* fd is not /dev/nvidia-uvm */
#define UVM_NV_ERR_INVALID_ADDRESS 0x0000001Eu
#define UVM_NV_ERR_INVALID_ARGUMENT 0x0000001Fu
#define UVM_NV_ERR_NO_MEMORY 0x00000051u

/* UvmToolsEventQueueVersion */
enum uvm_queue_version {
	UVM_QUEUE_V1 = 1, /* 8-bit processor indices, 64-byte entries */
	UVM_QUEUE_V2 = 2, /* 16-bit processor indices, 72-byte entries */
};

/* 570+ UVM_TOOLS_INIT_EVENT_TRACKER(_V2)_PARAMS */
struct uvm_init_tracker_params {
	uint64_t queue_buffer;	    /* user address of the entry array, page aligned */
	uint64_t queue_entries;	    /* number of entries, a power of two >= 2 (queueBufferSize) */
	uint64_t control_buffer;    /* user address of struct uvm_queue_control */
	uint8_t processor_uuid[16]; /* counters only */
	uint32_t all_processors;    /* counters only */
	uint32_t uvm_fd;	    /* our fd on the target's /dev/nvidia-uvm file */
	uint32_t rm_status;
	uint32_t pad;
};

/* 550/560 UVM_TOOLS_INIT_EVENT_TRACKER_PARAMS: the same with a version word. */
struct uvm_init_tracker_params_560 {
	uint64_t queue_buffer;
	uint64_t queue_entries;
	uint64_t control_buffer;
	uint8_t processor_uuid[16];
	uint32_t all_processors;
	uint32_t uvm_fd;
	uint32_t version; /* enum uvm_queue_version */
	uint32_t rm_status;
};

struct uvm_set_threshold_params {
	uint32_t threshold; /* wake pollers once this many entries are pending */
	uint32_t rm_status;
};

struct uvm_enable_events_params {
	uint64_t event_mask; /* 1 << enum uvm_event_type */
	uint32_t rm_status;
	uint32_t pad;
};

struct uvm_enable_counters_params {
	uint64_t counter_mask; /* 1 << enum uvm_counter_name */
	uint32_t rm_status;
	uint32_t pad;
};

/*
 * UvmCounterName: a tracker made with no queue (queueBufferSize 0) is a
 * counters tracker; its control buffer is an array of UVM_COUNTERS_TOTAL
 * 64-bit counters the driver adds to atomically as it works. With
 * allProcessors set, each sums over every processor (CPU faults only once,
 * for the CPU itself). There is no counter for GPU-to-GPU migrations.
 */
enum uvm_counter_name {
	UVM_COUNTER_BYTES_HTOD = 0,
	UVM_COUNTER_BYTES_DTOH = 1,
	UVM_COUNTER_CPU_FAULTS = 2,
	UVM_COUNTER_GPU_FAULTS = 9,
	UVM_COUNTERS_TOTAL = 10,
};

struct uvm_flush_events_params {
	uint32_t rm_status;
};

/* UvmEventType */
enum uvm_event_type {
	UVM_EV_INVALID = 0,
	UVM_EV_CPU_FAULT = 1,
	UVM_EV_MIGRATION = 2,
	UVM_EV_GPU_FAULT = 3,
	UVM_EV_GPU_FAULT_REPLAY = 4,
	UVM_EV_FAULT_BUFFER_OVERFLOW = 5,
	UVM_EV_FATAL_FAULT = 6,
	UVM_EV_READ_DUPLICATE = 7,
	UVM_EV_READ_DUPLICATE_INVALIDATE = 8,
	UVM_EV_PAGE_SIZE_CHANGE = 9,
	UVM_EV_THRASHING_DETECTED = 10,
	UVM_EV_THROTTLING_START = 11,
	UVM_EV_THROTTLING_END = 12,
	UVM_EV_MAP_REMOTE = 13,
	UVM_EV_EVICTION = 14,
	UVM_EV_NUM_TYPES = 15, /* the driver refuses mask bits at and above this (tests aside) */
	UVM_EV_NUM_TYPES_ALL = 64, /* size of the per-type drop counters */
};

/* Every regular event type; the driver rejects a mask with any other bit. */
#define UVM_EV_MASK_ALL (((1ULL << UVM_EV_NUM_TYPES) - 1) & ~1ULL)

/*
 * The control page shared with the driver. The driver writes at put_behind
 * (indices are already reduced modulo the entry count) and treats the queue
 * as full when one free slot is left before get_behind; it wakes pollers
 * based on get_ahead. The consumer reads [get, put_behind) and then
 * publishes the new get in both get words.
 */
struct uvm_queue_control {
	volatile uint32_t get_ahead;
	volatile uint32_t get_behind;
	volatile uint32_t put_ahead;
	volatile uint32_t put_behind;
	uint64_t dropped[UVM_EV_NUM_TYPES_ALL]; /* per event type, counted by the driver */
};

/*
 * Queue entries. Every entry starts with the event type byte. CPU time
 * stamps are the driver's NV_GETTIME(): ktime_get_raw_ts64, i.e.
 * CLOCK_MONOTONIC_RAW in ns. "gpu" time stamps are the GPU's globaltimer.
 * Processor index 0 is the CPU; GPUs count from 1 (v1: parent GPU id,
 * v2: GPU id, which tells MIG instances apart).
 */

/* UvmEventCpuFaultInfo: the same in both versions */
struct uvm_ev_cpu_fault {
	uint8_t type;
	uint8_t access; /* enum uvm_access_type */
	uint16_t pad16;
	uint32_t cpu; /* 570+: CPU the fault ran on; 0 (padding) before */
	uint64_t address;
	uint64_t ts;
	uint32_t pid; /* process that faulted */
	uint32_t tid;
	uint64_t pc;
};

struct uvm_ev_migration_v1 {
	uint8_t type;
	uint8_t cause; /* enum uvm_migration_cause */
	uint8_t src;
	uint8_t dst;
	uint32_t pad32;
	uint64_t address;
	uint64_t bytes;
	uint64_t begin_ts; /* copy queued on the GPU */
	uint64_t end_ts;   /* CPU learned it finished; 0 for asynchronous migrations */
	uint64_t range_group;
	uint64_t begin_gpu_ts;
	uint64_t end_gpu_ts;
};

struct uvm_ev_migration_v2 {
	uint8_t type;
	uint8_t cause;
	uint16_t pad16;
	uint16_t src;
	uint16_t dst;
	int32_t src_nid; /* CPU NUMA node, -1 when not the CPU */
	int32_t dst_nid;
	uint64_t address;
	uint64_t bytes;
	uint64_t begin_ts;
	uint64_t end_ts;
	uint64_t range_group;
	uint64_t begin_gpu_ts;
	uint64_t end_gpu_ts;
};

struct uvm_ev_gpu_fault_v1 {
	uint8_t type;
	uint8_t fault_type; /* enum uvm_fault_type */
	uint8_t access;
	uint8_t gpu;
	uint16_t gpc_or_channel; /* GPC for replayable faults, channel otherwise */
	uint16_t client_id;
	uint64_t address;
	uint64_t ts;	 /* CPU started servicing the fault */
	uint64_t gpu_ts; /* fault entry written by the GPU */
	uint32_t batch;
	uint8_t client_type; /* 1 GPC (replayable), 2 HUB (non-replayable) */
	uint8_t pad8;
	uint16_t pad16;
};

struct uvm_ev_gpu_fault_v2 {
	uint8_t type;
	uint8_t fault_type;
	uint16_t gpu;
	uint16_t gpc_or_channel;
	uint16_t client_id;
	uint64_t address;
	uint64_t ts;
	uint64_t gpu_ts;
	uint32_t batch;
	uint8_t client_type;
	uint8_t access;
	uint16_t pad16;
};

struct uvm_ev_replay_v1 {
	uint8_t type;
	uint8_t gpu;
	uint8_t client_type;
	uint8_t pad8;
	uint32_t batch;
	uint64_t ts;	 /* replay queued */
	uint64_t gpu_ts; /* replay finished on the GPU */
};

struct uvm_ev_replay_v2 {
	uint8_t type;
	uint8_t client_type;
	uint16_t gpu;
	uint32_t batch;
	uint64_t ts;
	uint64_t gpu_ts;
};

struct uvm_ev_fatal_v1 {
	uint8_t type;
	uint8_t fault_type;
	uint8_t access;
	uint8_t processor;
	uint8_t reason; /* enum uvm_fatal_reason */
	uint8_t pad8;
	uint16_t pad16;
	uint64_t address;
	uint64_t ts;
};

struct uvm_ev_fatal_v2 {
	uint8_t type;
	uint8_t fault_type;
	uint8_t access;
	uint8_t reason;
	uint16_t processor;
	uint16_t pad16;
	uint64_t address;
	uint64_t ts;
};

/* Processor masks: v1 has 64 bits, v2 one bit per UVM processor id (257 ids). */
#define UVM_V2_PROCESSOR_MASK_WORDS 5

struct uvm_ev_read_dup_v1 {
	uint8_t type;
	uint8_t pad8;
	uint16_t pad16;
	uint32_t pad32;
	uint64_t processors;
	uint64_t address;
	uint64_t size;
	uint64_t ts;
};

struct uvm_ev_read_dup_v2 {
	uint8_t type;
	uint8_t pad8;
	uint16_t pad16;
	uint32_t pad32;
	uint64_t address;
	uint64_t size;
	uint64_t ts;
	uint64_t processors[UVM_V2_PROCESSOR_MASK_WORDS];
};

struct uvm_ev_read_dup_inval_v1 {
	uint8_t type;
	uint8_t resident; /* the processor left with the only copy */
	uint16_t pad16;
	uint32_t pad32;
	uint64_t address;
	uint64_t size;
	uint64_t ts;
};

struct uvm_ev_read_dup_inval_v2 {
	uint8_t type;
	uint8_t pad8;
	uint16_t resident;
	uint32_t pad32;
	uint64_t address;
	uint64_t size;
	uint64_t ts;
};

struct uvm_ev_page_size_v1 {
	uint8_t type;
	uint8_t processor;
	uint16_t pad16;
	uint32_t size; /* new page size */
	uint64_t address;
	uint64_t ts;
};

struct uvm_ev_page_size_v2 {
	uint8_t type;
	uint8_t pad8;
	uint16_t processor;
	uint32_t size;
	uint64_t address;
	uint64_t ts;
};

struct uvm_ev_thrashing_v1 {
	uint8_t type;
	uint8_t pad8;
	uint16_t pad16;
	uint32_t pad32;
	uint64_t processors; /* processors fighting over the region */
	uint64_t address;
	uint64_t size;
	uint64_t ts;
};

struct uvm_ev_thrashing_v2 {
	uint8_t type;
	uint8_t pad8;
	uint16_t pad16;
	uint32_t pad32;
	uint64_t address;
	uint64_t size;
	uint64_t ts;
	uint64_t processors[UVM_V2_PROCESSOR_MASK_WORDS];
};

/* Throttling start and end share a layout. */
struct uvm_ev_throttling_v1 {
	uint8_t type;
	uint8_t processor;
	uint16_t pad16;
	uint32_t pad32;
	uint64_t address;
	uint64_t ts;
};

struct uvm_ev_throttling_v2 {
	uint8_t type;
	uint8_t pad8;
	uint16_t processor;
	uint32_t pad32;
	uint64_t address;
	uint64_t ts;
};

struct uvm_ev_map_remote_v1 {
	uint8_t type;
	uint8_t src;   /* processor that got the mapping */
	uint8_t dst;   /* processor whose memory it maps */
	uint8_t cause; /* enum uvm_map_remote_cause */
	uint32_t pad32;
	uint64_t address;
	uint64_t size;
	uint64_t ts;
	uint64_t gpu_ts; /* mapping effective on a GPU; 0 when src is the CPU */
};

struct uvm_ev_map_remote_v2 {
	uint8_t type;
	uint8_t cause;
	uint16_t pad16;
	uint16_t src;
	uint16_t dst;
	uint64_t address;
	uint64_t size;
	uint64_t ts;
	uint64_t gpu_ts;
};

struct uvm_ev_eviction_v1 {
	uint8_t type;
	uint8_t src; /* evicted from */
	uint8_t dst; /* evicted to */
	uint8_t pad8;
	uint32_t pad32;
	uint64_t address_out; /* region evicted */
	uint64_t address_in;  /* allocation that needed the room */
	uint64_t size;
	uint64_t ts;
};

struct uvm_ev_eviction_v2 {
	uint8_t type;
	uint8_t pad8;
	uint16_t pad16;
	uint16_t src;
	uint16_t dst;
	uint64_t address_out;
	uint64_t address_in;
	uint64_t size;
	uint64_t ts;
};

/* Sizes of one queue slot (UvmEventEntry_V1 / _V2: the union of the above). */
#define UVM_ENTRY_V1_SIZE 64
#define UVM_ENTRY_V2_SIZE 72

enum uvm_access_type {
	UVM_ACCESS_INVALID = 0,
	UVM_ACCESS_READ = 1,
	UVM_ACCESS_WRITE = 2,
	UVM_ACCESS_ATOMIC = 3,
	UVM_ACCESS_PREFETCH = 4,
};

enum uvm_migration_cause {
	UVM_MIGRATION_CAUSE_INVALID = 0,
	UVM_MIGRATION_CAUSE_USER = 1,	   /* cudaMemPrefetchAsync, UvmMigrate */
	UVM_MIGRATION_CAUSE_COHERENCE = 2, /* a fault needed the data elsewhere */
	UVM_MIGRATION_CAUSE_PREFETCH = 3,  /* the driver's prefetch heuristic */
	UVM_MIGRATION_CAUSE_EVICTION = 4,
	UVM_MIGRATION_CAUSE_ACCESS_COUNTERS = 5,
};

enum uvm_map_remote_cause {
	UVM_MAP_REMOTE_CAUSE_INVALID = 0,
	UVM_MAP_REMOTE_CAUSE_COHERENCE = 1,
	UVM_MAP_REMOTE_CAUSE_THRASHING = 2,
	UVM_MAP_REMOTE_CAUSE_POLICY = 3,
	UVM_MAP_REMOTE_CAUSE_OUT_OF_MEMORY = 4,
	UVM_MAP_REMOTE_CAUSE_EVICTION = 5,
};

enum uvm_fatal_reason {
	UVM_FATAL_REASON_INVALID = 0,
	UVM_FATAL_REASON_INVALID_ADDRESS = 1,
	UVM_FATAL_REASON_INVALID_PERMISSIONS = 2,
	UVM_FATAL_REASON_INVALID_FAULT_TYPE = 3,
	UVM_FATAL_REASON_OUT_OF_MEMORY = 4,
	UVM_FATAL_REASON_INTERNAL_ERROR = 5,
	UVM_FATAL_REASON_INVALID_OPERATION = 6,
};

_Static_assert(sizeof(struct uvm_init_tracker_params) == 56, "init tracker params (570+)");
_Static_assert(sizeof(struct uvm_init_tracker_params_560) == 56, "init tracker params (560)");
_Static_assert(__builtin_offsetof(struct uvm_init_tracker_params, rm_status) == 48,
	       "rmStatus (570+)");
_Static_assert(__builtin_offsetof(struct uvm_init_tracker_params_560, version) == 48,
	       "version (560)");
_Static_assert(sizeof(struct uvm_set_threshold_params) == 8, "threshold params");
_Static_assert(sizeof(struct uvm_enable_events_params) == 16, "enable events params");
_Static_assert(sizeof(struct uvm_queue_control) == 528, "queue control page");
_Static_assert(sizeof(struct uvm_ev_cpu_fault) == 40, "cpu fault");
_Static_assert(sizeof(struct uvm_ev_migration_v1) == 64, "migration v1");
_Static_assert(sizeof(struct uvm_ev_migration_v2) == 72, "migration v2");
_Static_assert(sizeof(struct uvm_ev_gpu_fault_v1) == 40, "gpu fault v1");
_Static_assert(sizeof(struct uvm_ev_gpu_fault_v2) == 40, "gpu fault v2");
_Static_assert(sizeof(struct uvm_ev_replay_v1) == 24, "replay v1");
_Static_assert(sizeof(struct uvm_ev_replay_v2) == 24, "replay v2");
_Static_assert(sizeof(struct uvm_ev_fatal_v1) == 24, "fatal v1");
_Static_assert(sizeof(struct uvm_ev_fatal_v2) == 24, "fatal v2");
_Static_assert(sizeof(struct uvm_ev_read_dup_v1) == 40, "read dup v1");
_Static_assert(sizeof(struct uvm_ev_read_dup_v2) == 72, "read dup v2");
_Static_assert(sizeof(struct uvm_ev_read_dup_inval_v1) == 32, "read dup invalidate v1");
_Static_assert(sizeof(struct uvm_ev_read_dup_inval_v2) == 32, "read dup invalidate v2");
_Static_assert(sizeof(struct uvm_ev_page_size_v1) == 24, "page size v1");
_Static_assert(sizeof(struct uvm_ev_page_size_v2) == 24, "page size v2");
_Static_assert(sizeof(struct uvm_ev_thrashing_v1) == 40, "thrashing v1");
_Static_assert(sizeof(struct uvm_ev_thrashing_v2) == 72, "thrashing v2");
_Static_assert(sizeof(struct uvm_ev_throttling_v1) == 24, "throttling v1");
_Static_assert(sizeof(struct uvm_ev_throttling_v2) == 24, "throttling v2");
_Static_assert(sizeof(struct uvm_ev_map_remote_v1) == 40, "map remote v1");
_Static_assert(sizeof(struct uvm_ev_map_remote_v2) == 40, "map remote v2");
_Static_assert(sizeof(struct uvm_ev_eviction_v1) == 40, "eviction v1");
_Static_assert(sizeof(struct uvm_ev_eviction_v2) == 40, "eviction v2");
/* the largest member fills the slot exactly */
_Static_assert(sizeof(struct uvm_ev_migration_v1) == UVM_ENTRY_V1_SIZE, "v1 slot");
_Static_assert(sizeof(struct uvm_ev_migration_v2) == UVM_ENTRY_V2_SIZE, "v2 slot");
_Static_assert(sizeof(struct uvm_ev_thrashing_v2) == UVM_ENTRY_V2_SIZE, "v2 slot (masks)");

#endif
