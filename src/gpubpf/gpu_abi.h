/* The device ABI of GPU eBPF programs: how they are called, what they read, map layouts. */
#ifndef GRT_GPUBPF_GPU_ABI_H
#define GRT_GPUBPF_GPU_ABI_H

#include <stdint.h>

/*
 * This header is shared by the translator (which emits PTX following it), the
 * attach rewriter and the injected library (which allocate and fill what it
 * describes), the reference interpreter (which simulates it byte for byte)
 * and the host-side decoders (which read it back). Plain C, no libbpf: the
 * injected library includes it.
 *
 * All device structures are little-endian, naturally aligned, and read or
 * written with 8-byte granularity where possible.
 */

/* --- Program kinds (the object's section names) --------------------------------------- */

enum grt_bpf_attach {
	GRT_BPF_ATTACH_ENTRY = 1,      /* "kprobe/<kernel>": every thread, at kernel entry */
	GRT_BPF_ATTACH_EXIT = 2,       /* "kretprobe/<kernel>": every thread, at each ret/exit */
	GRT_BPF_ATTACH_MEMCAPTURE = 3, /* "kprobe/__memcapture": before every global load/store */
};

/* --- Map types ------------------------------------------------------------------------ */

/* bpftime's GPU map type numbers, kept so that its programs load unchanged. */
#define GRT_BPF_MAP_PERGPUTD_ARRAY 1502 /* one value per GPU thread per key */
#define GRT_BPF_MAP_GPU_ARRAY 1503	/* one value per key, shared by every thread */
#define GRT_BPF_MAP_GPU_RINGBUF 1527	/* events to the host */

/*
 * Standard types accepted and mapped onto the same device layouts:
 * BPF_MAP_TYPE_HASH (1), BPF_MAP_TYPE_ARRAY (2, like 1503), BPF_MAP_TYPE_PERF_EVENT_ARRAY
 * (4, like 1527), BPF_MAP_TYPE_PERCPU_ARRAY (6, one value per SM), BPF_MAP_TYPE_RINGBUF
 * (27, like 1527).
 */

/* --- Helper ids ----------------------------------------------------------------------- */

enum grt_bpf_helper {
	GRT_BPF_FN_MAP_LOOKUP = 1,
	GRT_BPF_FN_MAP_UPDATE = 2,
	GRT_BPF_FN_MAP_DELETE = 3,
	GRT_BPF_FN_KTIME_GET_NS = 5, /* CLOCK_MONOTONIC, from %globaltimer and the calibration */
	GRT_BPF_FN_TRACE_PRINTK = 6,
	GRT_BPF_FN_SMP_PROCESSOR_ID = 8, /* %smid */
	GRT_BPF_FN_GET_PID_TGID = 14,	 /* the host process: env.pid_tgid */
	GRT_BPF_FN_PERF_EVENT_OUTPUT = 25,
	GRT_BPF_FN_RINGBUF_OUTPUT = 130,
	GRT_BPF_FN_RINGBUF_RESERVE = 131,
	GRT_BPF_FN_RINGBUF_SUBMIT = 132,
	GRT_BPF_FN_RINGBUF_DISCARD = 133,
	/* bpftime's GPU helpers */
	GRT_BPF_FN_PUTS = 501,
	GRT_BPF_FN_GLOBALTIMER = 502,
	GRT_BPF_FN_BLOCK_IDX = 503,  /* (u64 *x, u64 *y, u64 *z): %ctaid */
	GRT_BPF_FN_BLOCK_DIM = 504,  /* (u64 *x, u64 *y, u64 *z): %ntid */
	GRT_BPF_FN_THREAD_IDX = 505, /* (u64 *x, u64 *y, u64 *z): %tid */
	GRT_BPF_FN_MEMBAR = 506,     /* membar.sys */
	GRT_BPF_FN_EXIT = 507,	     /* refused: ending the application's thread breaks it */
	GRT_BPF_FN_GRID_DIM = 508,   /* (u64 *x, u64 *y, u64 *z): %nctaid */
	GRT_BPF_FN_SM_ID = 509,
	GRT_BPF_FN_WARP_ID = 510,
	GRT_BPF_FN_LANE_ID = 511,
};

/* --- The device function -------------------------------------------------------------- */

