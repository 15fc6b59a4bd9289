/* Every core and cuda record type through grt_writer and back through grt_reader, byte for byte. */
#include <stddef.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "trace_files.h"
#include "trace_gen.h"
#include "trace/grt_reader.h"

#define NCPUS 64
#define END_NS 0x123456789abcdefULL

/* Writes a trace with every covered type, stacks of every depth and records beyond the buffer. */
static int write_full_trace(const char *path, uint64_t seed, struct gen_log *log,
			    struct grt_file_header *header)
{
	struct gen_rng rng = {seed};
	struct grt_event_origin origin = {.ts_ns = 1, .cpu = 3, .pid = 77, .tid = 78};
	struct grt_trailer_rec trailer;
	struct grt_writer *w;
	size_t big = 300 * 1024;
	uint8_t *payload = malloc(GRT_MAX_PAYLOAD + 1);
	char *long_text = malloc(big + 1);
	int err = 0;

	gen_header(&rng, header);
	w = grt_writer_open(path, header);
	if (!w || !payload || !long_text)
		abort();
	/* the log is the file's exact layout: no checksum records between its records */
	grt_writer_set_checksums(w, false);
	err |= gen_random_records(w, log, &rng, header->start_monotonic_ns, 2000, NCPUS);
	for (uint32_t depth = 0; depth <= GRT_MAX_STACK_DEPTH; depth++) {
		struct grt_stack_rec *s = (struct grt_stack_rec *)payload;

		s->stack_id = depth + 100;
		s->depth = depth;
		gen_fill(&rng, s->ips, depth * 8);
		origin.cpu = depth % NCPUS;
		err |= gen_append(w, log, GRT_REC_STACK, &origin, s, sizeof(*s) + depth * 8);
	}
	/* a string and an unknown record larger than the buffer, a record of the largest size */
	for (size_t i = 0; i < big; i++)
		long_text[i] = (char)('a' + gen_below(&rng, 26));
	long_text[big] = 0;
	if (!gen_intern(w, log, long_text))
		err |= 1;
	gen_fill(&rng, payload, GRT_MAX_PAYLOAD + 1);
	err |= gen_append(w, log, GEN_UNKNOWN_TYPE, &origin, payload, (uint32_t)big);
	err |= gen_append(w, log, GEN_UNKNOWN_TYPE, &origin, payload, GRT_MAX_PAYLOAD);
	/* exactly the buffer (buffered), one byte more (written through), after a small one */
	err |= gen_random_record(w, log, &rng, GRT_REC_CUDA_SYNC, &origin);
	err |= gen_append(w, log, GEN_UNKNOWN_TYPE, &origin, payload,
			  GEN_WRITER_BUFFER - sizeof(struct grt_record_header));
	err |= gen_append(w, log, GEN_UNKNOWN_TYPE, &origin, payload,
			  GEN_WRITER_BUFFER - sizeof(struct grt_record_header) + 1);
	/* refused without side effects: no record, no sequence number used */
	if (gen_append(w, log, GEN_UNKNOWN_TYPE, &origin, payload, GRT_MAX_PAYLOAD + 1) !=
	    -EMSGSIZE)
		err |= 1;
	err |= gen_append(w, log, GEN_UNKNOWN_TYPE, &origin, NULL, 0);
	err |= gen_drop(w, log, GRT_SRC_CUDA, 0, 5); /* nothing lost: no record */
	err |= gen_random_records(w, log, &rng, END_NS - 1000000000, 500, NCPUS);
	trailer = (struct grt_trailer_rec){
	    .reason = GRT_END_SIGNAL, .records = log->n, .drops = log->drops, .end_ns = END_NS};
	origin = (struct grt_event_origin){.ts_ns = END_NS};
	/* format 1.1 layout (checksums off): the trailer without its CRC */
	gen_log_add(log, GRT_REC_TRAILER, &origin, &trailer, offsetof(struct grt_trailer_rec, crc));
	err |= grt_writer_close(w, GRT_END_SIGNAL, END_NS);
	free(payload);
	free(long_text);
	return err;
}

/* The text a record's string id must resolve to, from the log. */
static const char *expected_string(const struct gen_log *log, uint32_t id)
{
	return id && id <= log->nstrings ? log->strings[id - 1] : NULL;
}

