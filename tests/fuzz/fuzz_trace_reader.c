/* libFuzzer target: any bytes through grt_reader, from memory and from a file, and every printer.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "export/event_csv.h"
#include "export/event_printer.h"
#include "trace/grt_reader.h"

/*
 * Beyond the sanitizers, each input checks what the reader and printers
 * promise: the image and file readers agree record for record, every error
 * names a byte offset, text prints exactly one line per record and CSV one per
 * record plus a header per record type, both without raw control bytes, and
 * JSON Lines are valid UTF-8 objects, one per line.
 */
#define FUZZ_ASSERT(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz assertion failed: %s (%s:%d)\n", #cond, __FILE__,    \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Inputs with more records than this skip the CSV line count (a quadratic type count). */
#define MAX_TYPES_SEEN 4096

struct sink {
	char *text;
	size_t len;
	FILE *out;
	struct grt_event_printer *printer;	/* text and JSON */
	struct event_csv *csv;			/* CSV, as parse writes it */
};

static void sink_open(struct sink *s, enum grt_event_format format)
{
	s->text = NULL;
	s->len = 0;
	s->out = open_memstream(&s->text, &s->len);
	FUZZ_ASSERT(s->out);
	s->printer = NULL;
	s->csv = NULL;
	if (format == GRT_FORMAT_CSV)
		s->csv = event_csv_new(s->out, NULL);
	else
		s->printer = grt_event_printer_new(s->out, format, 1000);
	FUZZ_ASSERT(s->printer || s->csv);
}

static void sink_close(struct sink *s)
{
	grt_event_printer_free(s->printer);
	FUZZ_ASSERT(!s->csv || event_csv_free(s->csv) == 0);
	fclose(s->out);
}

/* How many record types the input holds: CSV writes a header for each. */
static size_t count_types(const uint16_t *types, size_t n)
{
	size_t distinct = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < i && types[j] != types[i])
			j++;
		distinct += j == i;
	}
	return distinct;
}

/* Length of a well-formed UTF-8 sequence at p within n bytes, 0 when malformed. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len = p[0] < 0x80		    ? 1
		     : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
		     : p[0] >= 0xe0 && p[0] <= 0xef ? 3
		     : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
						    : 0;
	uint32_t cp;

	if (!len || len > n)
		return 0;
	cp = len == 1 ? p[0] : p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* One line per record (plus CSV's headers), no control bytes but the line ends. */
static void check_lines(const struct sink *s, size_t records, size_t headers, bool json)
{
	const unsigned char *t = (const unsigned char *)s->text;
	size_t lines = 0;

	for (size_t i = 0; i < s->len; i++) {
		if (t[i] == '\n') {
			lines++;
			FUZZ_ASSERT(!json || (i > 0 && t[i - 1] == '}'));
			FUZZ_ASSERT(!json || i + 1 == s->len || t[i + 1] == '{');
			continue;
		}
		FUZZ_ASSERT(t[i] >= 0x20 && t[i] != 0x7f);
		if (json) {
			size_t n = utf8_len(t + i, s->len - i);

			FUZZ_ASSERT(n);
			i += n - 1;
		}
	}
	FUZZ_ASSERT(lines == records + headers);
	FUZZ_ASSERT(!s->len || t[s->len - 1] == '\n');
}

/* CSV's first pass, as parse makes it: the columns of every record type. */
static void learn_csv_columns(struct sink *csv, const uint8_t *data, size_t size)
{
	struct grt_reader *r = grt_reader_open_memory(data, size, NULL, 0);
	struct grt_record rec;

	FUZZ_ASSERT(r);
	while (grt_reader_next(r, &rec) == GRT_READ_OK)
		FUZZ_ASSERT(event_csv_learn(csv->csv, &rec) == 0);
	grt_reader_close(r);
}

/* The same bytes through a file, as `grtrace parse` reads them. */
static struct grt_reader *open_as_file(const uint8_t *data, size_t size, int *fd, char *err,
				       size_t err_len)
{
	char path[64];

	*fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
	FUZZ_ASSERT(*fd >= 0);
	FUZZ_ASSERT(!size || write(*fd, data, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	return grt_reader_open(path, err, err_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err_mem[256] = "", err_file[256] = "";
	struct grt_reader *rm = grt_reader_open_memory(data, size, err_mem, sizeof(err_mem));
	int fd;
	struct grt_reader *rf = open_as_file(data, size, &fd, err_file, sizeof(err_file));
	struct grt_trailer_rec tm, tf;
	struct sink text, csv, json;
	enum grt_read_status sm, sf;
	size_t records = 0;
	uint16_t types[MAX_TYPES_SEEN];

	FUZZ_ASSERT(!rm == !rf);
	if (!rm) {
		FUZZ_ASSERT(!strcmp(err_mem, err_file));
		FUZZ_ASSERT(strstr(err_mem, "offset "));
		close(fd);
		return 0;
	}
	FUZZ_ASSERT(
	    !memcmp(grt_reader_header(rm), grt_reader_header(rf), sizeof(struct grt_file_header)));
	sink_open(&text, GRT_FORMAT_TEXT);
	sink_open(&csv, GRT_FORMAT_CSV);
	sink_open(&json, GRT_FORMAT_JSON);
	learn_csv_columns(&csv, data, size);
	for (;;) {
		struct grt_record a, b;

		sm = grt_reader_next(rm, &a);
		sf = grt_reader_next(rf, &b);
		FUZZ_ASSERT(sm == sf);
		if (sm != GRT_READ_OK)
			break;
		FUZZ_ASSERT(!memcmp(&a.hdr, &b.hdr, sizeof(a.hdr)) && a.offset == b.offset);
		FUZZ_ASSERT(a.payload && b.payload);
		FUZZ_ASSERT(!memcmp(a.payload, b.payload, a.hdr.payload_len));
		FUZZ_ASSERT(a.offset + sizeof(a.hdr) + a.stored_len <= size);
		FUZZ_ASSERT(a.stored_len == a.hdr.payload_len ||
			    (a.hdr.type == GRT_REC_CUDA_LAUNCH && a.stored_len < a.hdr.payload_len));
		grt_event_printer_print(text.printer, &a, grt_reader_strings(rm));
		FUZZ_ASSERT(event_csv_write(csv.csv, &a, grt_reader_strings(rm)) == 0);
		if (records < MAX_TYPES_SEEN)
			types[records] = a.hdr.type;
		grt_event_printer_print(json.printer, &b, grt_reader_strings(rf));
		records++;
	}
	if (sm == GRT_READ_ERROR) {
		FUZZ_ASSERT(!strcmp(grt_reader_error(rm), grt_reader_error(rf)));
		FUZZ_ASSERT(strstr(grt_reader_error(rm), "offset "));
	}
	FUZZ_ASSERT(grt_reader_trailer(rm, &tm) == grt_reader_trailer(rf, &tf));
	sink_close(&text);
	sink_close(&csv);
	sink_close(&json);
	check_lines(&text, records, 0, false);
	if (records <= MAX_TYPES_SEEN)
		check_lines(&csv, records, count_types(types, records), false);
	check_lines(&json, records, 0, true);
	free(text.text);
	free(csv.text);
	free(json.text);
	grt_reader_close(rm);
	grt_reader_close(rf);
	close(fd);
	return 0;
}
