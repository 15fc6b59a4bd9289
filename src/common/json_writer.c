/* Streaming JSON writer. */
#include <math.h>
#include <stdbool.h>
#include <inttypes.h>
#include <string.h>
#include "common/json_writer.h"

/*
 * Output goes either straight to the FILE (unlocked: one writer has one
 * thread) or, for buffered writers, into the caller's buffer first, which
 * makes writing gigabytes of small pieces several times cheaper.
 */
static void out_flush(struct json_writer *w)
{
	if (w->buf && w->buf_len) {
		fwrite_unlocked(w->buf, 1, w->buf_len, w->out);
		w->buf_len = 0;
	}
}

static inline void out_char(struct json_writer *w, char c)
{
	if (!w->buf) {
		putc_unlocked(c, w->out);
		return;
	}
	if (w->buf_len == w->buf_cap)
		out_flush(w);
	w->buf[w->buf_len++] = c;
}

static void out_bytes(struct json_writer *w, const char *p, size_t n)
{
	if (!w->buf) {
		if (n > 16)
			fwrite_unlocked(p, 1, n, w->out);
		else
			while (n--)
				putc_unlocked(*p++, w->out);
		return;
	}
	if (w->buf_len + n > w->buf_cap) {
		out_flush(w);
		if (n > w->buf_cap) {
			fwrite_unlocked(p, 1, n, w->out);
			return;
		}
	}
	memcpy(w->buf + w->buf_len, p, n);
	w->buf_len += n;
}

static void out_text(struct json_writer *w, const char *s)
{
	out_bytes(w, s, strlen(s));
}

/* Decimal digits of v into the end of buf; returns where they start. */
static char *u64_digits(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static void out_u64(struct json_writer *w, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *p = u64_digits(v, end);

	out_bytes(w, p, (size_t)(end - p));
}

/*
 * Bytes a plain run stops at: characters a JSON string cannot hold as they
 * are, NUL (the end), and non-ASCII bytes, whose UTF-8 is checked.
 */
static const bool needs_escape[256] = {
	[0 ... 0x1f] = true, ['"'] = true, ['\\'] = true, [0x7f ... 0xff] = true,
};

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

static void out_escaped(struct json_writer *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char hex[8];

	out_char(w, '"');
	while (*p) {
		const unsigned char *run = p;

		/* plain runs go out whole: names are long, escapes are rare */
		while (!needs_escape[*p])
			p++;
		if (p > run)
			out_bytes(w, (const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		switch (*p) {
		case '"':
			out_text(w, "\\\"");
			break;
		case '\\':
			out_text(w, "\\\\");
			break;
		case '\n':
			out_text(w, "\\n");
			break;
		case '\t':
			out_text(w, "\\t");
			break;
		case '\r':
			out_text(w, "\\r");
			break;
		case 0x7f:
			out_text(w, "\\u007f");
			break;
		default:
			if (*p < 0x20) {
				snprintf(hex, sizeof(hex), "\\u%04x", *p);
				out_text(w, hex);
			} else if (utf8_sequence_len(p)) {
				out_bytes(w, (const char *)p, (size_t)utf8_sequence_len(p));
				p += utf8_sequence_len(p) - 1;
			} else {
				out_text(w, "\\ufffd"); /* JSON text is UTF-8: a stray byte becomes U+FFFD */
			}
		}
		p++;
	}
	out_char(w, '"');
}

void jw_init(struct json_writer *w, FILE *out)
{
	*w = (struct json_writer){ .out = out };
}

void jw_init_buffered(struct json_writer *w, FILE *out, char *buf, size_t cap)
{
	*w = (struct json_writer){ .out = out, .buf = cap ? buf : NULL, .buf_cap = cap };
}

void jw_flush(struct json_writer *w)
{
	out_flush(w);
}

void jw_set_buffer(struct json_writer *w, char *buf, size_t cap)
{
	out_flush(w);
	w->buf = cap ? buf : NULL;
	w->buf_cap = cap;
	w->buf_len = 0;
}

void jw_raw(struct json_writer *w, const char *s)
{
	out_text(w, s);
}

/* Emits the comma an item needs unless it follows a key. */
static void before_item(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->has_items[w->depth])
		out_char(w, ',');
	w->has_items[w->depth] = true;
}

static void open_level(struct json_writer *w, char c)
{
	before_item(w);
	out_char(w, c);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->depth++;
	w->has_items[w->depth] = false;
}

static void close_level(struct json_writer *w, char c)
{
	out_char(w, c);
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

void json_write_escaped(FILE *out, const char *s)
{
	struct json_writer direct = { .out = out };

	out_escaped(&direct, s);
}

void jw_key(struct json_writer *w, const char *key)
{
	before_item(w);
	out_escaped(w, key);
	out_char(w, ':');
	w->after_key = true;
}

void jw_string(struct json_writer *w, const char *s)
{
	before_item(w);
	if (s)
		out_escaped(w, s);
	else
		out_text(w, "null");
}

void jw_u64(struct json_writer *w, uint64_t v)
{
	before_item(w);
	out_u64(w, v);
}

void jw_fixed(struct json_writer *w, uint64_t v, unsigned decimals)
{
	uint64_t scale = 1;
	char buf[24], *end = buf + sizeof(buf), *p;

	for (unsigned i = 0; i < decimals && i < 19; i++)
		scale *= 10;
	before_item(w);
	out_u64(w, v / scale);
	if (!decimals)
		return;
	p = u64_digits(v % scale + scale, end); /* the leading 1 keeps the zeros */
	p[0] = '.';
	out_bytes(w, p, (size_t)(end - p));
}

void jw_i64(struct json_writer *w, int64_t v)
{
	char buf[24];

	before_item(w);
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	out_text(w, buf);
}

void jw_f64(struct json_writer *w, double v)
{
	char buf[32];

	before_item(w);
	if (isfinite(v)) {
		snprintf(buf, sizeof(buf), "%.6g", v);
		out_text(w, buf);
	} else {
		out_text(w, "null");
	}
}

void jw_bool(struct json_writer *w, bool v)
{
	before_item(w);
	out_text(w, v ? "true" : "false");
}

void jw_null(struct json_writer *w)
{
	before_item(w);
	out_text(w, "null");
}

void jw_newline(struct json_writer *w)
{
	out_char(w, '\n');
	w->depth = 0;
	w->has_items[0] = false;
	w->after_key = false;
}