static void check_string_ref(const struct grt_reader *r, const struct gen_log *log, uint32_t id)
{
	const char *want = expected_string(log, id);
	const char *got = grt_reader_string(r, id);

	if (!id)
		CHECK(got == NULL);
	else
		CHECK_STR(got, want);
}

/* String ids inside payloads must resolve when the record referencing them is read. */
static void check_record_strings(const struct grt_reader *r, const struct gen_log *log,
				 const struct grt_record *rec)
{
	const void *p = rec->payload;

	switch (rec->hdr.type) {
	case GRT_REC_STRING: {
		const struct grt_string_rec *s = p;

		CHECK_STR(grt_reader_string(r, s->id), s->text);
		break;
	}
	case GRT_REC_PROCESS:
		check_string_ref(r, log, ((const struct grt_process_rec *)p)->comm_str);
		check_string_ref(r, log, ((const struct grt_process_rec *)p)->exe_str);
		break;
	case GRT_REC_MAPPING:
		check_string_ref(r, log, ((const struct grt_mapping_rec *)p)->path_str);
		break;
	case GRT_REC_CUDA_LAUNCH:
		check_string_ref(r, log, ((const struct grt_cuda_launch_rec *)p)->kernel_str);
		/* every cuda record starts with the call */
		__attribute__((fallthrough));
	case GRT_REC_CUDA_ALLOC:
	case GRT_REC_CUDA_FREE:
	case GRT_REC_CUDA_MEMCPY:
	case GRT_REC_CUDA_MEMSET:
	case GRT_REC_CUDA_SYNC:
	case GRT_REC_CUDA_MODULE_LOAD:
	case GRT_REC_CUDA_FUNC_NAME:
	case GRT_REC_CUDA_GRAPH_LAUNCH:
		check_string_ref(r, log, ((const struct grt_cuda_call *)p)->comm_str);
		break;
	}
}

