/* Streaming JSON writer. */
#include <math.h>
#include <stdbool.h>
#include <inttypes.h>
#include "common/json_writer.h"

/*
 * One writer has one FILE and one thread: the unlocked stdio calls skip a
 * lock per character, which is most of the cost of large outputs (exports).
 */
#define put_char(c, f) putc_unlocked((c), (f))

/* Decimal digits of v into the end of buf; returns where they start. */
static char *u64_digits(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/* Short pieces go out by character: cheaper than fwrite's bookkeeping per call. */
static void put_bytes(FILE *out, const char *p, size_t n)
{
	if (n > 16) {
		fwrite_unlocked(p, 1, n, out);
		return;
	}
	while (n--)
		put_char(*p++, out);
}

static void put_u64(FILE *out, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *p = u64_digits(v, end);

	put_bytes(out, p, (size_t)(end - p));
}

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
		put_char(',', w->out);
	w->has_items[w->depth] = true;
}

static void open_level(struct json_writer *w, char c)
{
	before_item(w);
	put_char(c, w->out);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->depth++;
	w->has_items[w->depth] = false;
}

static void close_level(struct json_writer *w, char c)
{
	put_char(c, w->out);
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

/* Characters a JSON string cannot hold as they are; NUL too, so scans stop at the end. */
static const bool needs_escape[256] = {
	[0 ... 0x1f] = true, ['"'] = true, ['\\'] = true, [0x7f] = true,
};

void json_write_escaped(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	put_char('"', out);
	while (*p) {
		const unsigned char *run = p;

		/* plain runs go out in one call: names are long, escapes are rare */
		while (!needs_escape[*p])
			p++;
		if (p > run)
			put_bytes(out, (const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		switch (*p) {
		case '"':
			fputs_unlocked("\\\"", out);
			break;
		case '\\':
			fputs_unlocked("\\\\", out);
			break;
		case '\n':
			fputs_unlocked("\\n", out);
			break;
		case '\t':
			fputs_unlocked("\\t", out);
			break;
		case '\r':
			fputs_unlocked("\\r", out);
			break;
		default:
			fprintf(out, "\\u%04x", *p);
		}
		p++;
	}
	put_char('"', out);
}

void jw_key(struct json_writer *w, const char *key)
{
	before_item(w);
	json_write_escaped(w->out, key);
	put_char(':', w->out);
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
	put_u64(w->out, v);
}

void jw_fixed(struct json_writer *w, uint64_t v, unsigned decimals)
{
	uint64_t scale = 1;
	char buf[24], *end = buf + sizeof(buf), *p;

	for (unsigned i = 0; i < decimals && i < 19; i++)
		scale *= 10;
	before_item(w);
	put_u64(w->out, v / scale);
	if (!decimals)
		return;
	p = u64_digits(v % scale + scale, end); /* leading 1 keeps the zeros */
	p[0] = '.';
	put_bytes(w->out, p, (size_t)(end - p));
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
