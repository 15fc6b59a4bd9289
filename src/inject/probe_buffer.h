/* Layout of the device buffer the PTX probes write; shared by rewriter and inject library. */
#ifndef GRT_PROBE_BUFFER_H
#define GRT_PROBE_BUFFER_H

#include <stdint.h>

/*
 * One buffer per launch (or per launch slot of a pool), in device memory:
 *
 *   struct grt_probe_head                    64 bytes, written by the host only
 *   block mode only:
 *     uint32_t hist[GRT_PROBE_HIST_BUCKETS]      written by the summarizer
 *     struct grt_probe_sm[GRT_PROBE_SM_SLOTS]   per-SM totals, the same
 *   struct grt_probe_span[0 .. capacity-1]   written by the probes
 *
 * The rewritten kernel takes one extra trailing `.param .u64`
 * (ptx_kernel_result.param_index / param_offset say where): the buffer's
 * device address in its low 48 bits and the launch's tag in the top 16.
 *
 * Block mode stores one span per block, every launch, with one plain store
 * by the warp that completes the block: no global atomics in the
 * application's kernel (per-SM reductions there cost ~12 points of a 1M-element
 * vector add's time on an H100, bench/RESULTS.md). The library summarizes
 * the spans on the device afterwards (ptx_summarize.h: one CTA per launch,
 * shared-memory atomics), which writes the histogram and the SM slots the
 * device can use (~4.6 KiB on an H100); the host reads only those, whatever
 * the grid, unless the launch's per-block records were asked for, when it
 * reads the spans too. Thread mode stores a span per thread.
 *
 * Spans are indexed, not appended: block mode writes span number
 *   block_linear = ctaid.x + nctaid.x * (ctaid.y + nctaid.y * ctaid.z)
 * and thread mode span block_linear * block_threads + thread_linear. The
 * launcher only hands a kernel a buffer whose capacity covers every block
 * (thread) of the launch, so the probes do not check the index.
 *
 * Every span carries the tag of the launch that wrote it. The launcher gives
 * each use of a slot a new tag, so a span left from an earlier launch (a block
 * that never finished, a trap) is told apart without zeroing the buffer
 * between launches: the device writes each span with one 16-byte store and
 * nothing else, no atomics on global memory, no counters to reset.
 */

#define GRT_PROBE_MAGIC 0x47525450u /* "PTRG" little-endian: written by the host */
#define GRT_PROBE_HEAD_SIZE 64u
#define GRT_PROBE_TAG_SHIFT 48
#define GRT_PROBE_ADDR_MASK ((1ull << GRT_PROBE_TAG_SHIFT) - 1)

enum grt_probe_mode {
	GRT_PROBE_BLOCK = 1,  /* one span per block: first thread's entry to last thread's exit */
	GRT_PROBE_THREAD = 2, /* one span per thread: its entry to its exit (the heavy probe) */
};

/* Per-SM totals of one launch; SM ids at or above GRT_PROBE_SM_SLOTS share the last slot. */
#define GRT_PROBE_SM_SLOTS 256u
#define GRT_PROBE_HIST_BUCKETS 64u /* half octaves of the block duration in ns: see below */

struct grt_probe_sm {
	uint64_t first_start_inv; /* ~(earliest block start): max of complements, zero is "none" */
	uint64_t last_end;	  /* latest block end */
	uint64_t busy_ns;	  /* sum of block durations */
	uint32_t blocks;	  /* blocks that completed on it */
	uint32_t max_ns;	  /* longest block, saturated at 2^32-1 ns */
};
_Static_assert(sizeof(struct grt_probe_sm) == 32, "SM totals are 32 bytes");

#define GRT_PROBE_HIST_OFF GRT_PROBE_HEAD_SIZE
#define GRT_PROBE_SM_OFF (GRT_PROBE_HIST_OFF + GRT_PROBE_HIST_BUCKETS * 4u)
#define GRT_PROBE_AGG_END (GRT_PROBE_SM_OFF + GRT_PROBE_SM_SLOTS * 32u)

