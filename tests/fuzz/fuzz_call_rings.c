/*
 * libFuzzer target: the in-process cuda path's call rings (inject/call_rings.h) and the records in
 * them (inject/call_launch.h). The first byte picks the mode:
 *   0: a ring's bytes as the traced process could have written them (head, tail, records): the
 *      recorder's side reads them as cuda_inproc.c does, and never reads past the data area,
 *      past head, or a launch's argument words past its record;
 *   1: a producer and a consumer taking turns as the bytes say, the producer with its own head
 *      and its bound on the tail (struct call_ring_producer): every record the producer was
 *      given room for comes out once, in order, byte for byte, and every other one is counted
 *      lost.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "inject/call_launch.h"
#include "inject/call_rings.h"

#define SIZE 4096u

static void crash_if(int cond)
{
	if (cond)
		abort();
}

/* ---- 0: the recorder's side of bytes a traced process wrote ---- */

struct reader {
	const uint8_t *data;
	struct cuda_event event; /* the ring's thread event, as cuda_inproc.c keeps it */
	int known;
};

static void on_record(void *ctx, const struct call_ring_record *rec)
{
	struct reader *r = ctx;
	const uint8_t *p = rec->payload;

	if (!rec->type)
		return;
	crash_if(p < r->data + CALL_REC_HDR || p + rec->len > r->data + SIZE);
	if (rec->type == CALL_REC_THREAD && rec->len >= sizeof(struct call_rec_thread)) {
		struct call_rec_thread t;

		memcpy(&t, p, sizeof(t));
		call_thread_event(&t, &r->event);
		crash_if(r->event.comm[CUDA_COMM_LEN - 1] != 0);
		r->known = 1;
	} else if (rec->type == CALL_REC_LAUNCH && r->known &&
		   call_launch_fill(&r->event, p, rec->len)) {
		crash_if(r->event.args.launch.arg_words > CUDA_LAUNCH_ARG_WORDS);
		crash_if(rec->len < call_launch_len(r->event.args.launch.arg_words));
		for (uint32_t i = r->event.args.launch.arg_words; i < CUDA_LAUNCH_ARG_WORDS; i++)
			crash_if(r->event.args.launch.args[i] != 0);
	}
}

static void ring_bytes(const uint8_t *in, size_t n)
{
	struct call_rings_head *h = calloc(1, call_rings_size(1, SIZE));
	struct call_rings_config cfg = {.launch_return_every = 1};
	struct reader r = {0};
	struct call_ring *ring;
	uint64_t tail, head;
	uint8_t *data;

	if (!h || n < 16) {
		free(h);
		return;
	}
	crash_if(call_rings_init(h, 1, SIZE, &cfg) != 0);
	ring = call_rings_ring(h, 0);
	data = call_rings_data(h, 1, SIZE, 0);
	memcpy(&tail, in, 8);
	memcpy(&head, in + 8, 8);
	tail %= 1u << 20;
	head = tail + head % (2 * SIZE + 64);
	atomic_store(&ring->tail, tail);
	memcpy(data, in + 16, n - 16 < SIZE ? n - 16 : SIZE);
	r.data = data;
	call_ring_drain_to(ring, data, SIZE, head, on_record, &r);
	crash_if(atomic_load(&ring->tail) > head);
	free(h);
}

/* ---- 1: a producer and a consumer, against a model of what must come out ---- */

#define MAX_RECS 4096
/* large enough that a caught-up producer starts over past its first quarter (call_rings.h) */
#define TURNS_SIZE CALL_RING_RESTART_MIN

static void take_turns(const uint8_t *in, size_t n)
{
	struct call_rings_head *h = calloc(1, call_rings_size(1, TURNS_SIZE));
	struct call_rings_config cfg = {.launch_return_every = 1};
	struct call_ring_producer prod = {0};
	static uint32_t lens[MAX_RECS];
	uint32_t made = 0, taken = 0, lost = 0;
	struct call_ring *ring;
	uint8_t *data;

	if (!h)
		return;
	crash_if(call_rings_init(h, 1, TURNS_SIZE, &cfg) != 0);
	ring = call_rings_ring(h, 0);
	data = call_rings_data(h, 1, TURNS_SIZE, 0);
	for (size_t i = 0; i < n && made < MAX_RECS; i++) {
		uint8_t b = in[i];

		if (b < 0xa0) { /* the producer: a record of 1..6,361 bytes, each byte its number */
			uint32_t len = 1 + (uint32_t)b * 40;
			uint8_t *p = call_ring_reserve(ring, &prod, data, TURNS_SIZE, CALL_REC_CALL,
						       len, b & 1);

			if (!p) {
				/* refused only for want of room behind the consumer's real tail */
				uint32_t off = (uint32_t)(prod.head & (TURNS_SIZE - 1));
				uint32_t rec = CALL_REC_HDR + call_rec_round8(len);
				uint32_t wrap = off + rec > TURNS_SIZE ? TURNS_SIZE - off : 0;

				crash_if(!(b & 1) && prod.head + wrap + rec - atomic_load(&ring->tail) <=
							     TURNS_SIZE);
				lost++;
				continue;
			}
			memset(p, (uint8_t)made, len);
			call_ring_commit(ring, &prod, p, len);
			lens[made++] = len;
		} else { /* the consumer: up to (b & 15) + 1 records, released as it goes */
			struct call_ring_record rec;
			unsigned want = (b & 15) + 1u;

			while (want-- && call_ring_next(ring, data, TURNS_SIZE, &rec)) {
				const uint8_t *p = rec.payload;

				crash_if(rec.type != CALL_REC_CALL || taken >= made ||
					 rec.len != lens[taken]);
				for (uint32_t k = 0; k < rec.len; k++)
					crash_if(p[k] != (uint8_t)taken);
				taken++;
				call_ring_release(ring, &rec);
			}
		}
	}
	crash_if(atomic_load(&ring->lost) != lost);
	crash_if(atomic_load(&ring->head) != prod.head);
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		take_turns(data + 1, size - 1);
	else
		ring_bytes(data + 1, size - 1);
	return 0;
}
