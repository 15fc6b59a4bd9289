/* The .grt on-disk format: file header, record header and record type numbers. */
#ifndef GRT_FORMAT_H
#define GRT_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A .grt file is a file header followed by records. Every multi-byte field is
 * little-endian; every struct here is naturally aligned and padded explicitly,
 * so the same bytes mean the same thing to every reader. Record payloads are
 * the per-type structs of the records_*.h headers beside this one.
 *
 * Compatibility rule: readers accept a payload longer than the struct they
 * know (newer minor versions append fields) and skip record types they do not
 * know; a major version they do not know is refused. A new major version is
 * for records that an older reader would skip at the cost of events: 2.0's
 * launch repeat records each stand for a launch.
 */

#define GRT_FILE_MAGIC "GRTRACE\0"
/*
 * 1.2: checksum records, the trailer's own CRC; 2.0: launch repeat records
 * (launch_repeat.h). Readers read 1.x and 2.x.
 */
#define GRT_VERSION_MAJOR 2
#define GRT_VERSION_MINOR 0
/* What a writer with checksums off writes: the 1.1 layout (no checksums, no repeats). */
#define GRT_VERSION_MAJOR_NO_CHECKSUMS 1
#define GRT_VERSION_MINOR_NO_CHECKSUMS 1

/* Whether a trace of this format version has checksum records (from 1.2 on). */
static inline bool grt_format_has_checksums(uint16_t major, uint16_t minor)
{
	return major > 1 || minor >= 2;
}

#define GRT_RECORD_MAGIC 0xA7
#define GRT_RECORD_VERSION 1

/* Nothing legitimate is this large; a bigger length means corruption. */
#define GRT_MAX_PAYLOAD (1u << 20)

enum grt_clock_id {
	GRT_CLOCK_MONOTONIC = 1,
	GRT_CLOCK_GPU_GLOBALTIMER = 2,
	GRT_CLOCK_CUPTI = 3,	/* CUPTI activity timestamps (cuptiGetTimestamp) */
};

/*
 * Every source's id and name, in one list: enum grt_source_id and grt_source_name() come
 * from it. An id is a bit of grt_file_header.sources_mask and is written into traces, so ids
 * never change; a new source adds one line with a free id (10..14, 16..31).
 */
#define GRT_SOURCE_IDS(X)                                                                          \
	X(CUDA, cuda, 0)                                                                           \
	X(SYSCALL, syscall, 1)                                                                     \
	X(SCHED, sched, 2)                                                                         \
	X(FENCE, fence, 3)                                                                         \
	X(XID, xid, 4)                                                                             \
	X(UVM, uvm, 5)                                                                             \
	X(GPU, gpu, 6)                                                                             \
	X(PCIE, pcie, 7)                                                                           \
	X(DRM, drm, 8)                                                                             \
	X(NCCL, nccl, 9)                                                                           \
	X(RECORDER, recorder, 15) /* the recorder itself (its own drops, notices) */

enum grt_source_id {
#define GRT_SOURCE_ID_ENUM(upper, name, id) GRT_SRC_##upper = id,
	GRT_SOURCE_IDS(GRT_SOURCE_ID_ENUM)
#undef GRT_SOURCE_ID_ENUM
	GRT_SRC_MAX = 32,	/* the bits of sources_mask */
};

/*
 * Header flags are rewritten in place when recording stops; that needs no new
 * disk blocks, so it still works when the disk filled up.
 */
enum grt_header_flags {
	GRT_HDR_FINISHED = 1,	 /* the writer closed the file in order (trailer follows) */
	GRT_HDR_WRITE_ERROR = 2, /* writing failed; records up to the failure are intact */
};

