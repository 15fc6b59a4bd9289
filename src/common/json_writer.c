/* Streaming JSON writer. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include "common/async_output.h"
#include "common/json_writer.h"

/*
 * Output goes either straight to the FILE (unlocked: one writer has one
 * thread) or, for buffered writers, into the caller's buffer first, which
 * makes writing gigabytes of small pieces several times cheaper. Buffered
 * writers format numbers and plain strings in place in the buffer.
 */
static void out_flush(struct json_writer *w)
{
	if (!w->buf || !w->buf_len)
		return;
	if (w->async) {
		char *full = w->buf;

		/* the thread takes this buffer; the other one is free once the call returns */
		async_output_write(w->async, full, w->buf_len);
		w->buf = w->spare;
		w->spare = full;
		w->buf_len = 0;
		return;
	}
	fwrite_unlocked(w->buf, 1, w->buf_len, w->out);
	w->buf_len = 0;
}

/*
 * Room for n more bytes at the end of the buffer, flushing it when full; NULL
 * for a direct writer (cap 0) or a piece larger than the whole buffer.
 */
static inline char *room(struct json_writer *w, size_t n)
{
	if (w->buf_cap - w->buf_len < n) {
		if (n > w->buf_cap)
			return NULL;
		out_flush(w);
	}
	return w->buf ? w->buf + w->buf_len : NULL;
}

static inline void out_char(struct json_writer *w, char c)
{
	char *d = room(w, 1);

	if (d) {
		*d = c;
		w->buf_len++;
	} else {
		putc_unlocked(c, w->out);
	}
}

