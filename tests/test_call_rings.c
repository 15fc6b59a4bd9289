/* The per-thread call rings of the in-process cuda path (inject/call_rings.h): order, wrap, loss, bad producers. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "inject/call_launch.h"
#include "inject/call_rings.h"
#include "test_util.h"

#define RING 4096u

struct fixture {
	uint32_t size;	     /* the data area of each ring */
	bool may_start_over; /* what the producer passes */
	struct call_ring_producer prod; /* the producer's head and bound on the tail */
	struct call_rings_head *head;
	struct call_ring *ring;
	uint8_t *data;
	uint64_t len;
};

static void setup_sized(struct fixture *f, uint32_t nrings, uint32_t size)
{
	struct call_rings_config cfg = {.launch_return_every = 1};

	f->size = size;
	f->may_start_over = true;
	f->prod = (struct call_ring_producer){0};
	f->len = call_rings_size(nrings, size);
	f->head = calloc(1, f->len);
	CHECK(f->head != NULL);
	CHECK(!call_rings_init(f->head, nrings, size, &cfg));
	f->ring = call_rings_ring(f->head, 0);
	f->data = call_rings_data(f->head, nrings, size, 0);
}

static void setup(struct fixture *f, uint32_t nrings)
{
	setup_sized(f, nrings, RING);
}

/* Writes a record of len bytes, each byte its sequence number; false when full. */
static bool put(struct fixture *f, uint32_t len, uint8_t seq)
{
	uint8_t *p = call_ring_reserve(f->ring, &f->prod, f->data, f->size, CALL_REC_CALL, len,
				       f->may_start_over);

	if (!p)
		return false;
	memset(p, seq, len);
	call_ring_commit(f->ring, &f->prod, p, len);
	return true;
}

/* Reads the next record: its length and first byte, or -1 when none. */
static int take(struct fixture *f, uint32_t *len)
{
	struct call_ring_record rec;
	int first;

	if (!call_ring_next(f->ring, f->data, f->size, &rec))
		return -1;
	*len = rec.len;
	first = rec.type == CALL_REC_CALL && rec.len ? ((const uint8_t *)rec.payload)[0] : -2;
	call_ring_release(f->ring, &rec);
	return first;
}

static void test_geometry_checked(void)
{
	struct fixture f;

	setup(&f, 3);
	CHECK(!call_rings_check(f.head, f.len));
	CHECK(call_rings_check(f.head, f.len - 1) == -EINVAL);
	f.head->ring_bytes = 4095;
	CHECK(call_rings_check(f.head, f.len) == -EINVAL);
	CHECK(call_rings_init(f.head, 1, 1000, &f.head->cfg) == -EINVAL);
	free(f.head);
}

/* Records come out in order across many wraps of the data area, pads stepped over. */
static void test_order_across_wraps(void)
{
	struct fixture f;
	uint32_t len, sizes[] = {144, 656, 24, 400, 1000};
	int got, n = 0;

	setup(&f, 1);
	for (int i = 0; i < 200; i++) {
		uint32_t want = sizes[i % 5];

		CHECK(put(&f, want, (uint8_t)i));
		got = take(&f, &len);
		CHECK_EQ_U64(got, (uint8_t)i);
		CHECK_EQ_U64(len, want);
		n += got == (uint8_t)i;
	}
	CHECK_EQ_U64(n, 200);
	CHECK_EQ_U64(take(&f, &len), (uint64_t)-1);
	CHECK_EQ_U64(atomic_load(&f.ring->lost), 0);
	free(f.head);
}

/* A full ring refuses at once and counts the loss; what fit comes out whole. */
static void test_full_ring_counts_loss(void)
{
	struct fixture f;
	int written = 0, read = 0, small = 0;
	uint32_t len;

	setup(&f, 1);
	while (put(&f, 144, (uint8_t)written))
		written++;
	CHECK_EQ_U64(written, RING / (144 + CALL_REC_HDR));
	CHECK(!put(&f, 144, 0));
	CHECK_EQ_U64(atomic_load(&f.ring->lost), 2);
	/* smaller ones still fit the 144 bytes left: 9 of 16 */
	while (put(&f, 8, 0))
		small++;
	CHECK_EQ_U64(small, 9);
	CHECK_EQ_U64(atomic_load(&f.ring->lost), 3);
	while (take(&f, &len) >= 0)
		read++;
	CHECK_EQ_U64(read, written + small);
	CHECK(put(&f, 144, 7)); /* room again */
	free(f.head);
}

