/* Per-thread rings of CUDA calls in shared memory: written by libgrtrace-inject.so, read by the recorder. */
#ifndef GRT_CALL_RINGS_H
#define GRT_CALL_RINGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The in-process path of the cuda source (docs/cuda.md, "In-process
 * recording"). One shared file per recording: a header page, an array of
 * ring headers, then each ring's data area. A thread of a traced process
 * claims a free ring at its first recorded call (one CAS on the ring's
 * state), keeps it until it exits, and is then its only producer: writing a
 * call is a few stores and one release store of `head`, with no lock and no
 * system call. The recorder is the only consumer and owns `tail`. A full
 * ring never blocks the thread: the call is counted in the ring's `lost`.
 *
 * Records are 8-byte aligned: u32 length | CALL_REC_PAD, u32 type, payload.
 * A record that would cross the end of the data area is preceded by a pad
 * record filling the rest. So is the first record after the recorder caught
 * up, once the thread is past the first quarter of the data area: writing
 * starts over at the beginning, and a thread whose calls the recorder keeps
 * up with writes the same quarter of its ring over and over, which its CPU's
 * caches keep, rather than sweeping the whole ring through them and evicting
 * the application's and the driver's data. Until the recorder has read the
 * pad, the ring holds only what lies before it, so the thread starts over
 * only where that took long to write (the producer's may_start_over: many
 * drain periods, at the rate it writes now) and the recorder will have read
 * the pad long before the thread is back there. Rings under 256 KiB, already
 * small, go round as they are, and so do rings over 16 MiB.
 *
 * A call is written where it will stay: its entry at the call's start, its
 * results at the return, then `head` moves past it. While the call is inside
 * the driver, `pending` holds its length, so that a recording that stops
 * while a thread is stuck in the driver still sees the call (a no-return
 * record, as the uprobe path gives).
 */

#define CALL_RINGS_MAGIC 0x47524352u /* "RCRG" */
#define CALL_RINGS_VERSION 5u
#define CALL_RINGS_HEAD_BYTES 4096u
#define CALL_REC_HDR 8u
#define CALL_REC_PAD 0x80000000u
#define CALL_REC_LEN_MASK 0x00ffffffu
/*
 * Where a caught-up thread starts over: a quarter of the ring. Rings under 256 KiB never do,
 * nor rings over 16 MiB, whose pad (up to three quarters) would not fit a record's length.
 */
#define CALL_RING_RESTART_MIN (256u << 10)
#define CALL_RING_RESTART_MAX (16u << 20)
#define CALL_RING_RESTART_AT(size)                                                                 \
	((size) >= CALL_RING_RESTART_MIN && (size) <= CALL_RING_RESTART_MAX ? (size) / 4 : ~0u)
_Static_assert(CALL_RING_RESTART_MAX - CALL_RING_RESTART_MAX / 4 - CALL_REC_HDR <=
		   CALL_REC_LEN_MASK,
	       "a start-over pad's length fits its record's");

enum call_ring_state {
	CALL_RING_FREE = 0,
	CALL_RING_OWNED = 1,  /* a live thread writes it */
	CALL_RING_CLOSED = 2, /* its thread exited: drain, then free */
};

enum call_rec_type {
	/*
	 * struct cuda_event (sources/cuda.h) whose stack_id holds the number of
	 * user stack ips that follow it, then its text (text_len bytes)
	 */
	CALL_REC_CALL = 1,
	/* struct call_rec_thread (call_launch.h): the pid, tid, ppid and name of what follows */
	CALL_REC_THREAD = 2,
	/* struct call_rec_launch (call_launch.h): a launch without a stack, short */
	CALL_REC_LAUNCH = 3,
};

/* What the recorder asks of every process (set before the command starts; read-only). */
struct call_rings_config {
	uint32_t launch_return_every; /* --launch-returns: 1 every launch, 0 none, N one in N */
	uint32_t launch_stacks;	      /* 1: launches carry user stacks */
	uint32_t stacks;	      /* 0: no user stacks at all (GRT_CUDA_NO_STACKS) */
	uint32_t args;		      /* 0: no kernel argument words (GRT_CUDA_NO_ARGS) */
	uint32_t tsc; /* 1: the recorder turns raw TSC values into CLOCK_MONOTONIC (tsc_timeline.h) */
};

/* What a ring's timestamps are, as the thread that claimed it says. */
enum call_ring_clock {
	CALL_CLOCK_MONOTONIC = 0, /* CLOCK_MONOTONIC ns, as every other record's */
	CALL_CLOCK_TSC = 1,	  /* the raw counter, converted by the recorder */
};