/* memcpy for the short pieces JSON is made of, without a call for each */
static inline void copy_bytes(char *d, const char *s, size_t n)
{
	uint64_t a8, b8;
	uint32_t a4, b4;

	if (n > 16) {
		memcpy(d, s, n);
	} else if (n >= 8) {
		memcpy(&a8, s, 8);
		memcpy(&b8, s + n - 8, 8);
		memcpy(d, &a8, 8);
		memcpy(d + n - 8, &b8, 8);
	} else if (n >= 4) {
		memcpy(&a4, s, 4);
		memcpy(&b4, s + n - 4, 4);
		memcpy(d, &a4, 4);
		memcpy(d + n - 4, &b4, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

static void out_bytes(struct json_writer *w, const char *p, size_t n)
{
	char *d = room(w, n);

	if (d) {
		copy_bytes(d, p, n);
		w->buf_len += n;
		return;
	}
	out_flush(w);
	if (n > 16)
		fwrite_unlocked(p, 1, n, w->out);
	else
		while (n--)
			putc_unlocked(*p++, w->out);
}

static void out_text(struct json_writer *w, const char *s)
{
	out_bytes(w, s, strlen(s));
}

/* "00".."99": numbers go out two digits per division */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline unsigned u32_len(uint32_t v)
{
	unsigned n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* The decimal digits of v at d (room for 10); returns how many. */
static inline size_t put_u32(char *d, uint32_t v)
{
	size_t n = u32_len(v);
	char *p = d + n;

	while (v >= 100) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return n;
}

/* Exactly 8 digits of v < 10^8: four independent pairs, no long chain of divisions. */
static inline void put_8_digits(char *d, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;

	memcpy(d, digit_pairs + 2 * (hi / 100), 2);
	memcpy(d + 2, digit_pairs + 2 * (hi % 100), 2);
	memcpy(d + 4, digit_pairs + 2 * (lo / 100), 2);
	memcpy(d + 6, digit_pairs + 2 * (lo % 100), 2);
}

/*
 * The decimal digits of v at d (room for 20); returns how many. Nanosecond
 * timestamps have 10 to 19 digits: they go in groups of 8 with 32-bit math.
 */
static inline size_t put_u64(char *d, uint64_t v)
{
	size_t n;

	if (v < 100000000)
		return put_u32(d, (uint32_t)v);
	if (v < 10000000000000000ull) {
		n = put_u32(d, (uint32_t)(v / 100000000));
		put_8_digits(d + n, (uint32_t)(v % 100000000));
		return n + 8;
	}
	n = put_u32(d, (uint32_t)(v / 10000000000000000ull));
	put_8_digits(d + n, (uint32_t)(v / 100000000 % 100000000));
	put_8_digits(d + n + 8, (uint32_t)(v % 100000000));
	return n + 16;
}

static void out_u64(struct json_writer *w, uint64_t v)
{
	char tmp[24], *d = room(w, 20);
	size_t n = put_u64(d ? d : tmp, v);

	if (d)
		w->buf_len += n;
	else
		out_bytes(w, tmp, n);
}

/*
 * Bytes a plain run stops at: characters a JSON string cannot hold as they
 * are, NUL (the end), and non-ASCII bytes, whose UTF-8 is checked.
 */
static const bool needs_escape[256] = {
	[0 ... 0x1f] = true, ['"'] = true, ['\\'] = true, [0x7f ... 0xff] = true,
};

#define BYTES(c) (0x0101010101010101ull * (c))
/* Whether any byte of x is 0 (exact as a whole, though not per byte). */
#define HAS_ZERO(x) (((x) - BYTES(1)) & ~(x) & BYTES(0x80))

/*
 * Length of the prefix of s[0..n) that needs no escaping, 8 bytes at a time:
 * kernel names run to hundreds of bytes and almost never need an escape.
 */
static inline bool bytes_plain(uint64_t x)
{
	/* >= 0x80, < 0x20, '"', '\\', 0x7f */
	return !((x & BYTES(0x80)) | ((x - BYTES(0x20)) & ~x & BYTES(0x80)) |
		 HAS_ZERO(x ^ BYTES('"')) | HAS_ZERO(x ^ BYTES('\\')) | HAS_ZERO(x ^ BYTES(0x7f)));
}

static inline bool word_plain(const char *s)
{
	uint64_t x;

	memcpy(&x, s, 8);
	return bytes_plain(x);
}

/*
 * Whether all of s[0..n), n < 8, needs no escaping, in one check: keys are
 * short and a byte loop mispredicts its end. The bytes that do not exist
 * are filled with a plain one; overlapping loads cover lengths 4 to 7.
 */
static inline bool short_plain(const char *s, size_t n)
{
	uint32_t a, b;

	if (n >= 4) {
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		return bytes_plain(a | (uint64_t)b << 32);
	}
	if (!n)
		return true;
	return bytes_plain((unsigned char)s[0] | (unsigned char)s[n / 2] << 8 |
			   (uint64_t)(unsigned char)s[n - 1] << 16 | BYTES('a') << 24);
}

static size_t plain_len(const char *s, size_t n)
{
	size_t i = 0;

	if (n >= 8) {
		while (i + 8 <= n && word_plain(s + i))
			i += 8;
		if (i == n || (i + 8 > n && word_plain(s + n - 8)))
			return n; /* the last word overlaps the one before */
	}
	while (i < n && !needs_escape[(unsigned char)s[i]])
		i++;
	return i;
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

/* The string's body from its first byte that needs escaping (p is NUL-terminated). */
static void out_escaped_tail(struct json_writer *w, const unsigned char *p)
{
	static const char hex[] = "0123456789abcdef";
	char u[6] = { '\\', 'u', '0', '0' };

	while (*p) {
		const unsigned char *run = p;
		int seq;

		/* plain runs go out whole: names are long, escapes are rare */
		while (!needs_escape[*p])
			p++;
		if (p > run)
			out_bytes(w, (const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		switch (*p) {
		case '"':
			out_bytes(w, "\\\"", 2);
			break;
		case '\\':
			out_bytes(w, "\\\\", 2);
			break;
		case '\n':
			out_bytes(w, "\\n", 2);
			break;
		case '\t':
			out_bytes(w, "\\t", 2);
			break;
		case '\r':
			out_bytes(w, "\\r", 2);
			break;
		case 0x7f:
			out_bytes(w, "\\u007f", 6);
			break;
		default:
			if (*p < 0x20) {
				u[4] = hex[*p >> 4];
				u[5] = hex[*p & 15];
				out_bytes(w, u, sizeof(u));
			} else if ((seq = utf8_sequence_len(p))) {
				out_bytes(w, (const char *)p, (size_t)seq);
				p += seq - 1;
			} else {
				out_bytes(w, "\\ufffd", 6); /* JSON text is UTF-8: a stray byte becomes U+FFFD */
			}
		}
		p++;
	}
}

/* A string with something to escape, or one that does not fit the buffer. */
static __attribute__((noinline)) void out_string_slow(struct json_writer *w, const char *s,
						      size_t n, char suffix)
{
	size_t plain = plain_len(s, n);

	out_char(w, '"');
	out_bytes(w, s, plain);
	out_escaped_tail(w, (const unsigned char *)s + plain);
	out_char(w, '"');
	if (suffix)
		out_char(w, suffix);
}

/*
 * s (n bytes, NUL-terminated) as a string literal, then suffix (0 or 1 byte:
 * the ':' after a key). The common case, nothing to escape, is one check
 * and one copy, inline.
 */
static inline void out_string(struct json_writer *w, const char *s, size_t n, char suffix)
{
	bool plain = n < 8 ? short_plain(s, n) : plain_len(s, n) == n;
	char *d = plain ? room(w, n + 3) : NULL;

	if (!d) {
		out_string_slow(w, s, n, suffix);
		return;
	}
	d[0] = '"';
	copy_bytes(d + 1, s, n);
	d[n + 1] = '"';
	d[n + 2] = suffix; /* a byte past the string when there is no suffix: room allowed it */
	w->buf_len += n + 2 + (suffix != 0);
}

int jw_begin_async(struct json_writer *w, size_t cap)
{
	char *bufs[2];

	if (w->async || !cap)
		return -EINVAL;
	bufs[0] = malloc(cap);
	bufs[1] = malloc(cap);
	if (!bufs[0] || !bufs[1]) {
		free(bufs[0]);
		free(bufs[1]);
		return -ENOMEM;
	}
	out_flush(w);
	w->async = async_output_start(w->out);
	if (!w->async) {
		free(bufs[0]);
		free(bufs[1]);
		return -ENOMEM;
	}
	w->buf = bufs[0];
	w->spare = bufs[1];
	w->buf_cap = cap;
	w->buf_len = 0;
	return 0;
}

int jw_end_async(struct json_writer *w)
{
	int err;

	if (!w->async)
		return 0;
	out_flush(w);
	err = async_output_finish(w->async);
	free(w->buf);
	free(w->spare);
	w->async = NULL;
	w->buf = NULL;
	w->spare = NULL;
	w->buf_cap = 0;
	w->buf_len = 0;
	return err;
}

void jw_init(struct json_writer *w, FILE *out)
{
	*w = (struct json_writer){ .out = out };
}

void jw_init_buffered(struct json_writer *w, FILE *out, char *buf, size_t cap)
{
	*w = (struct json_writer){ .out = out, .buf = cap ? buf : NULL, .buf_cap = buf ? cap : 0 };
}

void jw_flush(struct json_writer *w)
{
	out_flush(w);
}

void jw_raw(struct json_writer *w, const char *s)
{
	out_text(w, s);
}

/* Emits the comma an item needs unless it follows a key. */
static inline void before_item(struct json_writer *w)
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

	out_string(&direct, s, strlen(s), 0);
}

void jw_key_len(struct json_writer *w, const char *key, size_t key_len)
{
	before_item(w);
	out_string(w, key, key_len, ':');
	w->after_key = true;
}

void jw_string(struct json_writer *w, const char *s)
{
	before_item(w);
	if (s)
		out_string(w, s, strlen(s), 0);
	else
		out_bytes(w, "null", 4);
}

void jw_u64(struct json_writer *w, uint64_t v)
{
	before_item(w);
	out_u64(w, v);
}

/* The key and the number in one piece: rows of millions of jobs are mostly these. */
void jw_field_u64_len(struct json_writer *w, const char *key, size_t key_len, uint64_t v)
{
	bool plain = key_len < 8 ? short_plain(key, key_len) : plain_len(key, key_len) == key_len;
	char *d;

	before_item(w);
	d = plain ? room(w, key_len + 3 + 20) : NULL;
	if (!d) {
		out_string_slow(w, key, key_len, ':');
		out_u64(w, v);
		return;
	}
	d[0] = '"';
	copy_bytes(d + 1, key, key_len);
	d[key_len + 1] = '"';
	d[key_len + 2] = ':';
	w->buf_len += key_len + 3 + put_u64(d + key_len + 3, v);
}

/* v / 10^decimals with that many decimals at d (room for 41); trim drops trailing zeros. */
static inline size_t put_fixed(char *d, uint64_t v, unsigned decimals, bool trim)
{
	uint64_t scale = 1, frac;
	size_t n;

	if (decimals > 19)
		decimals = 19;
	for (unsigned i = 0; i < decimals; i++)
		scale *= 10;
	n = put_u64(d, v / scale);
	frac = v % scale;
	if (!decimals || (trim && !frac))
		return n;
	d[n++] = '.';
	for (unsigned i = decimals; i-- > 0;) {
		d[n + i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	n += decimals;
	while (trim && d[n - 1] == '0')
		n--;
	return n;
}

static void out_fixed(struct json_writer *w, uint64_t v, unsigned decimals, bool trim)
{
	char tmp[48], *d;
	size_t n;

	before_item(w);
	d = room(w, 41);
	/* microseconds from nanoseconds, the common case, divide by a constant */
	if (decimals == 3)
		n = put_fixed(d ? d : tmp, v, 3, trim);
	else
		n = put_fixed(d ? d : tmp, v, decimals, trim);
	if (d)
		w->buf_len += n;
	else
		out_bytes(w, tmp, n);
}

void jw_fixed(struct json_writer *w, uint64_t v, unsigned decimals)
{
	out_fixed(w, v, decimals, false);
}

void jw_decimal(struct json_writer *w, uint64_t v, unsigned decimals)
{
	out_fixed(w, v, decimals, true);
}

void jw_i64(struct json_writer *w, int64_t v)
{
	char tmp[24];
	size_t n = 0;

	before_item(w);
	if (v < 0)
		tmp[n++] = '-';
	/* the magnitude of INT64_MIN does not fit an int64_t */
	n += put_u64(tmp + n, v < 0 ? -(uint64_t)v : (uint64_t)v);
	out_bytes(w, tmp, n);
}

void jw_f64(struct json_writer *w, double v)
{
	char buf[32];

	before_item(w);
	if (isfinite(v)) {
		snprintf(buf, sizeof(buf), "%.6g", v);
		out_text(w, buf);
	} else {
		out_bytes(w, "null", 4);
	}
}

void jw_bool(struct json_writer *w, bool v)
{
	before_item(w);
	if (v)
		out_bytes(w, "true", 4);
	else
		out_bytes(w, "false", 5);
}

void jw_null(struct json_writer *w)
{
	before_item(w);
	out_bytes(w, "null", 4);
}

void jw_newline(struct json_writer *w)
{
	out_char(w, '\n');
	w->depth = 0;
	w->has_items[0] = false;
	w->after_key = false;
}