/*
 * The producer is the traced process: a length that reaches past head or the
 * data area's end, or a head that ran past the tail by more than the ring,
 * comes out as one bad record that releases everything up to head.
 */
static void test_bad_producer_contained(void)
{
	struct fixture f;
	struct call_ring_record rec;
	uint32_t len;

	setup(&f, 1);
	CHECK(put(&f, 144, 1));
	((uint32_t *)f.data)[0] = 0x00ffffff; /* length far past head */
	CHECK(call_ring_next(f.ring, f.data, RING, &rec));
	CHECK_EQ_U64(rec.type, 0);
	CHECK(rec.payload == NULL);
	call_ring_release(f.ring, &rec);
	CHECK_EQ_U64(take(&f, &len), (uint64_t)-1);

	atomic_store(&f.ring->head, atomic_load(&f.ring->tail) + 10 * RING);
	CHECK(call_ring_next(f.ring, f.data, RING, &rec));
	CHECK_EQ_U64(rec.type, 0);
	call_ring_release(f.ring, &rec);
	CHECK_EQ_U64(atomic_load(&f.ring->tail), atomic_load(&f.ring->head));

	/* a record of type 0 written by the producer is not taken for the bad-ring marker's */
	atomic_store(&f.ring->head, 0);
	atomic_store(&f.ring->tail, 0);
	f.prod = (struct call_ring_producer){0};
	CHECK(call_ring_reserve(f.ring, &f.prod, f.data, RING, 0, 16, true) != NULL);
	call_ring_commit(f.ring, &f.prod, f.data + CALL_REC_HDR, 16);
	CHECK(call_ring_next(f.ring, f.data, RING, &rec));
	CHECK(rec.type != 0 && rec.type != CALL_REC_CALL);
	free(f.head);
}

/*
 * The recorder's batch read: records read one after another with
 * call_ring_peek, without releasing, come out in order across a wrap (the pad
 * stepped over); the producer gets no room back until call_ring_release_to,
 * and then exactly what was read.
 */
static void test_batch_read_releases_once(void)
{
	struct fixture f;
	struct call_ring_record rec;
	uint64_t tail, head;
	int n = 0;

	setup(&f, 1);
	/* 3040 bytes in and out: the fifth record after wraps with a 16-byte pad before it */
	for (uint8_t i = 0; i < 10; i++)
		CHECK(put(&f, 292, i));
	for (uint32_t len; take(&f, &len) >= 0;)
		;
	for (uint8_t i = 0; i < 12; i++)
		CHECK(put(&f, 200, (uint8_t)(100 + i)));
	tail = atomic_load(&f.ring->tail);
	head = atomic_load(&f.ring->head);
	while (call_ring_peek(f.data, RING, tail, head, &rec)) {
		CHECK_EQ_U64(rec.type, CALL_REC_CALL);
		CHECK_EQ_U64(rec.len, 200);
		CHECK_EQ_U64(((const uint8_t *)rec.payload)[0], 100 + n);
		CHECK_EQ_U64(((const uint8_t *)rec.payload)[199], 100 + n);
		tail = rec.next;
		n++;
	}
	CHECK_EQ_U64(n, 12);
	CHECK_EQ_U64(rec.next, head); /* nothing left, not even a pad */
	CHECK_EQ_U64(head - 3040, 12 * 208 + 16);
	/* nothing given back yet: 2512 bytes held, 1608 more do not fit */
	CHECK_EQ_U64(atomic_load(&f.ring->tail), 3040);
	CHECK(!put(&f, 1600, 1));
	call_ring_release_to(f.ring, tail);
	CHECK_EQ_U64(atomic_load(&f.ring->tail), head);
	CHECK(put(&f, 1600, 2));
	free(f.head);
}

/* A ring holding only a pad: peek passes it and says where, next releases it. */
static void test_pad_alone_released(void)
{
	struct fixture f;
	struct call_ring_record rec;
	uint32_t len;

	setup(&f, 1);
	for (uint8_t i = 0; i < 15; i++)
		CHECK(put(&f, 248, i)); /* 15 x 256 = 3840 bytes */
	while (take(&f, &len) >= 0)
		;
	/* the next record does not fit the last 256 bytes: a pad goes first */
	CHECK(put(&f, 400, 7));
	CHECK(call_ring_peek(f.data, RING, 3840, atomic_load(&f.ring->head), &rec));
	CHECK_EQ_U64(rec.len, 400);
	CHECK_EQ_U64(((const uint8_t *)rec.payload)[0], 7);
	CHECK_EQ_U64(rec.next, 4096 + 408);
	CHECK(!call_ring_peek(f.data, RING, 3840, 4096, &rec));
	CHECK_EQ_U64(rec.next, 4096);
	free(f.head);
}

