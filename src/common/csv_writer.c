/* CSV cells and rows: the quoting rules of RFC 4180, "\n" row ends. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/csv_writer.h"

void csv_init(struct csv_writer *w, FILE *out)
{
	w->out = out;
	w->row_started = false;
}

static void separate(struct csv_writer *w)
{
	if (w->row_started)
		fputc(',', w->out);
	w->row_started = true;
}

void csv_string(struct csv_writer *w, const char *s)
{
	separate(w);
	if (!s)
		return;
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, w->out);
		return;
	}
	fputc('"', w->out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', w->out);
		fputc(*s, w->out);
	}
	fputc('"', w->out);
}

void csv_raw(struct csv_writer *w, const char *s)
{
	separate(w);
	fputs(s, w->out);
}

void csv_u64(struct csv_writer *w, uint64_t v)
{
	separate(w);
	fprintf(w->out, "%" PRIu64, v);
}

void csv_i64(struct csv_writer *w, int64_t v)
{
	separate(w);
	fprintf(w->out, "%" PRId64, v);
}

void csv_format_f64(char *buf, size_t len, double v)
{
	/* the shorter of the two precisions that reads back as the same double */
	if (!isfinite(v)) {
		buf[0] = 0;
		return;
	}
	snprintf(buf, len, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, len, "%.17g", v);
}

void csv_f64(struct csv_writer *w, double v)
{
	separate(w);
	char text[32];

	csv_format_f64(text, sizeof(text), v);
	fputs(text, w->out);
}

void csv_empty(struct csv_writer *w)
{
	separate(w);
}

void csv_end_row(struct csv_writer *w)
{
	fputc('\n', w->out);
	w->row_started = false;
}