/*
 * A program becomes the PTX body of
 *
 *   .func NAME(.reg .b64 %env, .reg .b64 %c0, .reg .b64 %c1, ...)
 *
 * %env is the generic address of a struct grt_bpf_env. %c0.. are the context
 * fields the program reads, in the order of their bits in the translation's
 * ctx_fields mask (enum grt_bpf_kernel_field / grt_bpf_mem_field); a field
 * the program never reads is not passed. R1 (the context pointer) is
 * virtual: a load from it is a register read of the matching argument, so a
 * context costs nothing and lives nowhere in memory. The return value (R0)
 * is ignored, as in bpftime.
 *
 * ptxas does not inline calls of .func, so the attach rewriter pastes the
 * body into the kernel inside a nested { } block, which scopes its
 * registers, labels and local stack (gpubpf_attach.h). The .func form is what
 * `grtrace bpf check --ptx` writes and what a kernel calls when inlining
 * would grow it too much.
 */

/* The context of kprobe/kretprobe programs, as the program sees it (R1). */
#define GRT_BPF_CTX_PARAMS 16
struct grt_bpf_kernel_ctx {
	/*
	 * The kernel's parameters: scalar ones (integer, float as bits) zero-extended
	 * to 64 bits; aggregates, parameters beyond the kernel's own, and those past
	 * GRT_BPF_CTX_PARAMS read as 0.
	 */
	uint64_t param[GRT_BPF_CTX_PARAMS];
	uint32_t kernel_id; /* the instrumented kernel, as numbered by the attacher */
	uint32_t reserved;
};

/* Bits of the ctx_fields mask of an entry/exit program: param[i] is bit i. */
enum grt_bpf_kernel_field {
	GRT_BPF_KCTX_KERNEL_ID = GRT_BPF_CTX_PARAMS,
	GRT_BPF_KCTX_NR_FIELDS,
};

/* The context of kprobe/__memcapture programs. */
struct grt_bpf_mem_ctx {
	uint64_t addr;	    /* the address accessed (first byte) */
	uint32_t size;	    /* bytes accessed */
	uint32_t flags;	    /* enum grt_bpf_mem_flags */
	uint32_t kernel_id; /* as in grt_bpf_kernel_ctx */
	uint32_t site;	    /* the access's number in its kernel, in text order from 0 */
};

enum grt_bpf_mem_flags {
	GRT_BPF_MEM_STORE = 1,	 /* st; otherwise a load */
	GRT_BPF_MEM_GENERIC = 2, /* a generic-space access found to point at global memory */
};

enum grt_bpf_mem_field {
	GRT_BPF_MCTX_ADDR,
	GRT_BPF_MCTX_SIZE,
	GRT_BPF_MCTX_FLAGS,
	GRT_BPF_MCTX_KERNEL_ID,
	GRT_BPF_MCTX_SITE,
	GRT_BPF_MCTX_NR_FIELDS,
};

/* --- The environment ------------------------------------------------------------------ */

#define GRT_BPF_ENV_MAGIC 0x46504247u /* "GBPF" */
#define GRT_BPF_ENV_VERSION 1u
#define GRT_BPF_MAX_MAPS 64u /* map slots of one session, over all its objects */

/*
 * One per session and device, in device memory, written by the host before
 * the first instrumented launch and read-only on the device (ld.global.nc).
 * The kernel receives its address in the extra parameter the attach
 * rewriter appends; 0 turns every program off for that launch.
 */
struct grt_bpf_env {
	uint32_t magic;		  /* GRT_BPF_ENV_MAGIC */
	uint32_t version;	  /* GRT_BPF_ENV_VERSION */
	uint32_t thread_capacity; /* threads per-thread maps hold; higher thread ids get NULL */
	uint32_t reserved;
	uint64_t pid_tgid; /* bpf_get_current_pid_tgid(): tgid << 32 | tid of the host process */
	/*
	 * ktime: CLOCK_MONOTONIC = mono_ref + (((int64)(globaltimer - gpu_ref)) * clock_mult >>
	 * 32), with the 128-bit product's bits 32..95. clock_mult is 1 << 32 for equal rates.
	 */
	uint64_t clock_gpu_ref;
	uint64_t clock_mono_ref;
	uint64_t clock_mult;
	uint64_t printk_ring; /* device address of the printk/puts ring, 0: lines are dropped */
	uint64_t map[GRT_BPF_MAX_MAPS]; /* device address of each map's storage, by map slot */
};

#define GRT_BPF_ENV_OFF_THREAD_CAPACITY 8
#define GRT_BPF_ENV_OFF_PID_TGID 16
#define GRT_BPF_ENV_OFF_CLOCK_GPU_REF 24
#define GRT_BPF_ENV_OFF_CLOCK_MONO_REF 32
#define GRT_BPF_ENV_OFF_CLOCK_MULT 40
#define GRT_BPF_ENV_OFF_PRINTK_RING 48
#define GRT_BPF_ENV_OFF_MAP 56

/* --- Map layouts ---------------------------------------------------------------------- */

