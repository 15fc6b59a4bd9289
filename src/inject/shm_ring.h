/* A multi-producer, single-consumer message ring in shared memory that never blocks a producer. */
#ifndef GRT_SHM_RING_H
#define GRT_SHM_RING_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The injected library (in every traced process, from any thread) produces;
 * the recorder consumes. The mapping is a header page followed by a
 * power-of-two data area of variable-length records:
 *
 *   word   u32: payload length | SHM_REC_COMMITTED | SHM_REC_PAD
 *   type   u32: the producer's message type
 *   payload, padded to 8 bytes
 *
 * A producer reserves space with one CAS on `head` (positions only grow, the
 * offset is pos & mask), writes its length, the payload, then sets the
 * committed bit with a release store. A record that would cross the end of
 * the data area is preceded by a pad record filling the rest, in the same
 * reservation. When the ring is full the producer gives up at once and
 * counts the loss in `dropped`: it never waits for the consumer.
 *
 * The consumer reads committed records at `tail`, zeroes them (so that a
 * word of 0 always means "reserved, length not written yet"), and advances
 * `tail` with a release store. A record whose length is written but that is
 * never committed (its producer died) is skipped only when the consumer is
 * told every producer is gone (shm_ring_next(.., producers_gone)).
 *
 * All fields are naturally aligned 32/64-bit atomics, which are lock-free
 * and address-free on the machines we run on, so they work across processes.
 */

#define SHM_RING_MAGIC 0x47525452u /* "RTRG" */
#define SHM_RING_VERSION 1u
#define SHM_RING_DATA_OFFSET 4096u
#define SHM_REC_COMMITTED 0x80000000u
#define SHM_REC_PAD 0x40000000u
#define SHM_REC_LEN_MASK 0x00ffffffu
#define SHM_REC_HDR 8u

struct shm_ring {
	uint32_t magic;
	uint32_t version;
	uint64_t data_size; /* power of two, bytes after SHM_RING_DATA_OFFSET */
	uint8_t pad0[48];
	_Atomic uint64_t head; /* next byte producers reserve; own cache line */
	uint8_t pad1[56];
	_Atomic uint64_t tail; /* first byte not yet consumed; own cache line */
	uint8_t pad2[56];
	_Atomic uint64_t dropped;   /* records that did not fit */
	_Atomic uint64_t committed; /* records written (for tests and statistics) */
	_Atomic uint32_t producers; /* processes that attached (informational) */
	uint32_t reserved;
	/*
	 * The recorder's configuration blob for the producers (GPU eBPF programs,
	 * bpf_session.h): config_len bytes after the data area, written before
	 * the command starts and read-only after; 0 when there is none.
	 */
	uint64_t config_len;
};

_Static_assert(sizeof(struct shm_ring) <= SHM_RING_DATA_OFFSET, "ring header fits its page");

static inline uint64_t shm_ring_map_size(uint64_t data_size)
{
	return SHM_RING_DATA_OFFSET + data_size;
}

static inline uint8_t *shm_ring_data(struct shm_ring *r)
{
	return (uint8_t *)r + SHM_RING_DATA_OFFSET;
}

static inline uint32_t shm_ring_round8(uint32_t len)
{
	return (len + 7u) & ~7u;
}

/* Largest payload one record may carry: a quarter of the ring, and what the length field holds. */
static inline uint32_t shm_ring_max_payload(const struct shm_ring *r)
{
	uint64_t quarter = r->data_size / 4 - SHM_REC_HDR;

	return quarter < SHM_REC_LEN_MASK ? (uint32_t)quarter : SHM_REC_LEN_MASK;
}

/* Formats a zeroed mapping of shm_ring_map_size(data_size) bytes. data_size: power of two >= 4096.
 */
static inline int shm_ring_init(struct shm_ring *r, uint64_t data_size)
{
	if (data_size < 4096 || (data_size & (data_size - 1)))
		return -EINVAL;
	memset(r, 0, SHM_RING_DATA_OFFSET);
	r->data_size = data_size;
	r->version = SHM_RING_VERSION;
	atomic_store_explicit((_Atomic uint32_t *)&r->magic, SHM_RING_MAGIC, memory_order_release);
	return 0;
}

/* Checks a mapping a producer opened: 0, or -EINVAL when it is not a ring of this version/size. */
static inline int shm_ring_check(const struct shm_ring *r, uint64_t map_len)
{
	if (map_len < SHM_RING_DATA_OFFSET || r->magic != SHM_RING_MAGIC ||
	    r->version != SHM_RING_VERSION || r->data_size < 4096 ||
	    (r->data_size & (r->data_size - 1)) || shm_ring_map_size(r->data_size) > map_len)
		return -EINVAL;
	return 0;
}

/*
 * Reserves room for a payload of len bytes. Returns where to write it, or
 * NULL when it does not fit now (counted in `dropped`) or is too large.
 * Every non-NULL reservation must be committed with shm_ring_commit().
 */
