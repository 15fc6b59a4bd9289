/* The reader on broken traces: every defect is an error naming its exact byte offset, never a
 * crash. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "trace_files.h"
#include "trace_gen.h"
#include "trace/grt_reader.h"

#define TARGET 3 /* the record most patches damage: a launch, in the middle of the trace */

/*
 * A small trace of known layout: 0 string, 1 string, 2 process, 3 launch
 * (TARGET), then bad() (when given) adds damaged records at index *bad, then
 * a stack, a drop, an alloc and the trailer.
 */
static void write_small_trace(const char *path, struct gen_log *log,
			      void (*bad)(struct grt_writer *w, struct gen_log *log),
			      size_t *bad_index)
{
	struct gen_rng rng = {42};
	struct grt_file_header h;
	struct grt_writer *w;
	struct grt_event_origin o = {.ts_ns = 1000, .cpu = 1, .pid = 10, .tid = 11};
	struct grt_process_rec process;
	struct grt_cuda_launch_rec launch;
	struct grt_trailer_rec trailer = {0};

	gen_header(&rng, &h);
	w = grt_writer_open(path, &h);
	if (!w)
		abort();
	/* the log is the file's exact layout: no checksum records between its records */
	grt_writer_set_checksums(w, false);
	gen_intern(w, log, "vecAdd");
	gen_intern(w, log, "app");
	gen_fill(&rng, &process, sizeof(process));
	process.comm_str = 2;
	process.exe_str = 0;
	gen_append(w, log, GRT_REC_PROCESS, &o, &process, sizeof(process));
	gen_fill(&rng, &launch, sizeof(launch));
	launch.kernel_str = 1;
	launch.call.comm_str = 2;
	gen_append(w, log, GRT_REC_CUDA_LAUNCH, &o, &launch, sizeof(launch));
	if (log->n != TARGET + 1 || log->recs[TARGET].hdr.type != GRT_REC_CUDA_LAUNCH)
		abort();
	*bad_index = log->n;
	if (bad)
		bad(w, log);
	o.cpu = 2;
	gen_random_record(w, log, &rng, GRT_REC_STACK, &o);
	gen_drop(w, log, GRT_SRC_CUDA, 7, 2000);
	gen_random_record(w, log, &rng, GRT_REC_CUDA_ALLOC, &o);
	grt_writer_close(w, GRT_END_TARGET_EXIT, 3000);
	o = (struct grt_event_origin){.ts_ns = 3000};
	/* only its size matters: the format 1.1 one, as written with checksums off */
	gen_log_add(log, GRT_REC_TRAILER, &o, &trailer, offsetof(struct grt_trailer_rec, crc));
}

/* True when text contains "offset N" with exactly the number N. */
static bool names_offset(const char *text, uint64_t offset)
{
	char want[40];
	const char *at = text;
	size_t n;

	n = (size_t)snprintf(want, sizeof(want), "offset %" PRIu64, offset);
	while (text && (at = strstr(at, want))) {
		if (at[n] < '0' || at[n] > '9')
			return true;
		at += n;
	}
	return false;
}

/* ---- damaged records written through the writer itself ---- */

static void bad_launch_short(struct grt_writer *w, struct gen_log *log)
{
	struct grt_event_origin o = {.cpu = 1};
	uint8_t p[50] = {0};

	gen_append(w, log, GRT_REC_CUDA_LAUNCH, &o, p, sizeof(p));
}

static void bad_trailer_short(struct grt_writer *w, struct gen_log *log)
{
	struct grt_event_origin o = {.cpu = 1};
	uint64_t p = 0;

	gen_append(w, log, GRT_REC_TRAILER, &o, &p, sizeof(p));
}

static void append_string(struct grt_writer *w, struct gen_log *log, uint32_t len_field,
			  const char *text, uint32_t text_bytes)
{
	struct grt_event_origin o = {0};
	uint8_t p[64];
	struct grt_string_rec s = {.id = 99, .len = len_field};

	memcpy(p, &s, sizeof(s));
	memcpy(p + sizeof(s), text, text_bytes);
	gen_append(w, log, GRT_REC_STRING, &o, p, (uint32_t)sizeof(s) + text_bytes);
}

static void bad_string_no_nul(struct grt_writer *w, struct gen_log *log)
{
	append_string(w, log, 4, "abcd", 4);
}