/* Reads everything back and compares it with the log; returns the number of records read. */
static size_t verify_trace(struct grt_reader *r, const struct gen_log *log,
			   const struct grt_file_header *written)
{
	struct grt_file_header want = *written;
	uint32_t next_seq[NCPUS] = {0};
	unsigned seen_types[GRT_REC_TYPE_MAX] = {0}, unknown = 0;
	uint64_t offset = sizeof(struct grt_file_header);
	struct grt_trailer_rec trailer;
	enum grt_read_status st;
	struct grt_record rec;
	size_t n = 0;

	memcpy(want.magic, GRT_FILE_MAGIC, 8);
	want.version_major = GRT_VERSION_MAJOR_NO_CHECKSUMS;
	want.version_minor = GRT_VERSION_MINOR_NO_CHECKSUMS;
	want.header_len = sizeof(want);
	want.flags = GRT_HDR_FINISHED;
	CHECK(memcmp(grt_reader_header(r), &want, sizeof(want)) == 0);
	while ((st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		const struct gen_record *exp = n < log->n ? &log->recs[n] : NULL;

		if (rec.hdr.type == GRT_REC_CHECKSUM) /* the writer's own, between the logged ones */
			continue;

		CHECK(exp != NULL);
		if (!exp)
			break;
		CHECK(memcmp(&rec.hdr, &exp->hdr, sizeof(rec.hdr)) == 0);
		CHECK(rec.payload != NULL);
		if (rec.payload && rec.hdr.payload_len == exp->hdr.payload_len)
			CHECK(memcmp(rec.payload, exp->payload, rec.hdr.payload_len) == 0);
		/* payloads are handed out aligned for their structs */
		CHECK(((uintptr_t)rec.payload & 7) == 0);
		CHECK_EQ_U64(rec.offset, offset);
		CHECK(rec.hdr.cpu < NCPUS);
		if (rec.hdr.cpu < NCPUS)
			CHECK_EQ_U64(rec.hdr.seq, next_seq[rec.hdr.cpu]++);
		check_record_strings(r, log, &rec);
		if (rec.hdr.type < GRT_REC_TYPE_MAX)
			seen_types[rec.hdr.type]++;
		else
			unknown += rec.hdr.type == GEN_UNKNOWN_TYPE;
		offset += sizeof(rec.hdr) + rec.hdr.payload_len;
		n++;
		if (test_failures_in_case > 20)
			return n; /* one broken record should not print thousands of lines */
	}
	CHECK(st == GRT_READ_END);
	CHECK_EQ_U64(n, log->n);
	for (size_t i = 0; i < GEN_NTYPES; i++)
		CHECK(seen_types[gen_types[i]] > 0);
	CHECK_EQ_U64(seen_types[GRT_REC_TRAILER], 1);
	CHECK(unknown >= 3);
	for (uint32_t cpu = 0; cpu < NCPUS; cpu++)
		CHECK(next_seq[cpu] > 0); /* every CPU had its own sequence */
	CHECK(grt_reader_trailer(r, &trailer));
	CHECK_EQ_U64(trailer.reason, GRT_END_SIGNAL);
	CHECK_EQ_U64(trailer.records, log->n - 1);
	CHECK_EQ_U64(trailer.drops, log->drops);
	CHECK_EQ_U64(trailer.end_ns, END_NS);
	for (size_t i = 0; i < log->nstrings; i++)
		CHECK_STR(grt_reader_string(r, (uint32_t)i + 1), log->strings[i]);
	CHECK(grt_reader_string(r, 0) == NULL);
	CHECK(grt_reader_string(r, (uint32_t)log->nstrings + 1) == NULL);
	return n;
}

/*
 * Reads src and writes every record again with a second writer: the same
 * header, records, sequence numbers and trailer must give the same bytes.
 */
static int rewrite_trace(const char *src, const char *dst)
{
	char err[256];
	struct grt_reader *r = grt_reader_open(src, err, sizeof(err));
	struct grt_trailer_rec trailer = {0};
	struct grt_writer *w;
	struct grt_record rec;
	int rc = 0;

	if (!r)
		return -1;
	w = grt_writer_open(dst, grt_reader_header(r));
	if (!w) {
		grt_reader_close(r);
		return -1;
	}
	grt_writer_set_checksums(w, grt_format_has_checksums(grt_reader_header(r)->version_major,
							     grt_reader_header(r)->version_minor));
	while (grt_reader_next(r, &rec) == GRT_READ_OK) {
		if (rec.hdr.type == GRT_REC_CHECKSUM) /* the copy's writer makes its own */
			continue;
		struct grt_event_origin origin = {
		    .ts_ns = rec.hdr.ts_ns,
		    .cpu = rec.hdr.cpu,
		    .pid = rec.hdr.pid,
		    .tid = rec.hdr.tid,
		};
		const struct grt_drop_rec *drop = rec.payload;

		if (rec.hdr.type == GRT_REC_TRAILER)
			trailer = *(const struct grt_trailer_rec *)rec.payload;
		else if (rec.hdr.type == GRT_REC_DROP)
			rc |= grt_writer_drop(w, drop->source, drop->count, rec.hdr.ts_ns);
		else
			rc |= grt_writer_append(w, rec.hdr.type, &origin, rec.payload,
						rec.hdr.payload_len);
	}
	rc |= grt_writer_close(w, trailer.reason, trailer.end_ns);
	grt_reader_close(r);
	return rc;
}

static void roundtrip_seed(uint64_t seed)
{
	struct test_dir dir;
	struct gen_log log = {0};
	struct grt_file_header header;
	char path[256], copy[256], err[256];
	struct grt_reader *r;
	unsigned char *bytes, *bytes2, *shifted;
	size_t len, len2;

	test_dir_make(&dir);
	test_dir_file(&dir, "full.grt", path, sizeof(path));
	test_dir_file(&dir, "copy.grt", copy, sizeof(copy));
	CHECK(write_full_trace(path, seed, &log, &header) == 0);
	CHECK_EQ_U64(log.mismatches, 0);
	CHECK_EQ_U64(log.big_records, 4);

	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(verify_trace(r, &log, &header), log.n);
	grt_reader_close(r);

	bytes = test_read_file(path, &len);
	CHECK(bytes != NULL);
	r = grt_reader_open_memory(bytes, len, err, sizeof(err));
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(verify_trace(r, &log, &header), log.n);
	grt_reader_close(r);

	/* an image at an odd address: payloads must still come out aligned */
	shifted = malloc(len + 1);
	memcpy(shifted + 1, bytes, len);
	r = grt_reader_open_memory(shifted + 1, len, err, sizeof(err));
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(verify_trace(r, &log, &header), log.n);
	grt_reader_close(r);
	free(shifted);

	CHECK(rewrite_trace(path, copy) == 0);
	bytes2 = test_read_file(copy, &len2);
	CHECK(bytes2 != NULL);
	CHECK_EQ_U64(len2, len);
	CHECK(bytes && bytes2 && len == len2 && memcmp(bytes, bytes2, len) == 0);
	free(bytes);
	free(bytes2);
	gen_log_free(&log);
	test_dir_remove(&dir);
}

static void test_roundtrip_seed_1(void)
{
	roundtrip_seed(1);
}

static void test_roundtrip_seed_2(void)
{
	roundtrip_seed(0xfeedface);
}

static void test_roundtrip_seed_3(void)
{
	roundtrip_seed(20261122);
}

/* The writer owns magic, version, header_len and flags whatever the caller passed. */
static void test_writer_owns_header_identity(void)
{
	struct test_dir dir;
	struct grt_file_header h;
	const struct grt_file_header *got;
	struct grt_reader *r;
	char path[256], err[256];

	memset(&h, 0xff, sizeof(h));
	test_dir_make(&dir);
	test_dir_file(&dir, "h.grt", path, sizeof(path));
	CHECK(grt_writer_close(grt_writer_open(path, &h), GRT_END_IDLE, 9) == 0);
	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		got = grt_reader_header(r);
		CHECK(memcmp(got->magic, GRT_FILE_MAGIC, 8) == 0);
		CHECK_EQ_U64(got->version_major, GRT_VERSION_MAJOR);
		CHECK_EQ_U64(got->version_minor, GRT_VERSION_MINOR);
		CHECK_EQ_U64(got->header_len, sizeof(h));
		CHECK_EQ_U64(got->flags, GRT_HDR_FINISHED);
		CHECK_EQ_U64(got->target_pid, 0xffffffffu);
		/* unterminated text fields come back terminated */
		CHECK_EQ_U64(strlen(got->hostname), sizeof(got->hostname) - 1);
		CHECK_EQ_U64(strlen(got->command_line), sizeof(got->command_line) - 1);
	}
	grt_reader_close(r);
	test_dir_remove(&dir);
}

