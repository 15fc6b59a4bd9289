/* parse --format csv: one table per record type, every field its own column. */
#ifndef GRT_EVENT_CSV_H
#define GRT_EVENT_CSV_H

#include <stdio.h>
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

struct event_csv;

/*
 * Rows go to out, or with dir (out NULL) to dir/TYPE.csv, a file per
 * record type, created when its first row comes. NULL: out of memory.
 */
struct event_csv *event_csv_new(FILE *out, const char *dir);
/*
 * First pass: learns the columns of the record's type (a field that only
 * some records of a type have still gets its column). Returns 0 or -ENOMEM.
 */
int event_csv_learn(struct event_csv *c, const struct grt_record *rec);
/*
 * Second pass: writes the record's row, its table's header first. Returns 0,
 * or a negative errno after printing nothing (the caller names the file:
 * event_csv_failed_path()).
 */
int event_csv_write(struct event_csv *c, const struct grt_record *rec,
		    const struct grt_strings *strings);
const char *event_csv_failed_path(const struct event_csv *c);
/* Closes the files; returns 0 or the first write error (negative errno). */
int event_csv_free(struct event_csv *c);

#endif