static void bad_string_len_mismatch(struct grt_writer *w, struct gen_log *log)
{
	append_string(w, log, 6, "abcd", 5);
}

static void bad_string_len_short(struct grt_writer *w, struct gen_log *log)
{
	append_string(w, log, 2, "abcd", 5);
}

static void bad_string_len_zero(struct grt_writer *w, struct gen_log *log)
{
	append_string(w, log, 0, "", 1);
}

static void bad_string_header_only(struct grt_writer *w, struct gen_log *log)
{
	append_string(w, log, 1, "", 0);
}

static void append_stack(struct grt_writer *w, struct gen_log *log, uint32_t depth, uint32_t ips)
{
	struct grt_event_origin o = {.cpu = 1};
	uint64_t p[1 + 40] = {0};
	struct grt_stack_rec s = {.stack_id = 5, .depth = depth};

	memcpy(p, &s, sizeof(s));
	gen_append(w, log, GRT_REC_STACK, &o, p, (uint32_t)(sizeof(s) + ips * 8));
}

static void bad_stack_too_deep(struct grt_writer *w, struct gen_log *log)
{
	append_stack(w, log, GRT_MAX_STACK_DEPTH + 1, GRT_MAX_STACK_DEPTH + 1);
}

static void bad_stack_beyond_payload(struct grt_writer *w, struct gen_log *log)
{
	append_stack(w, log, 5, 2);
}

static void bad_stack_depth_huge(struct grt_writer *w, struct gen_log *log)
{
	append_stack(w, log, 0xffffffffu, 0);
}

/* ---- damage done to the bytes of a good trace ---- */

static void put_u32(unsigned char *at, uint32_t v)
{
	memcpy(at, &v, sizeof(v));
}

static void put_u16(unsigned char *at, uint16_t v)
{
	memcpy(at, &v, sizeof(v));
}

static uint64_t patch_file_magic(unsigned char *img, size_t *len, const struct gen_log *log)
{
	img[3] ^= 0x20;
	return 0;
}

static uint64_t patch_foreign_short(unsigned char *img, size_t *len, const struct gen_log *log)
{
	memcpy(img, "hello\n", 6);
	*len = 6;
	return 0;
}

static uint64_t patch_empty(unsigned char *img, size_t *len, const struct gen_log *log)
{
	*len = 0;
	return 0;
}

static uint64_t patch_major(unsigned char *img, size_t *len, const struct gen_log *log)
{
	put_u16(img + offsetof(struct grt_file_header, version_major), GRT_VERSION_MAJOR + 1);
	return 8;
}

static uint64_t patch_header_cut(unsigned char *img, size_t *len, const struct gen_log *log)
{
	*len = 100;
	return 100;
}

static uint64_t patch_header_cut_in_version(unsigned char *img, size_t *len,
					    const struct gen_log *log)
{
	*len = 9;
	return 9;
}

static uint64_t patch_header_len_small(unsigned char *img, size_t *len, const struct gen_log *log)
{
	put_u32(img + offsetof(struct grt_file_header, header_len), 100);
	return 12;
}

static uint64_t patch_header_len_past_eof(unsigned char *img, size_t *len,
					  const struct gen_log *log)
{
	put_u32(img + offsetof(struct grt_file_header, header_len), (uint32_t)*len + 1);
	return 12;
}

static uint64_t patch_cut_record_header(unsigned char *img, size_t *len, const struct gen_log *log)
{
	*len = gen_log_offset(log, TARGET) + 10;
	return gen_log_offset(log, TARGET);
}

static uint64_t patch_cut_payload(unsigned char *img, size_t *len, const struct gen_log *log)
{
	*len = gen_log_offset(log, TARGET) + sizeof(struct grt_record_header) + 5;
	return gen_log_offset(log, TARGET);
}

static uint64_t patch_length_past_eof(unsigned char *img, size_t *len, const struct gen_log *log)
{
	uint64_t at = gen_log_offset(log, TARGET);

	put_u32(img + at + offsetof(struct grt_record_header, payload_len),
		(uint32_t)(*len - at - sizeof(struct grt_record_header) + 1));
	return at;
}