/* A producer that keeps pace: each record the consumer is handed, it writes another. */
struct keeping_pace {
	struct fixture *f;
	uint32_t handed;
	uint8_t first[64];
	uint8_t written;
};

static void on_record_write_one_more(void *ctx, const struct call_ring_record *rec)
{
	struct keeping_pace *k = ctx;

	if (k->handed < sizeof(k->first))
		k->first[k->handed] = ((const uint8_t *)rec->payload)[0];
	k->handed++;
	/* bounded, so that a drain that follows the head still ends and the check below fails */
	if (k->written < 60 && put(k->f, 100, k->written))
		k->written++;
}

/*
 * call_ring_drain hands over what was committed when it began and no more,
 * however fast the thread commits meanwhile: a drain that followed the head
 * was held on one busy ring while the others filled (a 2-thread storm lost one
 * thread's calls for seconds). What came in the meantime is the next batch's,
 * in order, across the wrap, and the space read is given back.
 */
static void test_drain_stops_at_its_head(void)
{
	struct fixture f;
	struct keeping_pace k = {.f = &f};

	setup(&f, 1);
	for (; k.written < 10; k.written++)
		CHECK(put(&f, 100, k.written));
	CHECK_EQ_U64(call_ring_drain(f.ring, f.data, RING, on_record_write_one_more, &k), 10);
	CHECK_EQ_U64(k.handed, 10);
	CHECK_EQ_U64(k.written, 20);
	for (uint8_t i = 0; i < 10; i++)
		CHECK_EQ_U64(k.first[i], i);
	CHECK_EQ_U64(atomic_load(&f.ring->tail), 10 * 112);
	/* the next batch: the ten written during the first, and again no more */
	CHECK_EQ_U64(call_ring_drain(f.ring, f.data, RING, on_record_write_one_more, &k), 10);
	for (uint8_t i = 10; i < 20; i++)
		CHECK_EQ_U64(k.first[i], i);
	CHECK_EQ_U64(atomic_load(&f.ring->tail), 20 * 112);
	/* batches until the producer stops: all 60 handed once, in order, the ring empty */
	while (call_ring_drain(f.ring, f.data, RING, on_record_write_one_more, &k))
		;
	CHECK_EQ_U64(k.handed, 60);
	for (uint8_t i = 0; i < 60; i++)
		CHECK_EQ_U64(k.first[i], i);
	CHECK_EQ_U64(atomic_load(&f.ring->tail), atomic_load(&f.ring->head));
	free(f.head);
}

/* A drain to a head noted earlier stops there, though more was committed since. */
static void test_drain_to_a_noted_head(void)
{
	struct fixture f;
	struct keeping_pace k = {.f = &f};
	uint64_t noted;

	setup(&f, 1);
	for (; k.written < 5; k.written++)
		CHECK(put(&f, 100, k.written));
	noted = atomic_load(&f.ring->head);
	for (; k.written < 8; k.written++)
		CHECK(put(&f, 100, k.written));
	CHECK_EQ_U64(call_ring_drain_to(f.ring, f.data, RING, noted, on_record_write_one_more, &k),
		     5);
	CHECK_EQ_U64(atomic_load(&f.ring->tail), noted);
	CHECK_EQ_U64(call_ring_drain_to(f.ring, f.data, RING, noted, on_record_write_one_more, &k),
		     0);
	/* the rest (3, then the 5 the first drain's records wrote) on a drain to the head now */
	CHECK_EQ_U64(call_ring_drain(f.ring, f.data, RING, on_record_write_one_more, &k), 8);
	for (uint8_t i = 0; i < 13; i++)
		CHECK_EQ_U64(k.first[i], i);
	free(f.head);
}

/* Where the next record's payload goes: its offset in the data area. */
static uint32_t next_offset(struct fixture *f)
{
	uint8_t *p = call_ring_reserve(f->ring, &f->prod, f->data, f->size, CALL_REC_CALL, 16,
				       f->may_start_over);

	CHECK(p != NULL);
	if (p)
		call_ring_commit(f->ring, &f->prod, p, 16);
	return p ? (uint32_t)(p - f->data) : 0;
}

