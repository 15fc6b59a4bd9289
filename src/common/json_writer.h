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
};

void jw_init(struct json_writer *w, FILE *out);
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
/* Ends a top-level value with a newline (JSON Lines). */
void jw_newline(struct json_writer *w);

/* Writes s as a JSON string literal (quotes included) to out. */
void json_write_escaped(FILE *out, const char *s);

#endif