static uint64_t patch_length_over_max(unsigned char *img, size_t *len, const struct gen_log *log)
{
	uint64_t at = gen_log_offset(log, TARGET);

	put_u32(img + at + offsetof(struct grt_record_header, payload_len), GRT_MAX_PAYLOAD + 1);
	return at;
}

static uint64_t patch_length_u32_max(unsigned char *img, size_t *len, const struct gen_log *log)
{
	uint64_t at = gen_log_offset(log, TARGET);

	put_u32(img + at + offsetof(struct grt_record_header, payload_len), 0xffffffffu);
	return at;
}

static uint64_t patch_length_under_min(unsigned char *img, size_t *len, const struct gen_log *log)
{
	uint64_t at = gen_log_offset(log, TARGET);

	put_u32(img + at + offsetof(struct grt_record_header, payload_len), 16);
	return at;
}

static uint64_t patch_record_magic(unsigned char *img, size_t *len, const struct gen_log *log)
{
	uint64_t at = gen_log_offset(log, TARGET);

	img[at] = 0;
	return at;
}

static uint64_t patch_record_version(unsigned char *img, size_t *len, const struct gen_log *log)
{
	uint64_t at = gen_log_offset(log, TARGET);

	img[at + 1] = GRT_RECORD_VERSION + 1;
	return at;
}

struct error_case {
	const char *name;
	void (*bad_record)(struct grt_writer *w, struct gen_log *log);
	/* damages the image, returns the offset the error must name */
	uint64_t (*patch)(unsigned char *img, size_t *len, const struct gen_log *log);
	bool open_fails;
	const char *phrase; /* the error must say this */
};

static const struct error_case error_cases[] = {
    {"bad file magic", NULL, patch_file_magic, true, "bad magic"},
    {"short foreign file", NULL, patch_foreign_short, true, "bad magic"},
    {"empty file", NULL, patch_empty, true, "truncated header"},
    {"unknown major version", NULL, patch_major, true, "unsupported format version 3."},
    {"truncated header", NULL, patch_header_cut, true, "truncated header"},
    {"header cut inside the version", NULL, patch_header_cut_in_version, true, "truncated header"},
    {"header length too small", NULL, patch_header_len_small, true, "bad header length 100"},
    {"header length past eof", NULL, patch_header_len_past_eof, true, "bad header length"},
    {"truncated record header", NULL, patch_cut_record_header, false, "truncated record header"},
    {"payload cut by eof", NULL, patch_cut_payload, false, "past end of file"},
    {"record length past eof", NULL, patch_length_past_eof, false, "past end of file"},
    {"payload_len over GRT_MAX_PAYLOAD", NULL, patch_length_over_max, false, "too large"},
    {"payload_len 0xffffffff", NULL, patch_length_u32_max, false, "too large"},
    {"payload_len under the type's minimum", NULL, patch_length_under_min, false,
     "launch record at offset"},
    {"bad record magic", NULL, patch_record_magic, false, "bad record magic 0x00"},
    {"bad record version", NULL, patch_record_version, false, "unknown record version 2"},
    {"launch shorter than min_len", bad_launch_short, NULL, false,
     "is 50 bytes, needs at least 112"},
    {"trailer shorter than min_len", bad_trailer_short, NULL, false,
     "is 8 bytes, needs at least 32"},
    {"string without NUL", bad_string_no_nul, NULL, false, "malformed string"},
    {"string len longer than text", bad_string_len_mismatch, NULL, false, "malformed string"},
    {"string len shorter than text", bad_string_len_short, NULL, false, "malformed string"},
    {"string len 0", bad_string_len_zero, NULL, false, "malformed string"},
    {"string header only", bad_string_header_only, NULL, false, "needs at least 9"},
    {"stack depth 33", bad_stack_too_deep, NULL, false, "malformed stack"},
    {"stack depth beyond payload", bad_stack_beyond_payload, NULL, false, "malformed stack"},
    {"stack depth 0xffffffff", bad_stack_depth_huge, NULL, false, "malformed stack"},
};

/* Opens the image in memory or through a file; err gets open's message. */
static struct grt_reader *open_image(const char *path, const unsigned char *img, size_t len,
				     bool from_file, char *err, size_t err_len)
{
	err[0] = 0;
	if (from_file)
		return test_write_file(path, img, len) ? NULL : grt_reader_open(path, err, err_len);
	return grt_reader_open_memory(img, len, err, err_len);
}