/*
 * The file reader reads a window of the file at a time: records of every
 * length at every alignment, the largest payload, records across the
 * window's end, all come back whole, in order and 8-aligned.
 */
static void test_file_window_edges(void)
{
	static const uint32_t sizes[] = { 0, 1, 7, 8, 9, 13, 24, 63, 4095, 65537, GRT_MAX_PAYLOAD };
	struct test_dir dir;
	struct grt_file_header h = { 0 };
	struct grt_event_origin origin = { .cpu = 0 };
	struct grt_writer *w;
	struct grt_reader *r;
	struct grt_record rec;
	uint8_t *payload = malloc(GRT_MAX_PAYLOAD);
	char path[256], err[256];
	uint32_t n = 0, lens[400];

	test_dir_make(&dir);
	test_dir_file(&dir, "window.grt", path, sizeof(path));
	w = grt_writer_open(path, &h);
	CHECK(w != NULL);
	/* 400 records, about 5 MiB: several windows, the big ones landing anywhere in them */
	for (uint32_t i = 0; w && i < 400; i++) {
		uint32_t len = i % 37 == 5 ? GRT_MAX_PAYLOAD : sizes[i % 10] + i % 3;

		for (uint32_t b = 0; b < len; b++)
			payload[b] = (uint8_t)(b * 31 + i);
		origin.ts_ns = i;
		CHECK(grt_writer_append(w, GEN_UNKNOWN_TYPE, &origin, payload, len) == 0);
		lens[i] = len;
	}
	CHECK(grt_writer_close(w, GRT_END_IDLE, 1000) == 0);
	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK && rec.hdr.type != GRT_REC_TRAILER) {
		const uint8_t *p = rec.payload;
		bool same = n < 400 && rec.hdr.payload_len == lens[n] && rec.hdr.ts_ns == n;

		if (rec.hdr.type == GRT_REC_CHECKSUM)
			continue;

		for (uint32_t b = 0; same && b < rec.hdr.payload_len; b++)
			same = p[b] == (uint8_t)(b * 31 + n);
		CHECK(same);
		CHECK(((uintptr_t)rec.payload & 7) == 0);
		n++;
	}
	CHECK_EQ_U64(n, 400);
	CHECK(r && grt_reader_next(r, &rec) == GRT_READ_END);
	grt_reader_close(r);
	free(payload);
	test_dir_remove(&dir);
}

