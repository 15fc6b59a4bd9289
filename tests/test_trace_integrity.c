/* Trace integrity (format 1.2): CRC-32C, checksum blocks, every single-byte flip in a record found. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/crc32c.h"
#include "known_trace.h"
#include "test_util.h"
#include "trace/grt_reader.h"
#include "trace/grt_writer.h"
#include "trace_files.h"

static void test_crc32c_vectors(void)
{
	static const char nine[] = "123456789";
	unsigned char zeros[32] = {0};

	/* the check values of CRC-32C (RFC 3720, B.4) */
	CHECK_EQ_U64(crc32c_update(0, nine, 9), 0xe3069283u);
	CHECK_EQ_U64(crc32c_update(0, zeros, sizeof(zeros)), 0x8a9136aau);
	/* continuing gives the CRC of the concatenation */
	CHECK_EQ_U64(crc32c_update(crc32c_update(0, nine, 4), nine + 4, 5), 0xe3069283u);
	CHECK_EQ_U64(crc32c_update(0, NULL, 0), 0);
}

/* The 32-bytes-a-turn loop and the byte loop agree: one call over a buffer, then byte by byte. */
static void test_crc32c_any_split(void)
{
	unsigned char buf[1000];
	uint32_t whole, bytes = 0;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (size_t len = 0; len <= sizeof(buf); len += 37) {
		whole = crc32c_update(0, buf, len);
		bytes = 0;
		for (size_t i = 0; i < len; i++)
			bytes = crc32c_update(bytes, buf + i, 1);
		CHECK_EQ_U64(whole, bytes);
		/* and split at an odd place */
		CHECK_EQ_U64(crc32c_update(crc32c_update(0, buf, len / 3), buf + len / 3, len - len / 3),
			     whole);
	}
}

/* 0 intact, 1 damage found, 2 the reader refused it: whichever, never silently accepted. */
static int read_image(const unsigned char *img, size_t len, char *why, size_t why_len)
{
	char err[256];
	struct grt_reader *r = grt_reader_open_memory(img, len, err, sizeof(err));
	struct grt_record rec;
	enum grt_read_status st;
	int result;

	if (!r) {
		snprintf(why, why_len, "%s", err);
		return 2;
	}
	while ((st = grt_reader_next(r, &rec)) == GRT_READ_OK)
		;
	if (st == GRT_READ_ERROR) {
		snprintf(why, why_len, "%s", grt_reader_error(r));
		result = 2;
	} else if (grt_reader_damage(r)) {
		snprintf(why, why_len, "%s", grt_reader_damage(r));
		result = 1;
	} else {
		why[0] = 0;
		result = 0;
	}
	grt_reader_close(r);
	return result;
}

static unsigned char *known_image(struct test_dir *dir, bool checksums, size_t *len)
{
	char path[256];

	test_dir_file(dir, checksums ? "known.grt" : "known-1.1.grt", path, sizeof(path));
	CHECK(known_trace_write_layout(path, checksums) == 0);
	return test_read_file(path, len);
}

static void test_intact(void)
{
	struct test_dir dir;
	char err[256], why[256];
	unsigned char *img;
	struct grt_reader *r;
	struct grt_record rec;
	size_t len;

	test_dir_make(&dir);
	img = known_image(&dir, true, &len);
	CHECK(img != NULL);
	CHECK_EQ_U64(read_image(img, len, why, sizeof(why)), 0);
	r = grt_reader_open_memory(img, len, err, sizeof(err));
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK)
		;
	CHECK(r && grt_reader_blocks_verified(r) == 1 && !grt_reader_damage(r));
	grt_reader_close(r);
	free(img);
	test_dir_remove(&dir);
}

/*
 * Every byte of every record flipped, one at a time: each flip is refused by
 * the reader or found by a checksum. Only the file header is outside them.
 */
static void test_every_flip_found(void)
{
	struct test_dir dir;
	char why[256];
	size_t len, refused = 0, found = 0, accepted = 0;
	unsigned char *img;

	test_dir_make(&dir);
	img = known_image(&dir, true, &len);
	CHECK(img != NULL);
	for (size_t at = sizeof(struct grt_file_header); img && at < len; at++) {
		int result;

		img[at] ^= 0x01;
		result = read_image(img, len, why, sizeof(why));
		img[at] ^= 0x01;
		refused += result == 2;
		found += result == 1;
		if (!result) {
			accepted++;
			fprintf(stderr, "  flip at offset %zu accepted\n", at);
		}
	}
	fprintf(stderr, "  %zu record bytes flipped: %zu refused by the reader, %zu found by "
		"checksums, %zu accepted\n", len - sizeof(struct grt_file_header), refused, found,
		accepted);
	CHECK_EQ_U64(accepted, 0);
	free(img);
	test_dir_remove(&dir);
}

/* Offset of the n-th record (0-based) of an image. */
static size_t record_at(const unsigned char *img, size_t len, unsigned n)
{
	size_t at = sizeof(struct grt_file_header);

	for (unsigned i = 0; i < n && at + sizeof(struct grt_record_header) <= len; i++) {
		struct grt_record_header h;

		memcpy(&h, img + at, sizeof(h));
		at += sizeof(h) + h.payload_len;
	}
	return at;
}

static size_t record_len(const unsigned char *img, size_t at)
{
	struct grt_record_header h;

	memcpy(&h, img + at, sizeof(h));
	return sizeof(h) + h.payload_len;
}