struct grt_file_header {
	char magic[8];		/* GRT_FILE_MAGIC */
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t header_len;	/* sizeof(struct grt_file_header); records start here */
	uint64_t start_monotonic_ns;
	uint64_t start_realtime_ns; /* same instant on CLOCK_REALTIME */
	uint32_t clock_id;	/* enum grt_clock_id of every record's ts_ns */
	uint32_t sources_mask;	/* 1 << enum grt_source_id for each enabled source */
	uint32_t target_pid;	/* attached or launched pid, 0 for system-wide */
	uint32_t flags;		/* enum grt_header_flags */
	char hostname[64];
	char kernel_release[64];
	char driver_version[32]; /* NVIDIA driver, "" when unknown */
	char cuda_version[32];	 /* CUDA driver API version of that driver, "" when unknown */
	char command_line[512];	 /* the traced command or "pid N"; truncated, NUL-terminated */
};

struct grt_record_header {
	uint8_t magic;		/* GRT_RECORD_MAGIC */
	uint8_t version;	/* GRT_RECORD_VERSION */
	uint16_t type;		/* enum grt_record_type */
	uint32_t payload_len;	/* bytes after this header */
	uint32_t cpu;
	uint32_t pid;
	uint32_t tid;
	uint32_t seq;		/* per-CPU sequence number, gaps mean loss */
	uint64_t ts_ns;		/* in the header's clock */
};

/*
 * Record type numbers. Ranges are per domain so that each domain's header
 * (records_core.h, records_cuda.h, ...) grows without touching the others.
 */
enum grt_record_type {
	/* 1..15: records_core.h */
	GRT_REC_STRING = 1,
	GRT_REC_DROP = 2,
	GRT_REC_TRAILER = 3,
	GRT_REC_PROCESS = 4,
	GRT_REC_MAPPING = 5,
	GRT_REC_STACK = 6,
	GRT_REC_CLOCK_CALIB = 7,
	GRT_REC_SOURCE_STATUS = 8,
	GRT_REC_CHECKSUM = 9,
	/* 16..47: records_cuda.h */
	GRT_REC_CUDA_LAUNCH = 16,
	GRT_REC_CUDA_ALLOC = 17,
	GRT_REC_CUDA_FREE = 18,
	GRT_REC_CUDA_MEMCPY = 19,
	GRT_REC_CUDA_MEMSET = 20,
	GRT_REC_CUDA_SYNC = 21,
	GRT_REC_CUDA_MODULE_LOAD = 22,
	GRT_REC_CUDA_FUNC_NAME = 23,
	GRT_REC_CUDA_GRAPH_LAUNCH = 24,
	GRT_REC_CUDA_CONTEXT = 25,	/* a context created, retained, made current, pushed, popped */
	GRT_REC_CUDA_DEVICE = 26,	/* a device's PCI bus id or UUID, as the driver answered */
	/* a launch written as what differs from the launch before it; read back as a launch */
	GRT_REC_CUDA_LAUNCH_REPEAT = 27,
	GRT_REC_CUDA_CONFIG = 47,	/* the last of the range: the others are calls */
	/* 48..79: records_kernel.h (syscall, sched, fence, xid, pcie) */
	GRT_REC_KERNEL_FIRST = 48,
	GRT_REC_KERNEL_LAST = 79,
	/* 80..95: records_uvm.h */
	GRT_REC_UVM_FIRST = 80,
	GRT_REC_UVM_LAST = 95,
	/* 96..127: records_gpu.h (CUPTI activity, block probes) */
	GRT_REC_GPU_FIRST = 96,
	GRT_REC_GPU_LAST = 127,
	/* 128..255: free; from 256, the ranges of GRT_REC_SOURCE_FIRST() */
	GRT_REC_TYPE_MAX = 256 + 64 * GRT_SRC_MAX,
};

/*
 * Sources added since the ranges above own GRT_REC_SOURCE_SPAN record types from
 * GRT_REC_SOURCE_FIRST(their id) and number their records inside that range in their own
 * records_NAME.h: a source grows without touching this file or another source's header.
 */
#define GRT_REC_SOURCE_SPAN 64
#define GRT_REC_SOURCE_FIRST(source_id) (256 + (source_id) * GRT_REC_SOURCE_SPAN)

_Static_assert(sizeof(struct grt_file_header) == 752, "file header layout");
_Static_assert(sizeof(struct grt_record_header) == 32, "record header layout");

#endif