/*
 * Values are stored with a stride of the value size rounded up to 8 bytes, so
 * every value is 8-byte aligned (as in the kernel's array maps).
 *
 * ARRAY, GPU_ARRAY (1503): max_entries values back to back; key k at k * stride.
 *
 * PERCPU_ARRAY: one value per SM: key k of SM s at (k * GRT_BPF_SM_SLOTS + s) * stride.
 * Threads of SMs numbered GRT_BPF_SM_SLOTS or higher get NULL. Many warps share
 * an SM at once: per-SM values are not exclusive the way per-CPU values are,
 * so updates need atomics.
 *
 * ARRAY or GPU_ARRAY kept per SM (a counter only added to, gpubpf_stripe_counters):
 * key k of SM s at (k * GRT_BPF_SM_SLOTS + (s % GRT_BPF_SM_SLOTS)) * grt_bpf_stripe_stride(),
 * each copy on 128-byte lines of its own: copies that shared a line would queue
 * their SMs' atomics behind one another again.
 *
 * PERGPUTD_ARRAY (1502): one value per thread, key-major so that a warp's 32
 * threads touch adjacent values: key k of thread t at (k * thread_capacity + t) * stride,
 * with t the thread's linear id in the grid,
 *   block_linear  = ctaid.x + nctaid.x * (ctaid.y + nctaid.y * ctaid.z)
 *   thread_linear = tid.x + ntid.x * (tid.y + ntid.y * tid.z)
 *   t             = block_linear * (ntid.x * ntid.y * ntid.z) + thread_linear
 * Threads with t >= env.thread_capacity get NULL from lookups.
 *
 * HASH: open addressing over grt_bpf_hash_capacity(max_entries) slots of
 * GRT_BPF_HASH_SLOT_HEAD + key stride + value stride bytes each:
 *   uint32_t state (enum grt_bpf_hash_state), uint32_t pad, key, value.
 * A key's home slot is grt_bpf_hash_home(); probing is linear. A free slot is
 * claimed with a 32-bit CAS EMPTY -> BUSY, the key and value written, then the
 * state set to FULL. Two threads inserting one key meet at the same slot (the
 * loser waits for BUSY to end and compares keys), so a key is never stored
 * twice. Deleting marks the slot DELETED and keeps the key: the slot stays the
 * key's, and a later update of the key revives it. A full table makes updates
 * of new keys fail with -E2BIG.
 *
 * RINGBUF, PERF_EVENT_ARRAY, GPU_RINGBUF (1527): a struct grt_bpf_ring of
 * max_entries * (value_size + record header) bytes for 1527 and
 * PERF_EVENT_ARRAY (bpftime sizes them in events), max_entries bytes for RINGBUF.
 */
#define GRT_BPF_SM_SLOTS 256u
#define GRT_BPF_HASH_SLOT_HEAD 8u

enum grt_bpf_hash_state {
	GRT_BPF_HASH_EMPTY = 0,
	GRT_BPF_HASH_BUSY = 1,
	GRT_BPF_HASH_FULL = 2,
	GRT_BPF_HASH_DELETED = 3,
};

static inline uint32_t grt_bpf_stride(uint32_t size)
{
	return (size + 7u) & ~7u;
}

/* The distance between two SMs' copies of a value kept per SM: whole 128-byte lines. */
static inline uint32_t grt_bpf_stripe_stride(uint32_t size)
{
	return (grt_bpf_stride(size) + 127u) & ~127u;
}

/* Slots of a hash map: max_entries rounded up to a power of two (at least 2). */
static inline uint64_t grt_bpf_hash_capacity(uint32_t max_entries)
{
	uint64_t cap = 2;

	while (cap < max_entries)
		cap <<= 1;
	return cap;
}

#define GRT_BPF_HASH_MULT 0x9E3779B97F4A7C15ull

/*
 * The home slot of a key: its bytes as little-endian 64-bit words (the last
 * one zero-padded), h = (h ^ word) * GRT_BPF_HASH_MULT from h = 0, slot =
 * (h >> 32) & (capacity - 1). The translator emits the same steps in PTX.
 */
static inline uint64_t grt_bpf_hash_home(const uint8_t *key, uint32_t key_size, uint64_t capacity)
{
	uint64_t h = 0;

	for (uint32_t i = 0; i < key_size; i += 8) {
		uint64_t w = 0;

		for (uint32_t b = 0; b < 8 && i + b < key_size; b++)
			w |= (uint64_t)key[i + b] << (8 * b);
		h = (h ^ w) * GRT_BPF_HASH_MULT;
	}
	return (h >> 32) & (capacity - 1);
}

/* --- Ring buffers --------------------------------------------------------------------- */

