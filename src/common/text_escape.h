/* Escaping text that came from a traced program (kernel names, comm, paths) before it reaches a terminal. */
#ifndef GRT_TEXT_ESCAPE_H
#define GRT_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Escaped bytes: control characters (C0, DEL, the UTF-8 encoded C1 range),
 * bytes that are not valid UTF-8, and the backslash (so an escape in the
 * output always means an escape). With quoted, '"' too. Everything else,
 * printable UTF-8 included, is kept. Escapes are C-style: \n \t \r \\ \" \xNN.
 */
bool text_needs_escape(const char *s, bool quoted);

/* Writes s escaped to out (no surrounding quotes). */
void text_escape_write(FILE *out, const char *s, bool quoted);

/*
 * s escaped into dst (cap bytes, NUL-terminated, cut at a whole escape when
 * it does not fit). Returns the length the whole escaped text needs.
 */
size_t text_escape(char *dst, size_t cap, const char *s, bool quoted);

#endif
