/* Messages libgrtrace-inject.so sends to the recorder's `gpu` source through the shared ring. */
#ifndef GRT_INJECT_PROTO_H
#define GRT_INJECT_PROTO_H

#include <stdint.h>
#include "trace/records_core.h"
#include "trace/records_gpu.h"

/* Environment the recorder sets for the launched command (and the knobs the library reads). */
#define GRT_INJECT_ENV_SHM "GRTRACE_INJECT_SHM"	     /* path of the ring (a /dev/shm file) */
#define GRT_INJECT_ENV_KERNELS "GRTRACE_GPU_KERNELS" /* regex of kernels to rewrite */
#define GRT_INJECT_ENV_PROBES "GRTRACE_GPU_PROBES"   /* "block" (default), "thread", "off" */
#define GRT_INJECT_ENV_CUPTI "GRTRACE_GPU_CUPTI"     /* "0" turns CUPTI activity off */
/* "always": CUPTI kernel activity from the start, even where block probes time the kernels */
#define GRT_INJECT_ENV_CUPTI_KERNELS "GRTRACE_GPU_CUPTI_KERNELS"
/* "0": copies are not timed with CUDA events while CUPTI is not loaded */
#define GRT_INJECT_ENV_COPY_EVENTS "GRTRACE_GPU_COPY_EVENTS"
#define GRT_INJECT_ENV_CUPTI_CALLBACKS                                                             \
	"GRTRACE_GPU_CUPTI_CALLBACKS" /* "0": no call correlation                                  \
				       */
#define GRT_INJECT_ENV_COLLECT                                                                     \
	"GRTRACE_GPU_COLLECT" /* "exit": collect probe buffers at exit only */
#define GRT_INJECT_ENV_CUPTI_PATH "GRTRACE_CUPTI_PATH" /* libcupti to load instead of searching */
#define GRT_INJECT_ENV_CACHE                                                                       \
	"GRTRACE_CACHE_DIR" /* compiled-probe cache, default ~/.cache/grtrace */
#define GRT_INJECT_ENV_BLOCK_LAUNCHES                                                              \
	"GRTRACE_GPU_BLOCK_LAUNCHES" /* launches per kernel with per-block records */
#define GRT_INJECT_ENV_POOL_MB "GRTRACE_GPU_POOL_MB" /* device memory for probe buffers */
#define GRT_INJECT_ENV_POOL_WAIT                                                                   \
	"GRTRACE_GPU_POOL_WAIT" /* "1": wait for a probe buffer instead of skipping */
#define GRT_INJECT_ENV_DRAIN_MS                                                                    \
	"GRTRACE_GPU_DRAIN_MS" /* longest gap between collections without a sync (default 100) */
#define GRT_INJECT_ENV_MAX_PTX "GRTRACE_GPU_MAX_PTX_MB" /* modules with more PTX are left alone */
#define GRT_INJECT_ENV_DEBUG "GRTRACE_INJECT_DEBUG" /* "1": one stderr line per interposed call */

#define GRT_INJECT_MAX_NAME 4096 /* kernel names longer than this are cut */
/* The library's own kernels (calibration, summarizer) are named with this prefix. */
#define GRT_OWN_KERNEL_PREFIX "__grt_"

enum inject_msg_type {
	INJ_MSG_NAME =
	    1,		/* inj_name: a kernel name, sent once per process before it is referenced */
	INJ_MSG_STATUS, /* inj_status: the library attached, or a part of it could not */
	INJ_MSG_KERNEL, /* inj_kernel: CUPTI kernel activity */
	INJ_MSG_COPY,	/* inj_copy: CUPTI memcpy/memset activity */
	INJ_MSG_BLOCKS, /* inj_blocks: per-block probe records of one launch */
	INJ_MSG_LAUNCH, /* inj_launch: per-launch probe summary */
	INJ_MSG_INSTRUMENT, /* inj_instrument: a kernel was (not) instrumented, and why */
	INJ_MSG_CALIB,	    /* inj_calib: one clock calibration */
	INJ_MSG_DROPS,	    /* inj_drops: events lost inside the process (CUPTI, probe buffers) */
	INJ_MSG_BPF_DATA,   /* inj_bpf_data: a GPU eBPF map image (in chunks) or ring records */
};