/*
 * Once the recorder has caught up, a thread past the first quarter of its ring starts writing
 * at the beginning again (a pad record covers the rest): the memory it writes stays what its
 * caches hold. Not while records wait, nor within the first quarter.
 */
static void test_caught_up_starts_over(void)
{
	struct fixture f;
	uint32_t len, size = 1u << 20; /* its quarter: 256 KiB */

	setup_sized(&f, 1, size);
	for (int i = 0; i < 300; i++) /* 300 x 408 bytes: still in the first quarter */
		CHECK(put(&f, 400, (uint8_t)i));
	for (int i = 0; i < 300; i++)
		CHECK_EQ_U64(take(&f, &len), (uint8_t)i);
	/* caught up, but within the first quarter: no start over */
	CHECK_EQ_U64(next_offset(&f), 300 * 408 + CALL_REC_HDR);
	CHECK_EQ_U64(take(&f, &len), 0);
	for (int i = 300; i < 650; i++) /* 650 x 408 bytes and 24: past it */
		CHECK(put(&f, 400, (uint8_t)i));
	for (int i = 300; i < 649; i++)
		CHECK_EQ_U64(take(&f, &len), (uint8_t)i);
	/* one record still waits: no start over */
	CHECK_EQ_U64(next_offset(&f), 650 * 408 + 24 + CALL_REC_HDR);
	CHECK_EQ_U64(take(&f, &len), (uint8_t)649);
	CHECK_EQ_U64(len, 400);
	CHECK_EQ_U64(take(&f, &len), 0); /* next_offset's record: 16 bytes of garbage is fine */
	CHECK_EQ_U64(len, 16);
	CHECK_EQ_U64(take(&f, &len), -1);
	/* caught up: the next record opens the data area again, the pad before it skipped */
	CHECK(put(&f, 400, 77));
	CHECK_EQ_U64(atomic_load(&f.ring->head) % size, 408);
	CHECK_EQ_U64(atomic_load(&f.ring->head), size + 408);
	CHECK_EQ_U64(take(&f, &len), 77);
	CHECK_EQ_U64(take(&f, &len), -1);
	CHECK_EQ_U64(atomic_load(&f.ring->tail), size + 408);
	/* within the first quarter, caught up or not, writing goes on where it was */
	CHECK_EQ_U64(next_offset(&f), 408 + CALL_REC_HDR);
	free(f.head);

	/* past the first quarter and caught up, but the producer may not: no start over */
	setup_sized(&f, 1, size);
	f.may_start_over = false;
	for (int i = 0; i < 650; i++)
		CHECK(put(&f, 400, (uint8_t)i));
	for (int i = 0; i < 650; i++)
		CHECK_EQ_U64(take(&f, &len), (uint8_t)i);
	CHECK_EQ_U64(next_offset(&f), 650 * 408 + CALL_REC_HDR);
	free(f.head);

	/* a small ring goes round as it is */
	setup_sized(&f, 1, 65536);
	for (int i = 0; i < 100; i++) {
		CHECK(put(&f, 400, (uint8_t)i));
		CHECK_EQ_U64(take(&f, &len), (uint8_t)i);
	}
	CHECK_EQ_U64(atomic_load(&f.ring->head), 100 * 408);
	free(f.head);

	/* from 256 KiB up they start over; over 16 MiB, whose pad's length would not fit, never */
	CHECK_EQ_U64(CALL_RING_RESTART_AT(256u << 10), 64u << 10);
	CHECK_EQ_U64(CALL_RING_RESTART_AT(16u << 20), 4u << 20);
	CHECK_EQ_U64(CALL_RING_RESTART_AT(32u << 20), ~0u);
	setup_sized(&f, 1, 32u << 20);
	for (int i = 0; i < 24000; i++) /* 9.8 MB: past a quarter */
		CHECK(put(&f, 400, (uint8_t)i));
	for (int i = 0; i < 24000; i++)
		CHECK_EQ_U64(take(&f, &len), (uint8_t)i);
	CHECK(put(&f, 400, 1));
	CHECK_EQ_U64(atomic_load(&f.ring->head), 24001 * 408);
	CHECK_EQ_U64(take(&f, &len), 1);
	CHECK_EQ_U64(take(&f, &len), -1);
	free(f.head);
}

/*
 * A launch's short record and its thread's record make the event the long
 * record gave: every field, the argument words past arg_words 0; records
 * too short for what they claim are refused (the traced process writes them).
 */
