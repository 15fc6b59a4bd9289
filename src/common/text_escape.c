/* Escaping text that came from a traced program before it reaches a terminal or a one-line format. */
#include <string.h>
#include "common/text_escape.h"

/* Length of the valid, printable UTF-8 sequence at p (2..4 bytes), 0 when it is not one. */
static size_t printable_utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned cp;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond Unicode, and C1 controls (CSI is U+009B) */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
		return 0;
	return n;
}

/*
 * The escape for the byte at p into esc (5 bytes), or NULL when the byte
 * stays; *keep says how many bytes a kept character spans.
 */
static const char *escape_of(const unsigned char *p, bool quoted, char esc[5], size_t *keep)
{
	static const char hex[] = "0123456789abcdef";

	*keep = 1;
	switch (*p) {
	case '\n': return "\\n";
	case '\t': return "\\t";
	case '\r': return "\\r";
	case '\\': return "\\\\";
	case '"': if (quoted) return "\\\""; return NULL;
	}
	if (*p >= 0x20 && *p < 0x7f)
		return NULL;
	if (*p >= 0x80 && (*keep = printable_utf8_len(p)))
		return NULL;
	*keep = 1;
	esc[0] = '\\';
	esc[1] = 'x';
	esc[2] = hex[*p >> 4];
	esc[3] = hex[*p & 15];
	esc[4] = 0;
	return esc;
}

bool text_needs_escape(const char *s, bool quoted)
{
	char esc[5];
	size_t keep;

	for (const unsigned char *p = (const unsigned char *)s; *p; p += keep)
		if (escape_of(p, quoted, esc, &keep))
			return true;
	return false;
}

void text_escape_write(FILE *out, const char *s, bool quoted)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[5];
	size_t keep;

	while (*p) {
		const unsigned char *run = p;
		const char *e = NULL;

		/* plain runs go out whole: names are long, escapes rare */
		while (*p && !(e = escape_of(p, quoted, esc, &keep)))
			p += keep;
		if (p > run)
			fwrite(run, 1, (size_t)(p - run), out);
		if (e) {
			fputs(e, out);
			p++;
		}
	}
}

size_t text_escape(char *dst, size_t cap, const char *s, bool quoted)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t need = 0, used = 0;
	char esc[5];
	size_t keep;

	while (*p) {
		const char *e = escape_of(p, quoted, esc, &keep);
		const char *piece = e ? e : (const char *)p;
		size_t n = e ? strlen(e) : keep;

		if (used == need && used + n < cap) {
			memcpy(dst + used, piece, n);
			used += n;
		}
		need += n;
		p += e ? 1 : keep;
	}
	if (cap)
		dst[used] = 0;
	return need;
}