/* Interning: one record per distinct text, ids from 1, 0 for nothing. */
static void test_intern(void)
{
	struct test_dir dir;
	struct grt_file_header h = {0};
	struct grt_writer *w;
	char path[256];

	test_dir_make(&dir);
	test_dir_file(&dir, "i.grt", path, sizeof(path));
	w = grt_writer_open(path, &h);
	CHECK(w != NULL);
	CHECK_EQ_U64(grt_writer_intern(w, NULL), 0);
	CHECK_EQ_U64(grt_writer_intern(w, ""), 0);
	CHECK_EQ_U64(grt_writer_intern(w, "a"), 1);
	CHECK_EQ_U64(grt_writer_intern(w, "b"), 2);
	CHECK_EQ_U64(grt_writer_intern(w, "a"), 1);
	CHECK_EQ_U64(grt_writer_records(w), 2);
	CHECK_EQ_U64(grt_writer_drop(w, GRT_SRC_UVM, 5, 1), 0);
	CHECK_EQ_U64(grt_writer_drop(w, GRT_SRC_UVM, 0, 1), 0);
	CHECK_EQ_U64(grt_writer_drops(w), 5);
	CHECK_EQ_U64(grt_writer_records(w), 3);
	CHECK_EQ_U64(grt_writer_error(w), 0);
	CHECK(grt_writer_close(w, GRT_END_IDLE, 1) == 0);
	test_dir_remove(&dir);
}

/* A text longer than a record holds is cut, and the cut text interns once, not once per call. */
static void test_intern_overlong(void)
{
	size_t cut = GRT_MAX_PAYLOAD - sizeof(struct grt_string_rec) - 1, big = 2 * GRT_MAX_PAYLOAD;
	char *text = malloc(big + 1);
	struct test_dir dir;
	struct grt_file_header h = {0};
	struct grt_reader *r;
	struct grt_record rec;
	struct grt_writer *w;
	char path[256], err[256];
	unsigned strings = 0;

	memset(text, 'k', big);
	text[big] = 0;
	test_dir_make(&dir);
	test_dir_file(&dir, "long.grt", path, sizeof(path));
	w = grt_writer_open(path, &h);
	CHECK_EQ_U64(grt_writer_intern(w, text), 1);
	CHECK_EQ_U64(grt_writer_intern(w, text), 1);
	text[cut] = 0; /* the cut text is the same string */
	CHECK_EQ_U64(grt_writer_intern(w, text), 1);
	text[cut - 1] = 0;
	CHECK_EQ_U64(grt_writer_intern(w, text), 2);
	CHECK_EQ_U64(grt_writer_records(w), 2);
	CHECK(grt_writer_close(w, GRT_END_IDLE, 1) == 0);
	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK) {
		if (rec.hdr.type != GRT_REC_STRING)
			continue;
		strings++;
		CHECK_EQ_U64(rec.hdr.payload_len,
			     strings == 1 ? GRT_MAX_PAYLOAD : GRT_MAX_PAYLOAD - 1);
	}
	CHECK_EQ_U64(strings, 2);
	CHECK_EQ_U64(r ? strlen(grt_reader_string(r, 1)) : 0, cut);
	CHECK_EQ_U64(r ? strlen(grt_reader_string(r, 2)) : 0, cut - 1);
	grt_reader_close(r);
	free(text);
	test_dir_remove(&dir);
}

int main(void)
{
	RUN_TEST(test_roundtrip_seed_1);
	RUN_TEST(test_roundtrip_seed_2);
	RUN_TEST(test_roundtrip_seed_3);
	RUN_TEST(test_writer_owns_header_identity);
	RUN_TEST(test_file_window_edges);
	RUN_TEST(test_intern);
	RUN_TEST(test_intern_overlong);
	return TEST_EXIT_STATUS();
}
