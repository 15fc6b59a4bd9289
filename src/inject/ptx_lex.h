/* A PTX tokenizer: identifiers, directives, numbers, strings and punctuation, without comments. */
#ifndef GRT_PTX_LEX_H
#define GRT_PTX_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ptx_tok_kind {
	PTX_TOK_IDENT,	   /* add, %r1, $L__BB0_2, _Z3fooi, %tid */
	PTX_TOK_DIRECTIVE, /* .entry, .reg, .u64, .x (a suffix of an opcode or register) */
	PTX_TOK_NUMBER,	   /* 42, 0x1f, 0f3F800000, 1.5 */
	PTX_TOK_STRING,	   /* "file.cu" */
	PTX_TOK_PUNCT,	   /* one character: { } ( ) [ ] ; , : @ ! < > + - = | ... */
};

struct ptx_tok {
	uint32_t off;
	uint32_t len;
	enum ptx_tok_kind kind;
};

struct ptx_toks {
	const char *text;
	size_t len; /* bytes of text tokenized */
	struct ptx_tok *v;
	size_t n;
	size_t cap;
};

/* Largest module the rewriter takes: offsets are 32-bit. */
#define PTX_MAX_LEN (1u << 30)

/*
 * Tokenizes `len` bytes (stopping early at a NUL). Returns 0, -E2BIG (module
 * too large) or -ENOMEM. An unterminated comment or string ends the text.
 */
int ptx_lex(const char *text, size_t len, struct ptx_toks *toks);
void ptx_toks_free(struct ptx_toks *toks);

/* True when token i exists and is the punctuation character c. */
bool ptx_tok_is_punct(const struct ptx_toks *t, size_t i, char c);
/* True when token i exists and its text is exactly s. */
bool ptx_tok_is(const struct ptx_toks *t, size_t i, const char *s);

#endif
