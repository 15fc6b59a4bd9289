/* The report's opening block: where and what was recorded, how long, and whether the trace is whole. */
#ifndef GRT_REPORT_HEADER_H
#define GRT_REPORT_HEADER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/json_writer.h"
#include "trace/grt_format.h"
#include "trace/grt_reader.h"

struct report_header {
	const char *path;
	const struct grt_file_header *file;
	uint64_t records;	/* records read, trailer included */
	uint64_t last_ts_ns;	/* latest record timestamp */
	bool have_trailer;
	struct grt_trailer_rec trailer;
	/* per source: whether a status record was seen, its status and message */
	bool status_seen[GRT_SRC_MAX];
	int32_t status[GRT_SRC_MAX];
	char *status_message[GRT_SRC_MAX];
	const char *read_error;	/* the reader's error when reading stopped early, else NULL */
	const char *damage;	/* the reader's integrity finding (grt_reader_damage), else NULL */
	uint64_t blocks_verified; /* checksum blocks that matched; 0: no integrity data */
	/* the cuda source's --launch-returns, when the trace has its settings record */
	bool have_cuda_config;
	uint32_t launch_return_every;
	/* records of grtrace's own work in the target (own_work.h), and whether --own shows them */
	uint64_t own_records;
	bool own_shown;
};

void report_header_init(struct report_header *h, const char *path, const struct grt_file_header *file);
void report_header_destroy(struct report_header *h);
void report_header_on_record(struct report_header *h, const struct grt_record *rec,
			     const struct grt_strings *strings);
/* Whether the trace was read to a trailer without error. */
bool report_header_complete(const struct report_header *h);
void report_header_print_text(const struct report_header *h, FILE *out);
/* Writes the value of the "trace" key. */
void report_header_print_json(const struct report_header *h, struct json_writer *w);

#endif
