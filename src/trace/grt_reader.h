/* Reading and validating a .grt file record by record; never reads out of bounds. */
#ifndef GRT_READER_H
#define GRT_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "grt_format.h"
#include "grt_strings.h"
#include "records_core.h"

struct grt_reader;

/* One record as read: header, payload (valid until the next call), its file offset. */
struct grt_record {
	struct grt_record_header hdr;
	const void *payload;
	uint64_t offset;
	/*
	 * Payload bytes in the file after the header: hdr.payload_len, but for
	 * a launch read from a repeat record (format 2.0), handed out expanded.
	 */
	uint32_t stored_len;
};

enum grt_read_status {
	GRT_READ_OK = 1,
	GRT_READ_END = 0,	/* clean end of file at a record boundary */
	GRT_READ_ERROR = -1,	/* see grt_reader_error() */
};

/* Opens and validates the header. Returns NULL and fills err (one line, names the offset). */
struct grt_reader *grt_reader_open(const char *path, char *err, size_t err_len);
/* Same over an in-memory image (fuzzing, tests); buf must outlive the reader. */
struct grt_reader *grt_reader_open_memory(const void *buf, size_t len, char *err, size_t err_len);
void grt_reader_close(struct grt_reader *r);

const struct grt_file_header *grt_reader_header(const struct grt_reader *r);

/*
 * Reads the next record. String records are also added to the reader's
 * string table before they are returned. Records of known types whose payload
 * is shorter than their type's minimum are errors.
 */
enum grt_read_status grt_reader_next(struct grt_reader *r, struct grt_record *rec);

/* After GRT_READ_ERROR: a one-line description naming the byte offset. */
const char *grt_reader_error(const struct grt_reader *r);

const struct grt_strings *grt_reader_strings(const struct grt_reader *r);
/* Shorthand for grt_strings_get(grt_reader_strings(r), id). */
const char *grt_reader_string(const struct grt_reader *r, uint32_t id);

/*
 * Integrity (format 1.2 checksum records, the trailer's CRC and record
 * count): NULL while nothing is wrong, else the first problem found, one line
 * naming the byte range. Records are still handed out after a problem: the
 * caller shows them and reports the damage. Complete once GRT_READ_END was
 * returned. A file cut short (no trailer) is not damaged by that alone.
 */
const char *grt_reader_damage(const struct grt_reader *r);
/* Checksum blocks that matched; 0 for traces without integrity data (before format 1.2). */
uint64_t grt_reader_blocks_verified(const struct grt_reader *r);

/* Whether a trailer was read, and its content (valid once GRT_READ_END was returned). */
int grt_reader_trailer(const struct grt_reader *r, struct grt_trailer_rec *out);

#endif