/* Every message starts with who sent it and when (CLOCK_MONOTONIC). */
struct inj_head {
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	uint32_t reserved;
	uint64_t ts_ns;
};

/* name_id: a 64-bit hash of the text; records refer to names by it. */
struct inj_name {
	struct inj_head head;
	uint64_t name_id;
	char text[]; /* NUL-terminated */
};

enum inj_status_part {
	INJ_PART_LIBRARY = 1,	/* the library is loaded and reporting */
	INJ_PART_CUPTI = 2,	/* kernel/copy timing through CUPTI */
	INJ_PART_PROBES = 3,	/* PTX block probes */
	INJ_PART_CALIB = 4,	/* clock calibration */
	INJ_PART_INTERPOSE = 5, /* driver interposition */
	/* CUPTI left to the application's own client (or another tool): the user must know */
	INJ_PART_CUPTI_HANDOVER = 6,
	INJ_PART_BPF = 7, /* GPU eBPF programs (record --bpf) */
};

struct inj_status {
	struct inj_head head;
	uint32_t part;	/* enum inj_status_part */
	int32_t status; /* 0 fine, negative errno when that part is off */
	char text[];	/* one line, NUL-terminated */
};

struct inj_kernel {
	struct inj_head head;
	uint64_t name_id;
	struct grt_gpu_kernel_rec rec; /* kernel_str unused: the recorder fills it from name_id */
};

struct inj_copy {
	struct inj_head head;
	struct grt_gpu_copy_rec rec;
};

struct inj_blocks {
	struct inj_head head;
	uint32_t count;
	uint32_t reserved;
	struct grt_gpu_block_rec recs[];
};

struct inj_launch {
	struct inj_head head;
	uint64_t name_id;
	struct grt_gpu_launch_rec rec;
};

struct inj_instrument {
	struct inj_head head;
	uint64_t name_id;
	struct grt_gpu_instrument_rec rec; /* kernel_str, reason_str unused */
	char reason[];			   /* NUL-terminated, "" when instrumented */
};

struct inj_calib {
	struct inj_head head;
	struct grt_clock_calib_rec rec;
};

enum inj_drop_kind {
	INJ_DROP_CUPTI = 1, /* cuptiActivityGetNumDroppedRecords */
	INJ_DROP_PROBE = 2, /* launches that ran uninstrumented for want of a probe buffer */
};

struct inj_drops {
	struct inj_head head;
	uint32_t kind; /* enum inj_drop_kind */
	uint32_t reserved;
	uint64_t count;
};

enum inj_bpf_kind {
	INJ_BPF_MAP = 1,    /* a chunk of a map's device image */
	INJ_BPF_RING = 2,   /* whole records of a ring map (grt_bpf_ring_rec + data, gpu_abi.h) */
	INJ_BPF_PRINTK = 3, /* whole records of the printk ring */
};

#define INJ_BPF_FINAL 1u /* map: the snapshot taken at exit */

/*
 * What GPU eBPF programs left in device memory, read back by the library and
 * decoded by the recorder, which holds the objects (and their BTF). A map
 * image too large for one message comes in chunks, in order, offset 0 first.
 */
struct inj_bpf_data {
	struct inj_head head;
	uint32_t kind; /* enum inj_bpf_kind */
	uint32_t slot; /* the map's slot (rings and maps) */
	uint32_t snapshot;
	uint32_t flags;
	uint64_t offset;  /* map: where the chunk goes in the image */
	uint64_t total;	  /* map: bytes of the whole image */
	uint64_t dropped; /* rings: events that did not fit since the last message */
	uint64_t clock_gpu_ref, clock_mono_ref, clock_mult; /* %globaltimer -> CLOCK_MONOTONIC */
	uint32_t thread_capacity;
	uint32_t len; /* bytes of data */
	uint8_t data[];
};

/* FNV-1a: stable across processes, so one name gets one id everywhere. */
static inline uint64_t inj_name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h ? h : 1;
}

#endif
