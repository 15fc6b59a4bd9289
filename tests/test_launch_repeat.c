/* Launch repeat records (format 2.0): which launches the writer shortens, and that readers get
 * back every byte of every launch. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "trace_files.h"
#include "trace_gen.h"
#include "trace/grt_reader.h"
#include "trace/launch_repeat.h"

#define TS 1000000000ull

static struct grt_cuda_launch_rec a_launch(uint32_t grid_x)
{
	struct grt_cuda_launch_rec l = {
	    .call = {.return_ns = TS + 300, .api = GRT_CUDA_LAUNCH_KERNEL, .ppid = 7, .comm_str = 2},
	    .function = 0xf0000000,
	    .stream = 0x10,
	    .kernel_str = 1,
	    .grid = {grid_x, 1, 1},
	    .block = {256, 1, 1},
	    .user_stack_id = -1,
	    .arg_words = 2,
	    .args = {0x7000, 0x400},
	};
	return l;
}

/*
 * Encodes l against the writer's base and expands it with the reader's, as
 * the writer and the reader do: the same bytes back, and both take it as
 * their base (at a made-up file offset).
 */
static uint32_t through(struct launch_repeat_base *writer, struct launch_repeat_base *reader,
			const struct grt_cuda_launch_rec *l, uint64_t ts)
{
	static uint64_t offset = 752;
	uint64_t packed[LAUNCH_REPEAT_MAX_BYTES / 8];
	uint32_t len = launch_repeat_encode(writer, l, ts, packed);

	offset += 32 + (len ? len : sizeof(*l));
	if (len) {
		CHECK(launch_repeat_expand(reader, packed, len, ts, offset) == 0);
		CHECK(!memcmp(&reader->rec, l, sizeof(*l)));
		launch_repeat_advance(writer, l, offset);
		CHECK(!memcmp(&writer->rec, l, sizeof(*l)));
	} else {
		launch_repeat_note(writer, l, sizeof(*l), offset);
		launch_repeat_note(reader, l, sizeof(*l), offset);
	}
	return len;
}

static void test_what_repeats(void)
{
	struct launch_repeat_base w = {0}, r = {0};
	struct grt_cuda_launch_rec l = a_launch(64), other;

	CHECK_EQ_U64(through(&w, &r, &l, TS), 0); /* nothing before it */
	CHECK_EQ_U64(through(&w, &r, &l, TS), 16);
	/* what a repeat carries may change: return, result, flags, argument words */
	l.call.return_ns = TS + 123456;
	l.call.ret = 700;
	CHECK_EQ_U64(through(&w, &r, &l, TS), 16);
	l.args[1] = 0x800;
	CHECK_EQ_U64(through(&w, &r, &l, TS), 16 + 2 * 8);
	CHECK_EQ_U64(through(&w, &r, &l, TS + 5), 16); /* the same new args: not written again */
	l.call.flags = GRT_CUDA_F_RETURN_UNSAMPLED;
	l.call.return_ns = 0;
	l.call.ret = 0;
	CHECK_EQ_U64(through(&w, &r, &l, TS), 16);
	l.call.flags = GRT_CUDA_F_OWN;
	l.call.return_ns = TS;
	CHECK_EQ_U64(through(&w, &r, &l, TS), 16);
	/* a return the header's time cannot rebuild: whole */
	l.call.return_ns = TS - 1;
	CHECK_EQ_U64(through(&w, &r, &l, TS), 0);
	l.call.return_ns = TS + 0x100000000ull;
	CHECK_EQ_U64(through(&w, &r, &l, TS), 0);
	l.call.return_ns = TS + 0xffffffffull;
	CHECK_EQ_U64(through(&w, &r, &l, TS), 16);
	l.call.flags = GRT_CUDA_F_NO_RETURN; /* no return, yet a return time: kept whole */
	CHECK_EQ_U64(through(&w, &r, &l, TS), 0);
	l.call.flags = 0;
	/* anything else that differs: whole */
	other = l;
	other.grid[2] = 2;
	CHECK_EQ_U64(through(&w, &r, &other, TS), 0);
	CHECK_EQ_U64(through(&w, &r, &l, TS), 0);
	other = l;
	other.call.comm_str = 3;
	CHECK_EQ_U64(through(&w, &r, &other, TS), 0);
	other = l;
	other.user_stack_id = 5;
	CHECK_EQ_U64(through(&w, &r, &other, TS), 0);
	other = l;
	other.call.api = GRT_CUDA_LAUNCH_KERNEL_PTSZ;
	CHECK_EQ_U64(through(&w, &r, &other, TS), 0);
	CHECK_EQ_U64(through(&w, &r, &l, TS), 0);
	/* a slot past arg_words that is not the earlier one's */
	other = l;
	other.args[3] = 9;
	CHECK_EQ_U64(through(&w, &r, &other, TS), 0);
	other.args[3] = 0;
	other.arg_words = 3;
	CHECK_EQ_U64(through(&w, &r, &other, TS), 0);
	other.args[2] = 1;
	CHECK_EQ_U64(through(&w, &r, &other, TS), 16 + 3 * 8);
	other.arg_words = 5; /* more words than a record has: whole */
	CHECK_EQ_U64(through(&w, &r, &other, TS), 0);
}