struct call_rings_head {
	uint32_t magic;
	uint32_t version;
	uint32_t nrings;
	uint32_t ring_bytes; /* data bytes per ring, a power of two */
	struct call_rings_config cfg;
	_Atomic uint64_t unringed; /* calls lost: every ring was taken */
	_Atomic uint32_t processes; /* processes that opened the file */
	/* threads that found no room in /dev/shm for their ring's pages, and the calls they lost */
	_Atomic uint32_t roomless;
	_Atomic uint64_t roomless_calls;
};

_Static_assert(sizeof(struct call_rings_head) <= CALL_RINGS_HEAD_BYTES, "head fits its page");

struct call_ring {
	_Atomic uint32_t state; /* enum call_ring_state */
	uint32_t pid;
	uint32_t tid;
	/* enum call_ring_clock, set by the thread when it claims the ring, before its first record */
	_Atomic uint32_t clock;
	_Atomic uint64_t lost; /* calls that did not fit (producer) */
	/* 1 once a thread gave the data area its memory: the next owner takes no more room */
	_Atomic uint32_t pages_ready;
	uint8_t pad0[36];
	/*
	 * The producer's cache line, written at every call; the consumer reads
	 * it once a drain round. Nothing the consumer reads per record may share
	 * it: each read would pull the line from the producer's CPU and make
	 * the producer's next store fetch it back.
	 */
	_Atomic uint64_t head;
	_Atomic uint32_t pending; /* length of the call inside the driver now, 0 none */
	/* calls written after the one `pending` covers, inside it: unread if recording stops now */
	_Atomic uint32_t unpublished;
	uint8_t pad1[48];
	_Atomic uint64_t tail; /* consumer; own cache line */
	uint8_t pad2[56];
};

_Static_assert(sizeof(struct call_ring) == 192, "ring header layout");
_Static_assert(offsetof(struct call_ring, pending) / 64 == offsetof(struct call_ring, head) / 64 &&
		       offsetof(struct call_ring, clock) / 64 != offsetof(struct call_ring, head) / 64,
	       "pending, written at every call, sits on the producer's line, apart from the clock");

static inline uint64_t call_rings_size(uint32_t nrings, uint32_t ring_bytes)
{
	uint64_t headers = (uint64_t)nrings * sizeof(struct call_ring);

	headers = (headers + 4095) & ~4095ull;
	return CALL_RINGS_HEAD_BYTES + headers + (uint64_t)nrings * ring_bytes;
}

static inline struct call_ring *call_rings_ring(struct call_rings_head *h, uint32_t i)
{
	return (struct call_ring *)((uint8_t *)h + CALL_RINGS_HEAD_BYTES) + i;
}

/*
 * Ring i's data area. The geometry is passed in: the recorder uses its own
 * copy, never the shared header, which the traced process could rewrite.
 */
static inline uint8_t *call_rings_data(struct call_rings_head *h, uint32_t nrings,
				       uint32_t ring_bytes, uint32_t i)
{
	uint64_t headers = ((uint64_t)nrings * sizeof(struct call_ring) + 4095) & ~4095ull;

	return (uint8_t *)h + CALL_RINGS_HEAD_BYTES + headers + (uint64_t)i * ring_bytes;
}

/* Formats a zeroed mapping of call_rings_size() bytes. ring_bytes: power of two >= 4096. */
static inline int call_rings_init(struct call_rings_head *h, uint32_t nrings, uint32_t ring_bytes,
				  const struct call_rings_config *cfg)
{
	if (!nrings || ring_bytes < 4096 || (ring_bytes & (ring_bytes - 1)))
		return -EINVAL;
	h->nrings = nrings;
	h->ring_bytes = ring_bytes;
	h->cfg = *cfg;
	h->version = CALL_RINGS_VERSION;
	atomic_store_explicit((_Atomic uint32_t *)&h->magic, CALL_RINGS_MAGIC,
			      memory_order_release);
	return 0;
}

/* Checks a mapping a producer opened: 0, or -EINVAL. */
static inline int call_rings_check(const struct call_rings_head *h, uint64_t map_len)
{
	if (map_len < CALL_RINGS_HEAD_BYTES || h->magic != CALL_RINGS_MAGIC ||
	    h->version != CALL_RINGS_VERSION || !h->nrings || h->ring_bytes < 4096 ||
	    (h->ring_bytes & (h->ring_bytes - 1)) ||
	    call_rings_size(h->nrings, h->ring_bytes) > map_len)
		return -EINVAL;
	return 0;
}

