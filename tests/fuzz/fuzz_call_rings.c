/*
 * libFuzzer target: the in-process cuda path's call rings (inject/call_rings.h) and the records in
 * them (inject/call_launch.h). The first byte picks the mode:
 *   0: a ring's bytes as the traced process could have written them (head, tail, records): the
 *      recorder's side reads them as cuda_inproc.c does, and never reads past the data area,
 *      past head, or a launch's argument words past its record;
 *   1: a producer and a consumer taking turns as the bytes say, the producer with its own head
 *      and its bound on the tail (struct call_ring_producer): every record the producer was
 *      given room for comes out once, in order, byte for byte, and every other one is counted
 *      lost; records held open under later ones (calls inside calls, call_ring_hold) come out
 *      only once finished, before those written after them.
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
#define MAX_OPEN 3

/* A record reserved and not committed yet: a call inside the driver, as the library keeps it. */
struct open_rec {
	uint8_t *p;
	uint32_t len; /* reserved */
	uint32_t index;
	int held;
};

struct producer {
	struct call_ring *ring;
	uint8_t *data;
	struct call_ring_producer prod;
	uint32_t lens[MAX_RECS]; /* each record's committed length, 0 while open */
	uint32_t made, lost;
	struct open_rec open[MAX_OPEN];
	unsigned nopen;
};

/*
 * A record of len bytes, each byte its number; left open when `open`. A call
 * inside an open one holds the open one first, as the library's nested_enter() does.
 */
static void produce(struct producer *w, uint32_t len, int may_start_over, int open)
{
	uint8_t *p;

	if (w->nopen && !w->open[w->nopen - 1].held) {
		call_ring_hold(&w->prod, w->open[w->nopen - 1].len);
		w->open[w->nopen - 1].held = 1;
	}
	p = call_ring_reserve(w->ring, &w->prod, w->data, TURNS_SIZE, CALL_REC_CALL, len,
			      may_start_over);
	if (!p) {
		/* refused only for want of room behind the consumer's real tail */
		uint32_t off = (uint32_t)(w->prod.head & (TURNS_SIZE - 1));
		uint32_t rec = CALL_REC_HDR + call_rec_round8(len);
		uint32_t wrap = off + rec > TURNS_SIZE ? TURNS_SIZE - off : 0;

		crash_if(!may_start_over &&
			 w->prod.head + wrap + rec - atomic_load(&w->ring->tail) <= TURNS_SIZE);
		w->lost++;
		return;
	}
	memset(p, (uint8_t)w->made, len);
	if (open) {
		w->open[w->nopen++] = (struct open_rec){p, len, w->made, 0};
		w->lens[w->made++] = 0;
		return;
	}
	if (w->prod.held)
		call_ring_append(&w->prod, p, len);
	else
		call_ring_commit(w->ring, &w->prod, p, len);
	w->lens[w->made++] = len;
}

/* The innermost open record returns, cut by `cut` bytes (a long record's unused text). */
static void finish(struct producer *w, uint32_t cut)
{
	struct open_rec *o = &w->open[--w->nopen];
	uint32_t len = o->len - (cut < o->len ? cut : o->len - 1);

	if (o->held)
		call_ring_commit_held(w->ring, &w->prod, o->p, len, o->len);
	else if (w->prod.held)
		call_ring_append(&w->prod, o->p, len);
	else
		call_ring_commit(w->ring, &w->prod, o->p, len);
	w->lens[o->index] = len;
}

static void take_turns(const uint8_t *in, size_t n)
{
	struct call_rings_head *h = calloc(1, call_rings_size(1, TURNS_SIZE));
	struct call_rings_config cfg = {.launch_return_every = 1};
	static struct producer w;
	uint32_t taken = 0;

	if (!h)
		return;
	crash_if(call_rings_init(h, 1, TURNS_SIZE, &cfg) != 0);
	memset(&w, 0, sizeof(w));
	w.ring = call_rings_ring(h, 0);
	w.data = call_rings_data(h, 1, TURNS_SIZE, 0);
	for (size_t i = 0; i < n && w.made < MAX_RECS; i++) {
		uint8_t b = in[i];

		if (b < 0x90) { /* the producer: a record of 1..5,721 bytes */
			produce(&w, 1 + (uint32_t)b * 40, b & 1, 0);
		} else if (b < 0xa0) { /* a call that stays open: 1..1,456 bytes */
			if (w.nopen < MAX_OPEN)
				produce(&w, 1 + (uint32_t)(b & 15) * 97, b & 1, 1);
		} else if (b < 0xb0) { /* the innermost open call returns */
			if (w.nopen)
				finish(&w, (uint32_t)(b & 15) * 9);
		} else { /* the consumer: up to (b & 15) + 1 records, released as it goes */
			struct call_ring_record rec;
			unsigned want = (b & 15) + 1u;

			while (want-- && call_ring_next(w.ring, w.data, TURNS_SIZE, &rec)) {
				const uint8_t *p = rec.payload;

				/* never an open record: lens[] is 0 for those */
				crash_if(rec.type != CALL_REC_CALL || taken >= w.made ||
					 rec.len != w.lens[taken]);
				for (uint32_t k = 0; k < rec.len; k++)
					crash_if(p[k] != (uint8_t)taken);
				taken++;
				call_ring_release(w.ring, &rec);
			}
		}
	}
	while (w.nopen)
		finish(&w, 0);
	crash_if(atomic_load(&w.ring->lost) != w.lost);
	crash_if(atomic_load(&w.ring->head) != w.prod.head);
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
