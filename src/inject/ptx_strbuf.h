/* A growable text buffer for building rewritten PTX. */
#ifndef GRT_PTX_STRBUF_H
#define GRT_PTX_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *s;
	size_t len;
	size_t cap;
	bool failed; /* an allocation failed: the contents are incomplete */
};

void strbuf_add(struct strbuf *b, const char *s, size_t n);
void strbuf_puts(struct strbuf *b, const char *s);
void strbuf_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the NUL-terminated text to the caller (NULL after a failure) and resets the buffer. */
char *strbuf_take(struct strbuf *b, size_t *len);
void strbuf_free(struct strbuf *b);

#endif
