/* The one JSON writer every command uses: commas, nesting and string escaping handled here. */
#ifndef GRT_JSON_WRITER_H
#define GRT_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct async_output;

struct json_writer {
	FILE *out;
	int depth;
	bool has_items[JSON_MAX_DEPTH];	/* per nesting level: a comma is due before the next item */
	bool after_key;
	char *buf;		/* jw_init_buffered: output collects here, goes to out when full */
	size_t buf_len;
	size_t buf_cap;
	struct async_output *async; /* jw_begin_async: a thread writes full buffers */
	char *spare;		/* jw_begin_async: the buffer the thread has or had */
};

void jw_init(struct json_writer *w, FILE *out);
/*
 * A writer that collects its output in buf (cap bytes, owned by the caller)
 * and hands it to out in large writes: for outputs of gigabytes. Call
 * jw_flush() before writing to out any other way, and at the end.
 */
void jw_init_buffered(struct json_writer *w, FILE *out, char *buf, size_t cap);
void jw_flush(struct json_writer *w);
/*
 * For outputs of gigabytes into a slow sink: from here on the writer fills
 * one of two buffers of cap bytes (its own) while a thread hands the other
 * to out's file descriptor, so formatting and the kernel's copy overlap.
 * Without a descriptor (a memory stream) or a thread it buffers in one.
 * Nothing else may write to out until jw_end_async(), which writes the
 * rest, stops the thread, puts the writer back to writing straight to out
 * and returns 0 or the first write error (negative errno). Returns 0,
 * -EINVAL (already started, cap 0) or -ENOMEM; on error the writer stays
 * as it was.
 */
int jw_begin_async(struct json_writer *w, size_t cap);
int jw_end_async(struct json_writer *w);
/* Raw text between values (a newline between events): no comma, no escaping. */
void jw_raw(struct json_writer *w, const char *s);
void jw_begin_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_begin_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
/* key_len: strlen(key); jw_key() passes it, which the compiler folds for literal keys. */
void jw_key_len(struct json_writer *w, const char *key, size_t key_len);
static inline void jw_key(struct json_writer *w, const char *key)
{
	jw_key_len(w, key, __builtin_strlen(key));
}
void jw_string(struct json_writer *w, const char *s);	/* NULL writes null */
void jw_u64(struct json_writer *w, uint64_t v);
void jw_i64(struct json_writer *w, int64_t v);
void jw_f64(struct json_writer *w, double v);		/* non-finite writes null */
/* v / 10^decimals with exactly that many decimals, no rounding: 1234567, 3 -> 1234.567 */
void jw_fixed(struct json_writer *w, uint64_t v, unsigned decimals);
/* The same without trailing zeros (and without the point when nothing follows): 1230, 3 -> 1.23 */
void jw_decimal(struct json_writer *w, uint64_t v, unsigned decimals);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);
/* A key and its value in one call, for the many flat objects of the reports. */
void jw_field_u64_len(struct json_writer *w, const char *key, size_t key_len, uint64_t v);
static inline void jw_field_u64(struct json_writer *w, const char *key, uint64_t v)
{
	jw_field_u64_len(w, key, __builtin_strlen(key), v);
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