static void test_short_launch_makes_the_event(void)
{
	struct call_rec_thread t = {.pid = 4242, .tid = 4243, .ppid = 1, .comm = "trainer"};
	uint8_t payload[sizeof(struct call_rec_launch)];
	struct call_rec_launch l = {
	    .entry_ns = 1000,
	    .return_ns = 1700,
	    .function = 0xf0000000,
	    .stream = 0xdead0,
	    .grid = {3, 2, 1},
	    .block = {64, 4, 1},
	    .shared_mem = 4096,
	    .ret = 2,
	    .api = 7,
	    .flags = CUDA_EVENT_LEGACY32,
	    .arg_words = 2,
	    .cpu = 5,
	    .args = {0x1111, 0x2222, 0x3333, 0x4444},
	};
	struct cuda_event ev;

	memcpy(payload, &l, sizeof(l));
	memset(&ev, 0xa5, sizeof(ev));
	call_thread_event(&t, &ev);
	CHECK(call_launch_fill(&ev, payload, call_launch_len(2)));
	CHECK_EQ_U64(ev.entry_ns, 1000);
	CHECK_EQ_U64(ev.return_ns, 1700);
	CHECK_EQ_U64(ev.pid, 4242);
	CHECK_EQ_U64(ev.tid, 4243);
	CHECK_EQ_U64(ev.ppid, 1);
	CHECK_EQ_U64(ev.cpu, 5);
	CHECK_EQ_U64(ev.ret, 2);
	CHECK_EQ_U64(ev.api, 7);
	CHECK_EQ_U64(ev.flags, CUDA_EVENT_LEGACY32);
	CHECK_EQ_U64(ev.stack_id, 0);
	CHECK_EQ_U64(ev.text_len, 0);
	CHECK_STR(ev.comm, "trainer");
	CHECK_EQ_U64(ev.args.launch.function, 0xf0000000);
	CHECK_EQ_U64(ev.args.launch.stream, 0xdead0);
	CHECK_EQ_U64(ev.args.launch.grid[0], 3);
	CHECK_EQ_U64(ev.args.launch.grid[1], 2);
	CHECK_EQ_U64(ev.args.launch.block[1], 4);
	CHECK_EQ_U64(ev.args.launch.shared_mem, 4096);
	CHECK_EQ_U64(ev.args.launch.arg_words, 2);
	CHECK_EQ_U64(ev.args.launch.args[0], 0x1111);
	CHECK_EQ_U64(ev.args.launch.args[1], 0x2222);
	CHECK_EQ_U64(ev.args.launch.args[2], 0);
	CHECK_EQ_U64(ev.args.launch.args[3], 0);
	/* a graph launch: its exec and stream where a launch's function and stream are */
	CHECK_EQ_U64(ev.args.graph.graph_exec, 0xf0000000);
	CHECK_EQ_U64(ev.args.graph.stream, 0xdead0);

	/* shorter than the words it claims, more words than an event holds, shorter than its fixed part */
	CHECK(!call_launch_fill(&ev, payload, call_launch_len(2) - 8));
	l.arg_words = CUDA_LAUNCH_ARG_WORDS + 1;
	memcpy(payload, &l, sizeof(l));
	CHECK(!call_launch_fill(&ev, payload, sizeof(payload)));
	CHECK(!call_launch_fill(&ev, payload, CALL_REC_LAUNCH_FIXED - 1));
	/* a name without its NUL is cut to the event's */
	memset(t.comm, 'x', sizeof(t.comm));
	l.arg_words = 0;
	memcpy(payload, &l, sizeof(l));
	call_thread_event(&t, &ev);
	CHECK(call_launch_fill(&ev, payload, call_launch_len(0)));
	CHECK_EQ_U64(strlen(ev.comm), CUDA_COMM_LEN - 1);
	CHECK_EQ_U64(ev.args.launch.args[0], 0);
}

int main(void)
{
	RUN_TEST(test_geometry_checked);
	RUN_TEST(test_order_across_wraps);
	RUN_TEST(test_full_ring_counts_loss);
	RUN_TEST(test_bad_producer_contained);
	RUN_TEST(test_batch_read_releases_once);
	RUN_TEST(test_pad_alone_released);
	RUN_TEST(test_drain_stops_at_its_head);
	RUN_TEST(test_drain_to_a_noted_head);
	RUN_TEST(test_caught_up_starts_over);
	RUN_TEST(test_short_launch_makes_the_event);
	return TEST_EXIT_STATUS();
}