/* Record 5 deleted, or written twice: in both layouts, the damage is named. */
static void test_deleted_and_duplicated(void)
{
	struct test_dir dir;
	char why[256];

	test_dir_make(&dir);
	for (int checksums = 0; checksums <= 1; checksums++) {
		size_t len, at, n;
		unsigned char *img = known_image(&dir, checksums, &len), *twice;

		CHECK(img != NULL);
		if (!img)
			continue;
		at = record_at(img, len, 5);
		n = record_len(img, at);
		twice = malloc(len + n);
		memcpy(twice, img, at + n);
		memcpy(twice + at + n, img + at, len - at);
		CHECK_EQ_U64(read_image(twice, len + n, why, sizeof(why)), 1);
		CHECK(strstr(why, checksums ? "checksum mismatch for bytes 752.." : "counts 19 records") != NULL);
		memmove(img + at, img + at + n, len - at - n);
		CHECK_EQ_U64(read_image(img, len - n, why, sizeof(why)), 1);
		CHECK(strstr(why, checksums ? "checksum mismatch for bytes 752.." : "counts 19 records") != NULL);
		free(twice);
		free(img);
	}
	test_dir_remove(&dir);
}

/* A format 1.1 trace (no checksum records) reads as before, with nothing verified. */
static void test_old_format(void)
{
	struct test_dir dir;
	char err[256];
	struct grt_reader *r;
	struct grt_record rec;
	unsigned char *img;
	size_t len, n = 0;

	test_dir_make(&dir);
	img = known_image(&dir, false, &len);
	r = img ? grt_reader_open_memory(img, len, err, sizeof(err)) : NULL;
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK) {
		CHECK(rec.hdr.type != GRT_REC_CHECKSUM);
		n++;
	}
	CHECK_EQ_U64(n, KNOWN_RECORDS);
	CHECK(r && grt_reader_header(r)->version_major == 1 && grt_reader_header(r)->version_minor == 1);
	CHECK(r && !grt_reader_damage(r) && grt_reader_blocks_verified(r) == 0);
	grt_reader_close(r);
	free(img);
	test_dir_remove(&dir);
}

/*
 * The writer sums its buffer once per flush or block, not per record: every
 * checksum record still holds the CRC-32C of exactly the bytes it names, and
 * counts its records, over records of every size at every alignment, buffer
 * flushes, strings, and a record larger than the buffer (written through).
 */
static void test_block_crcs_exact(void)
{
	enum { UNKNOWN_TYPE = 200 }; /* a free type number: readers skip it, any length goes */
	static unsigned char payload[300 * 1024];
	struct grt_file_header header = {.clock_id = GRT_CLOCK_MONOTONIC};
	struct test_dir dir;
	struct grt_writer *w;
	char path[256], text[64], why[256];
	unsigned char *img;
	size_t len, at, blocks = 0, records = 0, in_block = 0;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (unsigned char)(i * 2654435761u >> 13);
	test_dir_make(&dir);
	test_dir_file(&dir, "blocks.grt", path, sizeof(path));
	w = grt_writer_open(path, &header);
	CHECK(w != NULL);
	for (uint32_t i = 0; w && i < 5000; i++) {
		struct grt_event_origin origin = {.ts_ns = i, .cpu = i % 3, .pid = 1, .tid = 1};

		CHECK(!grt_writer_append(w, UNKNOWN_TYPE, &origin, payload + i % 97, i * 7 % 1500));
		if (i % 100 == 0) {
			snprintf(text, sizeof(text), "string %u", i);
			CHECK(grt_writer_intern(w, text) != 0);
		}
		if (i == 2500)
			CHECK(!grt_writer_append(w, UNKNOWN_TYPE, &origin, payload,
						 sizeof(payload)));
	}
	CHECK(w && !grt_writer_close(w, 0, 1));
	img = test_read_file(path, &len);
	CHECK(img != NULL);
	CHECK_EQ_U64(read_image(img, len, why, sizeof(why)), 0);
	if (why[0])
		printf("  reader: %s\n", why);
	for (at = sizeof(struct grt_file_header); img && at + sizeof(struct grt_record_header) <= len;) {
		struct grt_record_header hdr;
		struct grt_checksum_rec sum;

		memcpy(&hdr, img + at, sizeof(hdr));
		if (hdr.type == GRT_REC_CHECKSUM) {
			memcpy(&sum, img + at + sizeof(hdr), sizeof(sum));
			CHECK_EQ_U64(sum.start + sum.length, at);
			CHECK_EQ_U64(sum.crc, crc32c_update(0, img + sum.start, sum.length));
			CHECK_EQ_U64(sum.records, in_block);
			in_block = 0;
			blocks++;
		} else if (hdr.type != GRT_REC_TRAILER) {
			in_block++;
			records++;
		}
		at += sizeof(hdr) + hdr.payload_len;
	}
	CHECK_EQ_U64(at, len);
	CHECK_EQ_U64(records, 5001 + 50);
	CHECK(blocks > 50);
	free(img);
	test_dir_remove(&dir);
}

int main(void)
{
	RUN_TEST(test_crc32c_vectors);
	RUN_TEST(test_crc32c_any_split);
	RUN_TEST(test_block_crcs_exact);
	RUN_TEST(test_intact);
	RUN_TEST(test_every_flip_found);
	RUN_TEST(test_deleted_and_duplicated);
	RUN_TEST(test_old_format);
	return TEST_EXIT_STATUS();
}
