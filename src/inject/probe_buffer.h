/* Layout of the device buffer the PTX probes write; shared by rewriter and inject library. */
#ifndef GRT_PROBE_BUFFER_H
#define GRT_PROBE_BUFFER_H

#include <stdint.h>

/*
 * One buffer per launch (or per launch slot of a pool), in device memory:
 *
 *   struct grt_probe_head                    64 bytes
 *   record[0 .. capacity-1]                  grt_probe_block_rec or grt_probe_thread_rec
 *
 * The rewritten kernel takes the buffer's device address as an extra trailing
 * `.param .u64` (ptx_kernel_result.param_index / param_offset say where).
 *
 * Records are indexed, not appended: a block writes record number
 *   block_linear = ctaid.x + nctaid.x * (ctaid.y + nctaid.y * ctaid.z)
 * and in thread mode a thread writes block_linear * block_threads + thread_linear.
 * This keeps the probes free of a global slot counter and of any barrier, so
 * each block or thread knows its slot without talking to the others.
 *
 * The launcher, before each launch (same stream): writes the head (magic,
 * mode, capacity) and zeroes the records it expects to read (at least
 * min(capacity, blocks or threads of the launch)); the probes count on zeroed
 * `threads_done` counters. After the launch completes it copies back the head
 * and the records. A slot whose index is >= capacity is not written and counts
 * once in `lost` (blocks: by thread 0 at entry; threads: by each thread at exit).
 */

#define GRT_PROBE_MAGIC 0x47525450u /* "PTRG" little-endian: written by the host */
#define GRT_PROBE_HEAD_SIZE 64u

enum grt_probe_mode {
	GRT_PROBE_BLOCK = 1, /* one record per block: entry time, SM, last thread's exit time */
	GRT_PROBE_THREAD =
	    2, /* one record per thread: entry and exit time (the heavy benchmark probe) */
};

struct grt_probe_head {
	uint32_t magic;	   /* host: GRT_PROBE_MAGIC */
	uint32_t mode;	   /* host: enum grt_probe_mode, checked by the host only */
	uint64_t capacity; /* host: number of record slots after the head */
	uint64_t lost;	   /* device: blocks/threads whose slot index was >= capacity */
	uint64_t
	    done; /* device: records completed (block mode: end written; thread mode: stored) */
	uint64_t reserved[4]; /* zero */
};
_Static_assert(sizeof(struct grt_probe_head) == GRT_PROBE_HEAD_SIZE, "probe head is 64 bytes");

/* Offsets the PTX probes use; they must match the structs. */
#define GRT_PROBE_OFF_CAPACITY 8
#define GRT_PROBE_OFF_LOST 16
#define GRT_PROBE_OFF_DONE 24

/*
 * Block mode. start_ns is written by thread (0,0,0) after the kernel's
 * declarations, before its first instruction; end_ns by the thread whose
 * exit brought threads_done to the block size (exit counting is aggregated
 * per converged warp group: its lowest lane adds the group's size).
 * start_ns == 0: the block never started (or its slot was out of range);
 * end_ns == 0: not every thread reached an exit the probe sees (a thread
 * terminated inside a device function, or a trap).
 */
struct grt_probe_block_rec {
	uint64_t start_ns; /* %globaltimer at block entry (thread 0) */
	uint64_t end_ns;   /* %globaltimer after the last thread's exit */
	uint32_t block_x;  /* %ctaid */
	uint32_t block_y;
	uint32_t block_z;
	uint32_t smid;	       /* %smid of thread 0 at entry */
	uint32_t threads_done; /* exit counter; equals ntid.x*ntid.y*ntid.z when complete */
	uint32_t pad;
};
_Static_assert(sizeof(struct grt_probe_block_rec) == 40, "block record is 40 bytes");

#define GRT_PROBE_BLOCK_OFF_START 0
#define GRT_PROBE_BLOCK_OFF_END 8
#define GRT_PROBE_BLOCK_OFF_X 16
#define GRT_PROBE_BLOCK_OFF_Y 20
#define GRT_PROBE_BLOCK_OFF_Z 24
#define GRT_PROBE_BLOCK_OFF_SMID 28
#define GRT_PROBE_BLOCK_OFF_DONE 32

/* Thread mode: every thread stores its own record at exit. */
struct grt_probe_thread_rec {
	uint64_t start_ns;	/* %globaltimer at the thread's entry */
	uint64_t end_ns;	/* %globaltimer at the thread's exit */
	uint32_t block_linear;	/* low 32 bits of the block's linear index */
	uint32_t thread_linear; /* tid.x + ntid.x * (tid.y + ntid.y * tid.z) */
};
_Static_assert(sizeof(struct grt_probe_thread_rec) == 24, "thread record is 24 bytes");

#define GRT_PROBE_THREAD_OFF_START 0
#define GRT_PROBE_THREAD_OFF_END 8
#define GRT_PROBE_THREAD_OFF_BLOCK 16
#define GRT_PROBE_THREAD_OFF_THREAD 20

/* Bytes of a buffer holding `slots` records of `mode`. */
static inline uint64_t grt_probe_buffer_size(enum grt_probe_mode mode, uint64_t slots)
{
	uint64_t rec = mode == GRT_PROBE_THREAD ? sizeof(struct grt_probe_thread_rec)
						: sizeof(struct grt_probe_block_rec);
	return GRT_PROBE_HEAD_SIZE + slots * rec;
}

#endif
