/* Writing a .grt file: header, records with per-CPU sequence numbers, interned strings, trailer. */
#ifndef GRT_WRITER_H
#define GRT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "grt_format.h"

struct grt_writer;

/* Who emitted a record; ts_ns in the header's clock (CLOCK_MONOTONIC). */
struct grt_event_origin {
	uint64_t ts_ns;
	uint32_t cpu;
	uint32_t pid;
	uint32_t tid;
};

/*
 * Opens path for writing and writes the header. Returns NULL with errno set.
 * The header's magic, version, header_len are filled in here.
 */
struct grt_writer *grt_writer_open(const char *path, const struct grt_file_header *header);

/*
 * Checksum records are on by default. Off (before the first record) writes
 * the format 1.1 layout, records exactly as appended and a 32-byte trailer:
 * for tests that check byte offsets, and to make traces as older grtrace
 * versions wrote them.
 */
void grt_writer_set_checksums(struct grt_writer *w, bool on);

/* Appends one record. Returns 0 or a negative errno; after an error the writer refuses further records. */
int grt_writer_append(struct grt_writer *w, uint16_t type, const struct grt_event_origin *origin,
		      const void *payload, uint32_t payload_len);

/*
 * Returns the id of s, writing a string record the first time it is seen.
 * Returns 0 (no string) for NULL/empty strings or when writing failed.
 */
uint32_t grt_writer_intern(struct grt_writer *w, const char *s);

/* Records a loss of count events of a source (enum grt_source_id). */
int grt_writer_drop(struct grt_writer *w, uint32_t source, uint64_t count, uint64_t ts_ns);

/* Records written so far, drops counted so far, first write error (0 if none). */
uint64_t grt_writer_records(const struct grt_writer *w);
uint64_t grt_writer_drops(const struct grt_writer *w);
int grt_writer_error(const struct grt_writer *w);

/*
 * Writes the trailer (unless a write error happened), marks the header
 * finished or failed, and closes. Returns 0 or the first negative errno.
 */
int grt_writer_close(struct grt_writer *w, uint32_t end_reason, uint64_t end_ns);

#endif