static inline uint32_t call_rec_round8(uint32_t len)
{
	return (len + 7u) & ~7u;
}

/*
 * The producer's own copy of what it needs of its ring's counters, in its
 * thread's memory (both 0 for a ring just claimed): its head, which only it
 * moves, and the consumer's tail as it last read it, a bound the tail only
 * moves past. The ring's header is then only written on the way: a call
 * does not wait for its lines, which a real launch's driver work evicts,
 * before it can tell where its record goes. The tail itself, on the
 * consumer's line, is read only when the bound leaves too little room or
 * the thread would start over.
 */
struct call_ring_producer {
	uint64_t head;
	uint64_t tail_seen;
	uint32_t held; /* records held open under later ones (call_ring_hold) */
};

/*
 * Producer: pad records over bytes (a multiple of 8) of the data area at
 * `at`, each no longer than a record's length field can say.
 */
static inline void call_ring_pad(uint8_t *at, uint32_t bytes)
{
	const uint32_t most = (CALL_REC_LEN_MASK & ~7u) + CALL_REC_HDR;

	while (bytes) {
		uint32_t n = bytes > most ? most : bytes, *word = (uint32_t *)at;

		word[0] = (n - CALL_REC_HDR) | CALL_REC_PAD;
		word[1] = 0;
		at += n;
		bytes -= n;
	}
}

/*
 * Producer: room for a payload of up to len bytes at head, a pad record
 * written first where the data area wraps, or where the thread may start
 * over (may_start_over) and the consumer has caught up. NULL (counted lost)
 * when full. Nothing is visible to the consumer until call_ring_commit().
 */
static inline void *call_ring_reserve(struct call_ring *r, struct call_ring_producer *p,
				      uint8_t *data, uint32_t size, uint32_t type, uint32_t len,
				      bool may_start_over)
{
	uint64_t head = p->head, tail = p->tail_seen;
	uint32_t rec = CALL_REC_HDR + call_rec_round8(len), off = (uint32_t)(head & (size - 1));
	bool restart_here = may_start_over && off >= CALL_RING_RESTART_AT(size);
	uint32_t wrap = off + rec > size ? size - off : 0, pad, *word;

	if (restart_here || head + wrap + rec - tail > size)
		p->tail_seen = tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	pad = wrap || (restart_here && head == tail) ? size - off : 0;
	if (head + pad + rec - tail > size) {
		atomic_fetch_add_explicit(&r->lost, 1, memory_order_relaxed);
		return NULL;
	}
	if (pad) {
		call_ring_pad(data + off, pad);
		/* published with the record itself: the consumer stops at head */
		p->head = head + pad;
		if (!p->held)
			atomic_store_explicit(&r->head, p->head, memory_order_release);
		off = 0;
	}
	word = (uint32_t *)(data + off);
	word[1] = type;
	return word + 2;
}

/*
 * Producer: the reserved record, len bytes long, written after held ones
 * (call_ring_hold): it goes to the consumer with the outermost of them.
 */
static inline void call_ring_append(struct call_ring_producer *p, void *payload, uint32_t len)
{
	((uint32_t *)payload)[-2] = len;
	p->head += CALL_REC_HDR + call_rec_round8(len);
}

/* Producer: the reserved record, len bytes long, goes to the consumer; nothing is held. */
static inline void call_ring_commit(struct call_ring *r, struct call_ring_producer *p,
				    void *payload, uint32_t len)
{
	call_ring_append(p, payload, len);
	atomic_store_explicit(&r->head, p->head, memory_order_release);
}

/*
 * Producer: the record just reserved (at head), up to len bytes, stays open
 * while later records are written after it: a call made inside a call on
 * the same thread. Its bytes are taken now; nothing more reaches the
 * consumer until it is committed with call_ring_commit_held(), since the
 * consumer reads up to head and this record is not finished.
 */
static inline void call_ring_hold(struct call_ring_producer *p, uint32_t len)
{
	p->head += CALL_REC_HDR + call_rec_round8(len);
	p->held++;
}

/*
 * Producer: the innermost held record (held_len bytes taken), len <=
 * held_len bytes long now; a pad record fills what it did not use. When it
 * was the last held, everything after it goes to the consumer with it.
 */
