/* The one CSV writer (RFC 4180): quoting, separators and row ends handled here. */
#ifndef GRT_CSV_WRITER_H
#define GRT_CSV_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct csv_writer {
	FILE *out;
	bool row_started;	/* a comma is due before the next field */
};

void csv_init(struct csv_writer *w, FILE *out);
/* A text cell, quoted when it holds a comma, quote, CR or LF (quotes doubled); NULL is empty. */
void csv_string(struct csv_writer *w, const char *s);
/* A cell written as given, unquoted: numbers already formatted, e.g. from JSON. */
void csv_raw(struct csv_writer *w, const char *s);
void csv_u64(struct csv_writer *w, uint64_t v);
void csv_i64(struct csv_writer *w, int64_t v);
/* Shortest text that reads back as v; non-finite values are an empty cell. */
void csv_f64(struct csv_writer *w, double v);
void csv_empty(struct csv_writer *w);
/* The text csv_f64 writes: the shorter of %.15g and %.17g that reads back as v. */
void csv_format_f64(char *buf, size_t len, double v);
/* Ends the row with CRLF-free "\n", as every other grtrace output. */
void csv_end_row(struct csv_writer *w);

#endif
