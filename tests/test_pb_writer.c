/* The protobuf wire writer: byte-exact encodings, nested lengths, buffer boundaries, errors. */
#include <errno.h>
#include <stdlib.h>
#include "common/pb_writer.h"
#include "test_util.h"

struct capture {
	char *buf;
	size_t len;
	FILE *out;
	struct pb_writer w;
};

static void capture_start(struct capture *c, size_t cap)
{
	c->buf = NULL;
	c->len = 0;
	c->out = open_memstream(&c->buf, &c->len);
	CHECK_EQ_U64(pb_writer_init(&c->w, c->out, cap), 0);
}

/* Finishes the writer, checks its status and returns the bytes (the caller frees them). */
static char *capture_end(struct capture *c, int want_rc)
{
	CHECK_EQ_U64(pb_writer_finish(&c->w), want_rc);
	fclose(c->out);
	return c->buf;
}

static void check_bytes(const char *got, size_t got_len, const unsigned char *want, size_t want_len)
{
	CHECK_EQ_U64(got_len, want_len);
	CHECK(got_len == want_len && !memcmp(got, want, want_len));
}

static void test_varints_and_fixed64(void)
{
	static const unsigned char want[] = {
		0x08, 0x00,				/* 1: 0 */
		0x10, 0x7f,				/* 2: 127 */
		0x18, 0x80, 0x01,			/* 3: 128 */
		0x20, 0xac, 0x02,			/* 4: 300 */
		0x28, 0xff, 0x7f,			/* 5: 16383 */
		0x30, 0x80, 0x80, 0x01,			/* 6: 16384 */
		0x38, 0x80, 0x80, 0x80, 0x80, 0x10,	/* 7: 2^32 */
		0x40, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 8: -1 (int64) */
		0xf8, 0x02, 0x01,			/* 47: true (two-byte tag) */
		0x81, 0x03, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* 48: fixed64 */
		0x12, 0x03, 'a', 'b', 'c',		/* 2: "abc" */
	};
	struct capture c;
	char *got;

	capture_start(&c, 4096);
	pb_varint(&c.w, 1, 0);
	pb_varint(&c.w, 2, 127);
	pb_varint(&c.w, 3, 128);
	pb_varint(&c.w, 4, 300);
	pb_varint(&c.w, 5, 16383);
	pb_varint(&c.w, 6, 16384);
	pb_varint(&c.w, 7, 1ull << 32);
	pb_int64(&c.w, 8, -1);
	pb_bool(&c.w, 47, true);
	pb_fixed64(&c.w, 48, 0x0102030405060708ull);
	pb_string(&c.w, 2, "abc");
	got = capture_end(&c, 0);
	check_bytes(got, c.len, want, sizeof(want));
	free(got);
}

/* A message's length is patched at its end; from 128 bytes on, its body moves to make room. */
static void test_nested_lengths(void)
{
	unsigned char want[512];
	char filler[126];
	struct capture c;
	size_t n = 0;
	char *got;

	memset(filler, 'x', sizeof(filler));
	/* 1 { 2 { 3: 125 x } 4 { 5: 126 x } }: 2's body is 127 bytes, 4's 128, 1's 260 */
	want[n++] = 0x0a;
	want[n++] = 0x84;
	want[n++] = 0x02;
	want[n++] = 0x12;
	want[n++] = 0x7f;
	want[n++] = 0x1a;
	want[n++] = 125;
	memcpy(want + n, filler, 125);
	n += 125;
	want[n++] = 0x22;
	want[n++] = 0x80;
	want[n++] = 0x01;
	want[n++] = 0x2a;
	want[n++] = 126;
	memcpy(want + n, filler, 126);
	n += 126;
	CHECK_EQ_U64(n, 3 + 260);
	capture_start(&c, 4096);
	pb_begin(&c.w, 1);
	pb_begin(&c.w, 2);
	pb_bytes(&c.w, 3, filler, 125);
	pb_end(&c.w);
	pb_begin(&c.w, 4);
	pb_bytes(&c.w, 5, filler, 126);
	pb_end(&c.w);
	pb_end(&c.w);
	got = capture_end(&c, 0);
	check_bytes(got, c.len, want, n);
	free(got);
}

/* Many packets of every size, some larger than a buffer. */
static void write_packets(struct pb_writer *w)
{
	char text[3000];

	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	for (uint64_t i = 0; i < 2000; i++) {
		pb_begin(w, 1);
		pb_varint(w, 8, i * 977);
		pb_fixed64(w, 47, i);
		pb_begin(w, 11);
		pb_varint(w, 9, i % 4);
		pb_bytes(w, 2, text, (i * 7) % 300);
		if (i % 97 == 0) {
			pb_begin(w, 4);
			pb_bytes(w, 6, text, (i * 13) % sizeof(text));
			pb_end(w);
		}
		pb_end(w);
		pb_end(w);
	}
}

/*
 * Small buffers cut packets at every place: the output stays the same,
 * through a memory stream (one thread) and through a file (the writer thread).
 */
static void test_buffer_boundaries(void)
{
	static const size_t caps[] = { 1, 16, 100, 1000 };
	struct capture ref, c;
	char *want, *got;
	size_t want_len;

	capture_start(&ref, 1 << 20);
	write_packets(&ref.w);
	want = capture_end(&ref, 0);
	want_len = ref.len;
	CHECK(want_len > 300000);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		FILE *f = tmpfile();
		struct pb_writer w;
		long n;

		capture_start(&c, caps[i]);
		write_packets(&c.w);
		got = capture_end(&c, 0);
		CHECK_EQ_U64(c.len, want_len);
		CHECK(c.len == want_len && !memcmp(got, want, want_len));
		free(got);

		fputs("head", f);
		CHECK_EQ_U64(pb_writer_init(&w, f, caps[i]), 0);
		write_packets(&w);
		CHECK_EQ_U64(w.written + w.len, want_len);
		CHECK_EQ_U64(pb_writer_finish(&w), 0);
		fflush(f);
		n = ftell(f);
		CHECK_EQ_U64(n, want_len + 4);
		got = malloc((size_t)n);
		rewind(f);
		CHECK_EQ_U64(fread(got, 1, (size_t)n, f), (size_t)n);
		CHECK(!memcmp(got, "head", 4) && !memcmp(got + 4, want, want_len));
		free(got);
		fclose(f);
	}
	free(want);
}

static void test_errors(void)
{
	FILE *full = fopen("/dev/full", "w");
	struct capture c;
	struct pb_writer w;

	capture_start(&c, 64);
	pb_end(&c.w);
	free(capture_end(&c, -EINVAL));

	capture_start(&c, 64);
	for (int i = 0; i <= PB_MAX_DEPTH; i++)
		pb_begin(&c.w, 1);
	free(capture_end(&c, -E2BIG));

	capture_start(&c, 64);
	pb_begin(&c.w, 1);
	free(capture_end(&c, -EINVAL)); /* a message left open */

	CHECK(full != NULL);
	if (!full)
		return;
	CHECK_EQ_U64(pb_writer_init(&w, full, 64), 0);
	write_packets(&w);
	CHECK(pb_writer_finish(&w) == -ENOSPC);
	fclose(full);
}

int main(void)
{
	RUN_TEST(test_varints_and_fixed64);
	RUN_TEST(test_nested_lengths);
	RUN_TEST(test_buffer_boundaries);
	RUN_TEST(test_errors);
	return TEST_EXIT_STATUS();
}