static void run_error_case(const struct error_case *c, bool from_file)
{
	struct test_dir dir;
	struct gen_log log = {0};
	char path[256], err[256];
	struct grt_reader *r;
	struct grt_record rec;
	enum grt_read_status st;
	unsigned char *img, *exact;
	size_t len, bad = 0, good;
	uint64_t offset;
	int before = test_failures_in_case;

	test_dir_make(&dir);
	test_dir_file(&dir, "e.grt", path, sizeof(path));
	write_small_trace(path, &log, c->bad_record, &bad);
	img = test_read_file(path, &len);
	if (!img)
		abort();
	offset = c->patch ? c->patch(img, &len, &log) : gen_log_offset(&log, bad);
	exact = malloc(len ? len : 1); /* exactly len bytes, so ASan catches any overread */
	memcpy(exact, img, len);
	r = open_image(path, exact, len, from_file, err, sizeof(err));
	if (c->open_fails) {
		CHECK(r == NULL);
		CHECK(strstr(err, c->phrase) != NULL);
		CHECK(names_offset(err, offset));
	} else if (r) {
		for (good = 0; (st = grt_reader_next(r, &rec)) == GRT_READ_OK; good++)
			CHECK(rec.offset < offset);
		CHECK(st == GRT_READ_ERROR);
		CHECK(offset == gen_log_offset(&log, good)); /* everything before it was read */
		CHECK(strstr(grt_reader_error(r), c->phrase) != NULL);
		CHECK(names_offset(grt_reader_error(r), offset));
		snprintf(err, sizeof(err), "%s", grt_reader_error(r));
		CHECK(grt_reader_next(r, &rec) == GRT_READ_ERROR); /* and stays there */
		CHECK_STR(grt_reader_error(r), err);
		CHECK(!grt_reader_trailer(r, NULL));
	} else {
		CHECK(r != NULL);
	}
	if (test_failures_in_case != before)
		printf("  in case '%s' (%s): offset %" PRIu64 ", error: %s\n", c->name,
		       from_file ? "file" : "memory", offset, r ? grt_reader_error(r) : err);
	grt_reader_close(r);
	free(exact);
	free(img);
	gen_log_free(&log);
	test_dir_remove(&dir);
}

static void test_error_cases_memory(void)
{
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++)
		run_error_case(&error_cases[i], false);
}

static void test_error_cases_file(void)
{
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++)
		run_error_case(&error_cases[i], true);
}