static inline void call_ring_commit_held(struct call_ring *r, struct call_ring_producer *p,
					 void *payload, uint32_t len, uint32_t held_len)
{
	uint32_t *word = (uint32_t *)payload - 2;
	uint32_t used = CALL_REC_HDR + call_rec_round8(len),
		 taken = CALL_REC_HDR + call_rec_round8(held_len);

	if (used < taken)
		call_ring_pad((uint8_t *)word + used, taken - used);
	word[0] = len;
	if (--p->held == 0)
		atomic_store_explicit(&r->head, p->head, memory_order_release);
}

/* A record handed to the consumer; valid until call_ring_release(). */
struct call_ring_record {
	uint32_t type; /* 0: the ring holds garbage from here to head (skipped when released) */
	uint32_t len;
	const void *payload;
	uint64_t next; /* tail after it */
};

/*
 * Consumer, in batches: the record at tail, given a snapshot of head taken
 * with an acquire load. 1 and *out filled (out->next is past it and any pad
 * records before it), or 0 when none is committed before head, out->next
 * then past the pads stepped over. Nothing is released here: the consumer
 * gives the space back when it likes (call_ring_release_to), so a drain of
 * many records costs one store of `tail`, not one each.
 *
 * The producer is the traced process: nothing it wrote is trusted, so a
 * record that would reach past head or past the data area's end is handed
 * out as type 0, which releases everything up to head.
 */
static inline int call_ring_peek(const uint8_t *data, uint32_t size, uint64_t tail, uint64_t head,
				 struct call_ring_record *out)
{
	while (tail != head) {
		uint32_t off = (uint32_t)(tail & (size - 1));
		const uint32_t *word = (const uint32_t *)(data + off);
		uint32_t w = atomic_load_explicit((const _Atomic uint32_t *)word,
						  memory_order_relaxed);
		uint32_t len = w & CALL_REC_LEN_MASK;
		uint64_t span = CALL_REC_HDR + call_rec_round8(len);

		if (head - tail > size || (tail & 7) || span > head - tail || off + span > size) {
			out->type = 0;
			out->len = 0;
			out->payload = NULL;
			out->next = head;
			return 1;
		}
		if (w & CALL_REC_PAD) {
			tail += span;
			continue;
		}
		out->type = word[1] ? word[1] : ~0u;
		out->len = len;
		out->payload = word + 2;
		out->next = tail + span;
		return 1;
	}
	out->next = tail;
	return 0;
}

/* Consumer: everything before tail goes back to the producer. */
static inline void call_ring_release_to(struct call_ring *r, uint64_t tail)
{
	atomic_store_explicit(&r->tail, tail, memory_order_release);
}

/* Consumer, one record at a time: the next record, 1 and *out filled, or 0 when none is committed. */
static inline int call_ring_next(struct call_ring *r, const uint8_t *data, uint32_t size,
				 struct call_ring_record *out)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);

	if (call_ring_peek(data, size, tail, head, out))
		return 1;
	if (out->next != tail)
		call_ring_release_to(r, out->next); /* only pads were passed */
	return 0;
}

static inline void call_ring_release(struct call_ring *r, const struct call_ring_record *rec)
{
	call_ring_release_to(r, rec->next);
}

/*
 * Consumer, in a batch: every record committed before the head read on entry,
 * each handed to fn, and nothing after it; the number handed. What a thread
 * commits meanwhile waits for the next batch: a drain that followed the head
 * while its thread kept pace would never return, and the other rings, unread,
 * would fill. Space goes back to the thread a quarter of the ring at a time
 * and at the end, not after each record: one store to the producer's cache
 * lines per batch. head: a snapshot taken with an acquire load (call_ring_drain
 * takes it on entry).
 */
static inline uint64_t call_ring_drain_to(struct call_ring *r, const uint8_t *data, uint32_t size,
					  uint64_t head,
					  void (*fn)(void *ctx, const struct call_ring_record *rec),
					  void *ctx)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed), released = tail;
	uint64_t handed = 0;
	struct call_ring_record rec;

	while (call_ring_peek(data, size, tail, head, &rec)) {
		fn(ctx, &rec);
		handed++;
		tail = rec.next;
		if (tail - released >= size / 4) {
			call_ring_release_to(r, tail);
			released = tail;
		}
	}
	tail = rec.next; /* past pads before head */
	if (tail != released)
		call_ring_release_to(r, tail);
	return handed;
}

static inline uint64_t call_ring_drain(struct call_ring *r, const uint8_t *data, uint32_t size,
				       void (*fn)(void *ctx, const struct call_ring_record *rec),
				       void *ctx)
{
	return call_ring_drain_to(r, data, size, atomic_load_explicit(&r->head, memory_order_acquire),
				  fn, ctx);
}

#endif
