/* Payloads of the `gpu` source: device-side timing (CUPTI activity, PTX block probes). */
#ifndef GRT_RECORDS_GPU_H
#define GRT_RECORDS_GPU_H

#include <stdint.h>
#include "grt_format.h"

/*
 * GPU timestamps in these records are already mapped to the header's clock
 * (CLOCK_MONOTONIC) with the session's calibration (clock_calib records);
 * the raw globaltimer values are kept beside them for checking.
 */
enum grt_gpu_record_type {
	GRT_REC_GPU_KERNEL = GRT_REC_GPU_FIRST,	/* a kernel's START/END on the device (CUPTI) */
	GRT_REC_GPU_COPY = GRT_REC_GPU_FIRST + 1,	/* a memcpy/memset on the device (CUPTI or events) */
	GRT_REC_GPU_BLOCK = GRT_REC_GPU_FIRST + 2,	/* one block of an instrumented launch */
	GRT_REC_GPU_LAUNCH = GRT_REC_GPU_FIRST + 3,	/* per-launch summary of the block probes */
	GRT_REC_GPU_INSTRUMENT = GRT_REC_GPU_FIRST + 4, /* a kernel was (not) instrumented, and why */
};

/* Flags of the gpu records' flags field. */
enum grt_gpu_rec_flags {
	/* grtrace's own work inside the target (calibration, probe collection): not the application's */
	GRT_GPU_F_OWN = 1,
	/* a copy timed by CUDA events around its call (CUPTI not loaded), not by CUPTI */
	GRT_GPU_F_EVENT_TIMED = 2,
};

/*
 * Kernels of grtrace's own (calibration, probe summaries) are named with this
 * prefix: traces written before the own flags existed are told apart by it.
 */
#define GRT_OWN_KERNEL_PREFIX "__grt_"

/*
 * Identity of the host call behind a device record: the call was made by
 * thread host_tid of the record's pid, entered at api_enter_ns and returned at
 * api_return_ns (both CLOCK_MONOTONIC, taken around the driver call by the
 * injected library). Calls on one thread do not overlap, so exactly one cuda
 * record of that thread has its entry time inside [api_enter_ns,
 * api_return_ns]: that is the match, not the nearest time. host_tid 0 or
 * api_return_ns 0 means the bracket is unknown (older traces).
 */
struct grt_gpu_kernel_rec {
	uint64_t start_ns;	/* mapped to CLOCK_MONOTONIC */
	uint64_t end_ns;
	uint64_t api_enter_ns;	/* host time the launch API was entered (same call as the cuda launch) */
	uint64_t stream;	/* CUstream handle as the host saw it, 0 = default stream */
	uint32_t correlation_id;
	uint32_t device;
	uint32_t stream_id;	/* CUPTI's stream id */
	uint32_t kernel_str;
	uint32_t grid[3];
	uint32_t block[3];
	uint64_t graph_id;	/* 0 unless launched as part of a CUDA graph */
	uint64_t api_return_ns;	/* host time the launch API returned (0 unknown) */
	uint32_t host_tid;	/* thread that made the call (0 unknown) */
	uint32_t flags;		/* enum grt_gpu_rec_flags */
};

struct grt_gpu_copy_rec {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t api_enter_ns;
	uint64_t bytes;
	uint64_t stream;
	uint32_t correlation_id;
	uint32_t device;
	uint32_t stream_id;
	uint32_t kind;		/* enum grt_copy_kind; memsets use GRT_GPU_COPY_MEMSET */
	uint64_t api_return_ns;	/* as in grt_gpu_kernel_rec */
	uint32_t host_tid;
	uint32_t flags;		/* enum grt_gpu_rec_flags */
};

#define GRT_GPU_COPY_MEMSET 100

struct grt_gpu_block_rec {
	uint64_t launch_id;	/* same as the grt_gpu_launch_rec it belongs to */
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t block[3];
	uint32_t smid;
};

struct grt_gpu_launch_rec {
	uint64_t launch_id;
	uint64_t start_ns;	/* first block start */
	uint64_t end_ns;	/* last block end */
	uint64_t api_enter_ns;
	uint64_t stream;
	uint32_t kernel_str;
	uint32_t blocks;
	uint32_t sms_used;
	uint32_t reserved;
	uint64_t block_ns_p50;
	uint64_t block_ns_max;
	uint64_t busiest_sm_ns;	/* busy time of the busiest SM */
	uint64_t lost_blocks;	/* blocks whose records did not fit the device buffer */
	uint64_t api_return_ns;	/* as in grt_gpu_kernel_rec */
	uint32_t host_tid;
	uint32_t flags;		/* enum grt_gpu_rec_flags */
};

struct grt_gpu_instrument_rec {
	uint32_t kernel_str;
	int32_t status;		/* 0 instrumented, negative errno when left alone */
	uint32_t reason_str;	/* one line: why it ran uninstrumented */
	uint32_t reserved;
};

/* Sizes before format 1.1 appended api_return_ns, host_tid and flags. */
#define GRT_GPU_KERNEL_REC_V1_0_LEN 80
#define GRT_GPU_COPY_REC_V1_0_LEN 56
#define GRT_GPU_LAUNCH_REC_V1_0_LEN 88

_Static_assert(sizeof(struct grt_gpu_kernel_rec) == 96, "gpu kernel layout");
_Static_assert(sizeof(struct grt_gpu_copy_rec) == 72, "gpu copy layout");
_Static_assert(sizeof(struct grt_gpu_block_rec) == 40, "gpu block layout");
_Static_assert(sizeof(struct grt_gpu_launch_rec) == 104, "gpu launch layout");
_Static_assert(sizeof(struct grt_gpu_instrument_rec) == 16, "gpu instrument layout");

#endif
