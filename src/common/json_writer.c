/* Streaming JSON writer. */
#include <math.h>
#include <inttypes.h>
#include "common/json_writer.h"

void jw_init(struct json_writer *w, FILE *out)
{
	*w = (struct json_writer){ .out = out };
}

/* Emits the comma an item needs unless it follows a key. */
static void before_item(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->has_items[w->depth])
		fputc(',', w->out);
	w->has_items[w->depth] = true;
}

static void open_level(struct json_writer *w, char c)
{
	before_item(w);
	fputc(c, w->out);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->depth++;
	w->has_items[w->depth] = false;
}

static void close_level(struct json_writer *w, char c)
{
	fputc(c, w->out);
	if (w->depth > 0)
		w->depth--;
}

void jw_begin_object(struct json_writer *w)
{
	open_level(w, '{');
}

void jw_end_object(struct json_writer *w)
{
	close_level(w, '}');
}

void jw_begin_array(struct json_writer *w)
{
	open_level(w, '[');
}

void jw_end_array(struct json_writer *w)
{
	close_level(w, ']');
}

/*
 * Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 when p does not start one. A NUL
 * is no continuation byte, so this never looks past the string's end.
 */
static int utf8_sequence_len(const unsigned char *p)
{
	int len, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

void json_write_escaped(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	while (*p) {
		int len = utf8_sequence_len(p);

		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		default:
			if (!len) /* JSON text is UTF-8: a stray byte becomes U+FFFD */
				fputs("\\ufffd", out);
			else if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\u%04x", *p);
			else
				fwrite(p, 1, (size_t)len, out);
		}
		p += len ? len : 1;
	}
	fputc('"', out);
}

void jw_key(struct json_writer *w, const char *key)
{
	before_item(w);
	json_write_escaped(w->out, key);
	fputc(':', w->out);
	w->after_key = true;
}

void jw_string(struct json_writer *w, const char *s)
{
	before_item(w);
	if (s)
		json_write_escaped(w->out, s);
	else
		fputs("null", w->out);
}

void jw_u64(struct json_writer *w, uint64_t v)
{
	before_item(w);
	fprintf(w->out, "%" PRIu64, v);
}

void jw_i64(struct json_writer *w, int64_t v)
{
	before_item(w);
	fprintf(w->out, "%" PRId64, v);
}

void jw_f64(struct json_writer *w, double v)
{
	before_item(w);
	if (isfinite(v))
		fprintf(w->out, "%.6g", v);
	else
		fputs("null", w->out);
}

void jw_bool(struct json_writer *w, bool v)
{
	before_item(w);
	fputs(v ? "true" : "false", w->out);
}

void jw_null(struct json_writer *w)
{
	before_item(w);
	fputs("null", w->out);
}

void jw_newline(struct json_writer *w)
{
	fputc('\n', w->out);
	w->depth = 0;
	w->has_items[0] = false;
	w->after_key = false;
}