/* Thousands of launches of a few kernels from a few threads, with other records between. */
static void test_trace_roundtrip(void)
{
	enum { LAUNCHES = 20000 };
	struct gen_rng rng = {7};
	struct grt_cuda_launch_rec *sent = calloc(LAUNCHES, sizeof(*sent)), l;
	struct grt_file_header h;
	struct test_dir dir;
	struct grt_writer *w;
	struct grt_reader *r;
	struct grt_record rec;
	unsigned char *img;
	char path[256], err[256];
	size_t len, at, repeats = 0, whole = 0, got = 0, expect_whole = 0;
	uint32_t last_grid = 0;

	test_dir_make(&dir);
	test_dir_file(&dir, "launches.grt", path, sizeof(path));
	gen_header(&rng, &h);
	w = grt_writer_open(path, &h);
	CHECK(w && sent);
	for (size_t i = 0; i < LAUNCHES; i++) {
		struct grt_event_origin o = {.ts_ns = TS + i * 1000, .cpu = (uint32_t)(i % 3),
					     .pid = 10, .tid = 11 + (uint32_t)(i % 2)};
		uint32_t grid = 1 + (uint32_t)(i / 1000) % 3; /* a new kernel shape every 1000 */

		l = a_launch(grid);
		l.call.return_ns = o.ts_ns + gen_below(&rng, 5000);
		l.call.ret = gen_below(&rng, 50) ? 0 : 2;
		l.args[0] = gen_below(&rng, 4) ? 0x7000 : gen_below(&rng, 1u << 30);
		expect_whole += !i || grid != last_grid;
		last_grid = grid;
		sent[i] = l;
		CHECK(grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &l, sizeof(l)) == 0);
		if (i % 997 == 0) /* other records between launches change nothing */
			CHECK(grt_writer_drop(w, GRT_SRC_CUDA, 1, o.ts_ns) == 0);
	}
	CHECK(grt_writer_close(w, GRT_END_TARGET_EXIT, TS + LAUNCHES * 1000) == 0);

	/* on disk: a whole record where the shape changed, repeats between */
	img = test_read_file(path, &len);
	CHECK(img != NULL);
	for (at = sizeof(struct grt_file_header); img && at + sizeof(struct grt_record_header) <= len;) {
		struct grt_record_header hdr;

		memcpy(&hdr, img + at, sizeof(hdr));
		repeats += hdr.type == GRT_REC_CUDA_LAUNCH_REPEAT;
		whole += hdr.type == GRT_REC_CUDA_LAUNCH;
		at += sizeof(hdr) + hdr.payload_len;
	}
	CHECK_EQ_U64(at, len);
	CHECK_EQ_U64(whole, expect_whole);
	CHECK_EQ_U64(repeats + whole, LAUNCHES);

	/* read back: launches only, every byte as appended, the checksums good */
	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK) {
		if (rec.hdr.type != GRT_REC_CUDA_LAUNCH)
			continue;
		CHECK_EQ_U64(rec.hdr.payload_len, sizeof(l));
		if (got < LAUNCHES) {
			CHECK(!memcmp(rec.payload, &sent[got], sizeof(l)));
			CHECK_EQ_U64(rec.hdr.ts_ns, TS + got * 1000);
			CHECK_EQ_U64(rec.hdr.tid, 11 + got % 2);
		}
		got++;
	}
	CHECK_EQ_U64(got, LAUNCHES);
	CHECK(r && grt_reader_damage(r) == NULL);
	CHECK(r && grt_reader_blocks_verified(r) > 0);
	grt_reader_close(r);
	free(img);
	free(sent);
	test_dir_remove(&dir);
}

/* A trace of three launches, the second and third repeats. Returns the first repeat's offset. */
static size_t three_launches(unsigned char **img, size_t *len)
{
	struct gen_rng rng = {3};
	struct grt_cuda_launch_rec l = a_launch(8);
	struct grt_event_origin o = {.ts_ns = TS, .cpu = 1, .pid = 10, .tid = 11};
	struct grt_file_header h;
	struct test_dir dir;
	struct grt_writer *w;
	char path[256];
	size_t second;

	test_dir_make(&dir);
	test_dir_file(&dir, "two.grt", path, sizeof(path));
	gen_header(&rng, &h);
	w = grt_writer_open(path, &h);
	CHECK(w != NULL);
	for (int i = 0; i < 3; i++)
		CHECK(grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &l, sizeof(l)) == 0);
	CHECK(grt_writer_close(w, GRT_END_TARGET_EXIT, TS + 1) == 0);
	*img = test_read_file(path, len);
	test_dir_remove(&dir);
	second = sizeof(struct grt_file_header) + sizeof(struct grt_record_header) + sizeof(l);
	CHECK(*img && *len > second + sizeof(struct grt_record_header));
	return second;
}

