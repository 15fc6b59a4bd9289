/* A growable text buffer for building rewritten PTX. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptx_strbuf.h"

static bool strbuf_reserve(struct strbuf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	char *s;

	if (b->failed)
		return false;
	if (more < b->cap - b->len)
		return true;
	while (cap - b->len <= more) {
		if (cap > ((size_t)1 << 40)) {
			b->failed = true;
			return false;
		}
		cap *= 2;
	}
	s = realloc(b->s, cap);
	if (!s) {
		b->failed = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	if (!strbuf_reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void strbuf_puts(struct strbuf *b, const char *s)
{
	strbuf_add(b, s, strlen(s));
}

void strbuf_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !strbuf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *strbuf_take(struct strbuf *b, size_t *len)
{
	char *s = b->failed ? NULL : b->s;

	if (s && len)
		*len = b->len;
	if (!s)
		free(b->s);
	memset(b, 0, sizeof(*b));
	return s;
}

void strbuf_free(struct strbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}
