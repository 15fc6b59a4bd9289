/* The one JSON writer every command uses: commas, nesting and string escaping handled here. */
#ifndef GRT_JSON_WRITER_H
#define GRT_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *out;
	int depth;
	bool has_items[JSON_MAX_DEPTH];	/* per nesting level: a comma is due before the next item */
	bool after_key;
	char *buf;		/* jw_init_buffered: output collects here, goes to out when full */
	size_t buf_len;
	size_t buf_cap;
};

void jw_init(struct json_writer *w, FILE *out);
/*
 * A writer that collects its output in buf (cap bytes, owned by the caller)
 * and hands it to out in large writes: for outputs of gigabytes. Call
 * jw_flush() before writing to out any other way, and at the end.
 */
void jw_init_buffered(struct json_writer *w, FILE *out, char *buf, size_t cap);
void jw_flush(struct json_writer *w);
/* Switches a writer to buf (NULL: straight to its FILE), flushing what it held. */
void jw_set_buffer(struct json_writer *w, char *buf, size_t cap);
/* Raw text between values (a newline between events): no comma, no escaping. */
void jw_raw(struct json_writer *w, const char *s);
void jw_begin_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_begin_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
void jw_key(struct json_writer *w, const char *key);
void jw_string(struct json_writer *w, const char *s);	/* NULL writes null */
void jw_u64(struct json_writer *w, uint64_t v);
void jw_i64(struct json_writer *w, int64_t v);
void jw_f64(struct json_writer *w, double v);		/* non-finite writes null */
/* v / 10^decimals with exactly that many decimals, no rounding: 1234567, 3 -> 1234.567 */
void jw_fixed(struct json_writer *w, uint64_t v, unsigned decimals);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);
/* A key and its value in one call, for the many flat objects of the reports. */
static inline void jw_field_u64(struct json_writer *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	jw_u64(w, v);
}
static inline void jw_field_string(struct json_writer *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_string(w, s);	/* NULL writes null */
}
/* Ends a top-level value with a newline (JSON Lines). */
void jw_newline(struct json_writer *w);

/* Writes s as a JSON string literal (quotes included) to out. */
void json_write_escaped(FILE *out, const char *s);

#endif