/* Bytes from the start of a block-mode buffer through its first sm_slots SM slots. */
static inline uint64_t grt_probe_totals_bytes(unsigned sm_slots)
{
	return GRT_PROBE_SM_OFF + (uint64_t)sm_slots * sizeof(struct grt_probe_sm);
}

/*
 * Histogram bucket of a duration d (ns, saturated to 32 bits): with
 * e = floor(log2(d | 1)), bucket 2e + (the bit below the leading one).
 * Bucket b covers [lo, 2 lo) / 2 halves: see grt_probe_bucket_low().
 */
static inline unsigned grt_probe_bucket(uint32_t d)
{
	unsigned e = 31u - (unsigned)__builtin_clz(d | 1u);

	return 2 * e + (e ? (d >> (e - 1)) & 1u : 0);
}

/* The smallest duration that falls in bucket b. */
static inline uint64_t grt_probe_bucket_low(unsigned b)
{
	unsigned e = b / 2;

	return e ? (1ull << e) + (b & 1 ? 1ull << (e - 1) : 0) : (b & 1 ? 1 : 0);
}

struct grt_probe_head {
	uint32_t magic;	      /* GRT_PROBE_MAGIC */
	uint32_t mode;	      /* enum grt_probe_mode, checked by the host only */
	uint64_t capacity;    /* number of spans after the head */
	uint64_t reserved[6]; /* zero */
};
_Static_assert(sizeof(struct grt_probe_head) == GRT_PROBE_HEAD_SIZE, "probe head is 64 bytes");

/*
 * What one block (thread) did. Block mode: thread (0,0,0) takes start_ns at
 * entry into shared memory; the warp whose exit completes the block (counted
 * in shared memory, one atomic per converged warp group) stores the span.
 * A block with a thread that never reaches an exit the probe sees stores
 * nothing: its span keeps an old tag.
 */
struct grt_probe_span {
	uint64_t start_ns; /* %globaltimer at entry */
	uint32_t dur;	   /* exit - entry, encoded: see grt_probe_dur_ns() */
	uint16_t smid;	   /* %smid at exit (low 16 bits) */
	uint16_t tag;	   /* the launch's tag (top 16 bits of the parameter) */
};
_Static_assert(sizeof(struct grt_probe_span) == 16, "a span is 16 bytes");

/* Durations from 2^31 ns (2.1 s) on are stored in 1024-ns units with the top bit set. */
#define GRT_PROBE_DUR_COARSE 0x80000000u
#define GRT_PROBE_DUR_SHIFT 10

static inline uint64_t grt_probe_dur_ns(uint32_t dur)
{
	return dur & GRT_PROBE_DUR_COARSE ? (uint64_t)(dur & ~GRT_PROBE_DUR_COARSE)
						<< GRT_PROBE_DUR_SHIFT
					  : dur;
}

static inline uint32_t grt_probe_dur_encode(uint64_t ns)
{
	uint64_t coarse = ns >> GRT_PROBE_DUR_SHIFT;

	if (ns < GRT_PROBE_DUR_COARSE)
		return (uint32_t)ns;
	return GRT_PROBE_DUR_COARSE |
	       (uint32_t)(coarse < ~GRT_PROBE_DUR_COARSE ? coarse : ~GRT_PROBE_DUR_COARSE);
}

/* The kernel parameter for a buffer at dptr and a launch's tag (never 0: fresh memory is 0). */
static inline uint64_t grt_probe_param(uint64_t dptr, uint16_t tag)
{
	return dptr | (uint64_t)tag << GRT_PROBE_TAG_SHIFT;
}

/* Where the spans start. */
static inline uint64_t grt_probe_spans_off(enum grt_probe_mode mode)
{
	return mode == GRT_PROBE_BLOCK ? GRT_PROBE_AGG_END : GRT_PROBE_HEAD_SIZE;
}

/* Bytes of a buffer holding `slots` spans. */
static inline uint64_t grt_probe_buffer_size(enum grt_probe_mode mode, uint64_t slots)
{
	return grt_probe_spans_off(mode) + slots * sizeof(struct grt_probe_span);
}

#endif
