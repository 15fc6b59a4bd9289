/* Per-job rows (CSV, JSON): spilled to a temporary file as jobs finish, printed at the end. */
#ifndef GRT_JOB_ROWS_H
#define GRT_JOB_ROWS_H

#include <stdint.h>
#include <stdio.h>
#include "analysis/jobs/job.h"
#include "common/json_writer.h"

/*
 * Rows go to an unlinked temporary file, not memory, so a report's memory
 * stays bounded by the open jobs however many rows the trace has. The
 * name pointers in the spilled jobs stay valid as long as the job builder.
 */
/* What a spilled row is packed relative to: the row before it. */
struct job_row_codec {
	uint64_t id;
	uint64_t api_enter;
	uint64_t stream;
	uintptr_t name;
};

struct job_rows {
	FILE *spill;
	char *spill_buf;	/* the spill's stdio buffer */
	struct job_row_codec codec;
	uint64_t count;
	int error;		/* first write error, negative errno */
};

int job_rows_open(struct job_rows *r);
void job_rows_close(struct job_rows *r);
void job_rows_add(struct job_rows *r, const struct job *j);

void job_json_row(struct json_writer *w, const struct job *j);

/*
 * Calls row() for every spilled job, in the order they were added, each equal
 * to the one added. Returns 0 or a negative errno.
 */
int job_rows_each(struct job_rows *r, void (*row)(void *ctx, const struct job *j), void *ctx);
/* Every spilled row, in the order the jobs finished. Returns 0 or a negative errno. */
int job_rows_print_json(struct job_rows *r, struct json_writer *w);

#endif