/* Reads the image to the end; returns the records read, *st the final status. */
static size_t read_all(struct grt_reader *r, enum grt_read_status *st, uint16_t *types,
		       size_t max_types)
{
	struct grt_record rec;
	size_t n = 0;

	while ((*st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		if (n < max_types)
			types[n] = rec.hdr.type;
		n++;
	}
	return n;
}

/* Accepted variations: unknown type, newer minor version, a longer header. */
static void test_tolerated_variations(void)
{
	struct test_dir dir;
	struct gen_log log = {0};
	char path[256], err[256];
	struct grt_reader *r;
	enum grt_read_status st;
	unsigned char *img, *longer;
	uint16_t types[64];
	size_t len, bad, n;
	uint64_t at;

	test_dir_make(&dir);
	test_dir_file(&dir, "t.grt", path, sizeof(path));
	write_small_trace(path, &log, NULL, &bad);
	img = test_read_file(path, &len);
	if (!img)
		abort();

	/* an unknown type with a sane length is handed out like any record */
	at = gen_log_offset(&log, TARGET);
	put_u16(img + at + offsetof(struct grt_record_header, type), GEN_UNKNOWN_TYPE);
	put_u16(img + offsetof(struct grt_file_header, version_minor), GRT_VERSION_MINOR + 5);
	r = grt_reader_open_memory(img, len, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		n = read_all(r, &st, types, 64);
		CHECK(st == GRT_READ_END);
		CHECK_EQ_U64(n, log.n);
		CHECK_EQ_U64(types[TARGET], GEN_UNKNOWN_TYPE);
		CHECK_EQ_U64(grt_reader_header(r)->version_minor, GRT_VERSION_MINOR + 5);
		CHECK(grt_reader_trailer(r, NULL));
	}
	grt_reader_close(r);

	/* a header longer than this build's: records start at header_len */
	longer = calloc(1, len + 40);
	memcpy(longer, img, sizeof(struct grt_file_header));
	memcpy(longer + sizeof(struct grt_file_header) + 40, img + sizeof(struct grt_file_header),
	       len - sizeof(struct grt_file_header));
	put_u32(longer + offsetof(struct grt_file_header, header_len),
		sizeof(struct grt_file_header) + 40);
	r = grt_reader_open_memory(longer, len + 40, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(read_all(r, &st, types, 64), log.n);
		CHECK(st == GRT_READ_END);
	}
	grt_reader_close(r);
	free(longer);
	free(img);
	gen_log_free(&log);
	test_dir_remove(&dir);
}

/*
 * The trace cut at every byte: the header cuts fail to open, every other cut
 * reads the whole records before it and then ends cleanly exactly when the cut
 * is a record boundary, else fails naming the first incomplete record. Only
 * the uncut file has a trailer.
 */
static void check_cut(const struct gen_log *log, const unsigned char *full, size_t full_len,
		      size_t cut, bool from_file, const char *path)
{
	char err[256];
	unsigned char *exact = malloc(cut ? cut : 1);
	struct grt_reader *r;
	enum grt_read_status st;
	uint16_t types[64];
	size_t whole = 0, n;
	bool boundary = cut == sizeof(struct grt_file_header);
	int before = test_failures_in_case;

	memcpy(exact, full, cut);
	for (size_t k = 0; k < log->n; k++) {
		uint64_t end = gen_log_offset(log, k + 1);

		whole += end <= cut;
		boundary |= end == cut;
	}
	r = open_image(path, exact, cut, from_file, err, sizeof(err));
	if (cut < sizeof(struct grt_file_header)) {
		CHECK(r == NULL);
		CHECK(names_offset(err, cut));
	} else if (r) {
		n = read_all(r, &st, types, 64);
		CHECK_EQ_U64(n, whole);
		CHECK(st == (boundary ? GRT_READ_END : GRT_READ_ERROR));
		if (!boundary)
			CHECK(names_offset(grt_reader_error(r), gen_log_offset(log, whole)));
		CHECK(grt_reader_trailer(r, NULL) == (cut == full_len));
	} else {
		CHECK(r != NULL);
	}
	if (test_failures_in_case != before)
		printf("  cut at %zu (%s): %s\n", cut, from_file ? "file" : "memory",
		       r ? grt_reader_error(r) : err);
	grt_reader_close(r);
	free(exact);
}

static void test_cut_at_every_byte(void)
{
	struct test_dir dir;
	struct gen_log log = {0};
	char path[256], cut_path[256];
	unsigned char *img;
	size_t len, bad;

	test_dir_make(&dir);
	test_dir_file(&dir, "c.grt", path, sizeof(path));
	test_dir_file(&dir, "cut.grt", cut_path, sizeof(cut_path));
	write_small_trace(path, &log, NULL, &bad);
	img = test_read_file(path, &len);
	if (!img)
		abort();
	CHECK_EQ_U64(len, gen_log_offset(&log, log.n));
	for (size_t cut = 0; cut <= len && test_failures_in_case < 20; cut++) {
		check_cut(&log, img, len, cut, false, cut_path);
		check_cut(&log, img, len, cut, true, cut_path);
	}
	free(img);
	gen_log_free(&log);
	test_dir_remove(&dir);
}

/* A path that is not a trace file: a clear error, not a crash. */
static void test_open_failures(void)
{
	char err[256];

	CHECK(grt_reader_open("/nonexistent/x.grt", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "cannot open") != NULL);
	CHECK(grt_reader_open("/tmp", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "not a regular file") != NULL);
	CHECK(grt_reader_open("/dev/null", err, sizeof(err)) == NULL);
	CHECK(grt_reader_open_memory("", 0, err, sizeof(err)) == NULL);
	CHECK(names_offset(err, 0));
	/* NULL error buffers are allowed */
	CHECK(grt_reader_open_memory("", 0, NULL, 0) == NULL);
}

int main(void)
{
	RUN_TEST(test_error_cases_memory);
	RUN_TEST(test_error_cases_file);
	RUN_TEST(test_tolerated_variations);
	RUN_TEST(test_cut_at_every_byte);
	RUN_TEST(test_open_failures);
	return TEST_EXIT_STATUS();
}