static inline void *shm_ring_reserve(struct shm_ring *r, uint32_t type, uint32_t len)
{
	uint64_t size = r->data_size, mask = size - 1, head, tail, need, pad;
	uint32_t rec = SHM_REC_HDR + shm_ring_round8(len);
	uint8_t *data = shm_ring_data(r);
	_Atomic uint32_t *word;

	if (len > shm_ring_max_payload(r)) {
		atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
		return NULL;
	}
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	do {
		uint64_t off = head & mask;

		pad = off + rec > size ? size - off : 0;
		need = pad + rec;
		tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (head + need - tail > size) {
			atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
			return NULL;
		}
	} while (!atomic_compare_exchange_weak_explicit(
	    &r->head, &head, head + need, memory_order_acq_rel, memory_order_relaxed));
	if (pad) {
		/* pad is a multiple of 8 and at least 8: offsets and sizes are */
		word = (_Atomic uint32_t *)(data + (head & mask));
		((uint32_t *)word)[1] = 0;
		atomic_store_explicit(
		    word, (uint32_t)(pad - SHM_REC_HDR) | SHM_REC_PAD | SHM_REC_COMMITTED,
		    memory_order_release);
		head += pad;
	}
	word = (_Atomic uint32_t *)(data + (head & mask));
	((uint32_t *)word)[1] = type;
	atomic_store_explicit(word, len, memory_order_relaxed);
	return data + (head & mask) + SHM_REC_HDR;
}

/* Publishes a reserved record to the consumer. */
static inline void shm_ring_commit(struct shm_ring *r, void *payload)
{
	_Atomic uint32_t *word = (_Atomic uint32_t *)((uint8_t *)payload - SHM_REC_HDR);
	uint32_t len = atomic_load_explicit(word, memory_order_relaxed);

	atomic_store_explicit(word, len | SHM_REC_COMMITTED, memory_order_release);
	atomic_fetch_add_explicit(&r->committed, 1, memory_order_relaxed);
}

/* The recorder's configuration blob in a checked mapping of map_len bytes, or NULL. */
static inline const void *shm_ring_config(const struct shm_ring *r, uint64_t map_len,
					  uint64_t *len)
{
	uint64_t off = shm_ring_map_size(r->data_size);

	if (!r->config_len || map_len < off || r->config_len > map_len - off)
		return NULL;
	*len = r->config_len;
	return (const uint8_t *)r + off;
}

/* Whether a payload of len bytes would fit now (a producer that may wait checks first). */
static inline int shm_ring_has_room(struct shm_ring *r, uint32_t len)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);

	/* a pad before the record may take up to one more record's size */
	return head - tail + 2 * (SHM_REC_HDR + (uint64_t)shm_ring_round8(len)) <= r->data_size;
}

/* Reserve, copy, commit. 0 or -ENOSPC (counted as dropped). */
static inline int shm_ring_write(struct shm_ring *r, uint32_t type, const void *payload,
				 uint32_t len)
{
	void *at = shm_ring_reserve(r, type, len);

	if (!at)
		return -ENOSPC;
	memcpy(at, payload, len);
	shm_ring_commit(r, at);
	return 0;
}

/* A record handed to the consumer; valid until shm_ring_release(). */
struct shm_ring_record {
	uint32_t type;
	uint32_t len;
	const void *payload;
	uint64_t span; /* bytes to release, pad records before it included */
};

/*
 * The consumer's next committed record: 1 and *out filled, or 0 when none is
 * ready. Pad records are stepped over here. With producers_gone, a record
 * that has a length but no commit (its producer died mid-write) is skipped
 * and counted in *abandoned (if non-NULL).
 */
static inline int shm_ring_next(struct shm_ring *r, struct shm_ring_record *out, int producers_gone,
				uint64_t *abandoned)
{
	uint64_t size = r->data_size, mask = size - 1;
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed), span = 0;
	uint8_t *data = shm_ring_data(r);

	for (;;) {
		uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		_Atomic uint32_t *word;
		uint32_t w, len;

		if (tail + span == head)
			break;
		word = (_Atomic uint32_t *)(data + ((tail + span) & mask));
		w = atomic_load_explicit(word, memory_order_acquire);
		len = w & SHM_REC_LEN_MASK;
		if (!(w & SHM_REC_COMMITTED)) {
			if (!producers_gone || !w)
				break;
			/* a dead producer's half-written record: drop it */
			if (abandoned)
				(*abandoned)++;
			span += SHM_REC_HDR + shm_ring_round8(len);
			continue;
		}
		if (w & SHM_REC_PAD) {
			span += SHM_REC_HDR + len;
			continue;
		}
		out->type = ((uint32_t *)word)[1];
		out->len = len;
		out->payload = (const uint8_t *)word + SHM_REC_HDR;
		out->span = span + SHM_REC_HDR + shm_ring_round8(len);
		return 1;
	}
	if (span) {
		/* only pads (or abandoned records) were passed: release them now */
		struct shm_ring_record none = {.span = span};

		out->span = 0;
		for (uint64_t done = 0; done < none.span; done += 8)
			*(uint64_t *)(data + ((tail + done) & mask)) = 0;
		atomic_store_explicit(&r->tail, tail + none.span, memory_order_release);
	}
	return 0;
}

/* Gives a record's space (and pads before it) back to the producers. */
static inline void shm_ring_release(struct shm_ring *r, const struct shm_ring_record *rec)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t mask = r->data_size - 1;
	uint8_t *data = shm_ring_data(r);

	/* zero so a reused header reads 0 ("length not written yet") */
	for (uint64_t done = 0; done < rec->span; done += 8)
		*(uint64_t *)(data + ((tail + done) & mask)) = 0;
	atomic_store_explicit(&r->tail, tail + rec->span, memory_order_release);
}

#endif