static void expect_error(const unsigned char *img, size_t len, const char *says, size_t offset,
			 size_t launches_before)
{
	char err[256], where[64];
	struct grt_reader *r = grt_reader_open_memory(img, len, err, sizeof(err));
	struct grt_record rec;
	enum grt_read_status st = GRT_READ_OK;
	size_t launches = 0;

	CHECK(r != NULL);
	while (r && (st = grt_reader_next(r, &rec)) == GRT_READ_OK)
		launches += rec.hdr.type == GRT_REC_CUDA_LAUNCH;
	CHECK(st == GRT_READ_ERROR);
	CHECK_EQ_U64(launches, launches_before);
	snprintf(where, sizeof(where), "offset %zu", offset);
	CHECK_MSG(r && strstr(grt_reader_error(r), says) && strstr(grt_reader_error(r), where),
		  "%s", r ? grt_reader_error(r) : "no reader");
	grt_reader_close(r);
}

static void test_repeat_needs_its_launch(void)
{
	unsigned char *img;
	size_t len, second = three_launches(&img, &len);
	size_t third = second + sizeof(struct grt_record_header) +
		       sizeof(struct grt_cuda_launch_repeat_rec);
	uint16_t unknown = 200, three = 3;
	size_t first = sizeof(struct grt_file_header);
	struct grt_cuda_launch_repeat_rec r2, r3;
	struct grt_record_header hdr;
	unsigned char *cut;

	if (!img)
		return;
	memcpy(&hdr, img + second, sizeof(hdr));
	CHECK_EQ_U64(hdr.type, GRT_REC_CUDA_LAUNCH_REPEAT);
	CHECK_EQ_U64(hdr.payload_len, sizeof(struct grt_cuda_launch_repeat_rec));
	/* each repeat names the record before it */
	memcpy(&r2, img + second + sizeof(hdr), sizeof(r2));
	memcpy(&r3, img + third + sizeof(hdr), sizeof(r3));
	CHECK_EQ_U64(r2.base, first);
	CHECK_EQ_U64(r3.base, second);
	/* the middle launch cut out: the third names a record that is not the one before it */
	cut = malloc(len);
	if (cut) {
		memcpy(cut, img, second);
		memcpy(cut + second, img + third, len - third);
		expect_error(cut, len - (third - second), "repeats another launch record than the one "
			     "before it", second, 1);
		free(cut);
	}
	/* argument words the launch before does not have */
	memcpy(img + second + sizeof(hdr) + offsetof(struct grt_cuda_launch_repeat_rec, arg_words),
	       &three, sizeof(three));
	expect_error(img, len, "is malformed", second, 1);
	/* the launch before it made a record of a type this reader skips */
	memcpy(img + first + offsetof(struct grt_record_header, type), &unknown, sizeof(unknown));
	expect_error(img, len, "has no launch record before it", second, 0);
	free(img);
}

/*
 * A launch record longer than this build's (a later version's, copied by a
 * tool) is written whole, and the writer compares the next launch with it, as
 * the reader does: the launch after it, like the one before it, reads back
 * exact.
 */
static void test_longer_launch_between(void)
{
	struct gen_rng rng = {5};
	struct grt_event_origin o = {.ts_ns = TS, .cpu = 1, .pid = 10, .tid = 11};
	struct {
		struct grt_cuda_launch_rec l;
		uint64_t appended;
	} longer = {.l = a_launch(2), .appended = 0x5a5a};
	struct grt_cuda_launch_rec l = a_launch(1), got[3];
	struct grt_file_header h;
	struct test_dir dir;
	struct grt_writer *w;
	struct grt_reader *r;
	struct grt_record rec;
	char path[256], err[256];
	size_t n = 0;

	test_dir_make(&dir);
	test_dir_file(&dir, "longer.grt", path, sizeof(path));
	gen_header(&rng, &h);
	w = grt_writer_open(path, &h);
	CHECK(w != NULL);
	CHECK(grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &l, sizeof(l)) == 0);
	CHECK(grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &longer, sizeof(longer)) == 0);
	CHECK(grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &l, sizeof(l)) == 0);
	CHECK(grt_writer_close(w, GRT_END_TARGET_EXIT, TS + 1) == 0);
	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK)
		if (rec.hdr.type == GRT_REC_CUDA_LAUNCH && n < 3)
			memcpy(&got[n++], rec.payload, sizeof(got[0]));
	CHECK_EQ_U64(n, 3);
	CHECK(n == 3 && !memcmp(&got[0], &l, sizeof(l)) && !memcmp(&got[1], &longer.l, sizeof(l)) &&
	      !memcmp(&got[2], &l, sizeof(l)));
	CHECK(r && grt_reader_damage(r) == NULL);
	grt_reader_close(r);
	test_dir_remove(&dir);
}

int main(void)
{
	RUN_TEST(test_what_repeats);
	RUN_TEST(test_trace_roundtrip);
	RUN_TEST(test_repeat_needs_its_launch);
	RUN_TEST(test_longer_launch_between);
	return TEST_EXIT_STATUS();
}