/*
 * A ring is filled from offset 0 and emptied whole by the host between
 * launches (after every launch that could write it finished), so it never
 * wraps: `head` counts the bytes reserved since the last reset, and a
 * reservation that does not fit counts its events in `dropped` instead.
 * Reservations are made per warp: the lanes that emit together at one call
 * site take their space with one atomic add by the lowest lane.
 *
 * Drops are counted in GRT_BPF_RING_DROP_SLOTS counters after the header, the
 * warp's SM choosing one (smid % slots), each on its own 128-byte line: a full
 * ring is the common case of a busy kernel, and one counter for every warp of
 * the grid serialized their atomics (a ring event per thread of a 2^20-thread
 * vector add cost 18x its run time). The count is `dropped` (written by the
 * host) plus every slot: gpubpf_ring_dropped(). The slot's second word says
 * the ring is exhausted (a lane of that SM saw head at or past the capacity):
 * that SM's warps then drop without reading head, also one shared address.
 * A drop leaves head at or past the capacity, so a reader that finds head
 * below it knows that every slot is 0 and need not read them.
 *
 * Each record is a struct grt_bpf_ring_rec followed by the data, padded to 8
 * bytes. The writer stores the data first and the header's len last (after a
 * memory barrier), so a reader that polls while kernels run stops at the
 * first record whose len is still 0: the host zeroes the data area on reset.
 */
struct grt_bpf_ring {
	uint64_t head;	   /* bytes reserved (may exceed capacity: those records were dropped) */
	uint64_t dropped;  /* events that did not fit */
	uint64_t capacity; /* bytes of data[], a multiple of 8 */
	uint64_t reserved;
	/* uint8_t data[capacity]; */
};

#define GRT_BPF_RING_DROP_OFF 32u
#define GRT_BPF_RING_DROP_SLOTS 256u
#define GRT_BPF_RING_DROP_STRIDE 128u
#define GRT_BPF_RING_EXHAUSTED 8u /* a slot's "exhausted" word, after its counter */
#define GRT_BPF_RING_HEAD_SIZE (GRT_BPF_RING_DROP_OFF + GRT_BPF_RING_DROP_SLOTS * GRT_BPF_RING_DROP_STRIDE)

/* The offset, from the ring's start, of the drop counter that the SM smid adds to. */
static inline uint32_t grt_bpf_ring_drop_slot(uint32_t smid)
{
	return GRT_BPF_RING_DROP_OFF + (smid % GRT_BPF_RING_DROP_SLOTS) * GRT_BPF_RING_DROP_STRIDE;
}

struct grt_bpf_ring_rec {
	uint32_t len;  /* bytes of data; 0: not committed yet; GRT_BPF_RING_DISCARDED bit: skip */
	uint16_t prog; /* the program's number in the session */
	uint16_t smid;
	uint64_t gpu_ns; /* %globaltimer when the record was reserved */
};

#define GRT_BPF_RING_REC_SIZE 16u
#define GRT_BPF_RING_DISCARDED 0x80000000u
#define GRT_BPF_RING_LEN_MASK 0x7fffffffu

/*
 * The printk ring (env.printk_ring) carries bpf_trace_printk and puts lines as
 * ring records whose data is a struct grt_bpf_printk followed by fmt_len
 * bytes of the format (or of the string, for puts). The host formats them.
 */
struct grt_bpf_printk {
	uint32_t kind;	  /* enum grt_bpf_printk_kind */
	uint32_t fmt_len; /* bytes following, at most GRT_BPF_PRINTK_MAX */
	uint64_t arg[3];
};

enum grt_bpf_printk_kind {
	GRT_BPF_PRINTK = 1,
	GRT_BPF_PUTS = 2,
};

#define GRT_BPF_PRINTK_MAX 256u /* bytes of a format or string copied; longer ones are cut */

_Static_assert(sizeof(struct grt_bpf_kernel_ctx) == 136, "kernel ctx layout");
_Static_assert(sizeof(struct grt_bpf_mem_ctx) == 24, "mem ctx layout");
_Static_assert(sizeof(struct grt_bpf_env) == 56 + 8 * GRT_BPF_MAX_MAPS, "env layout");
_Static_assert(sizeof(struct grt_bpf_ring) == GRT_BPF_RING_DROP_OFF, "ring layout");
_Static_assert(!(GRT_BPF_RING_DROP_SLOTS & (GRT_BPF_RING_DROP_SLOTS - 1)),
	       "drop slots: a power of two (the device takes smid & (slots - 1))");
_Static_assert(sizeof(struct grt_bpf_ring_rec) == GRT_BPF_RING_REC_SIZE, "ring record layout");
_Static_assert(sizeof(struct grt_bpf_printk) == 32, "printk layout");

#endif
