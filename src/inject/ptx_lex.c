/* A PTX tokenizer: identifiers, directives, numbers, strings and punctuation, without comments. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ptx_lex.h"

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '$' || c == '%';
}

static int push(struct ptx_toks *t, size_t off, size_t len, enum ptx_tok_kind kind)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct ptx_tok *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct ptx_tok){.off = (uint32_t)off, .len = (uint32_t)len, .kind = kind};
	return 0;
}

/* Returns the end of the comment starting at i, or i when there is none. */
static size_t skip_comment(const char *s, size_t len, size_t i)
{
	if (i + 1 >= len || s[i] != '/')
		return i;
	if (s[i + 1] == '/') {
		while (i < len && s[i] != '\n')
			i++;
		return i;
	}
	if (s[i + 1] == '*') {
		for (i += 2; i + 1 < len; i++)
			if (s[i] == '*' && s[i + 1] == '/')
				return i + 2;
		return len;
	}
	return i;
}

/* The end of the token of `kind` that starts at i. */
static size_t token_end(const char *s, size_t len, size_t i, enum ptx_tok_kind kind)
{
	switch (kind) {
	case PTX_TOK_STRING:
		for (i++; i < len && s[i] != '"'; i++)
			if (s[i] == '\\' && i + 1 < len)
				i++;
		return i < len ? i + 1 : len;
	case PTX_TOK_NUMBER:
		for (i++; i < len; i++)
			if (!ident_char(s[i]) &&
			    !(s[i] == '.' && i + 1 < len && isdigit((unsigned char)s[i + 1])))
				break;
		return i;
	case PTX_TOK_IDENT:
	case PTX_TOK_DIRECTIVE:
		for (i++; i < len && ident_char(s[i]); i++)
			;
		return i;
	default:
		return i + 1;
	}
}

static enum ptx_tok_kind token_kind(const char *s, size_t len, size_t i)
{
	if (s[i] == '"')
		return PTX_TOK_STRING;
	if (isdigit((unsigned char)s[i]))
		return PTX_TOK_NUMBER;
	if (s[i] == '.' && i + 1 < len && ident_char(s[i + 1]))
		return PTX_TOK_DIRECTIVE;
	if (ident_start(s[i]) && (s[i] != '%' || (i + 1 < len && ident_char(s[i + 1]))))
		return PTX_TOK_IDENT;
	return PTX_TOK_PUNCT;
}

int ptx_lex(const char *text, size_t len, struct ptx_toks *toks)
{
	size_t i = 0;

	memset(toks, 0, sizeof(*toks));
	toks->text = text;
	len = strnlen(text, len);
	toks->len = len;
	if (len >= PTX_MAX_LEN)
		return -E2BIG;
	while (i < len) {
		size_t next = skip_comment(text, len, i);
		enum ptx_tok_kind kind;
		size_t end;

		if (next != i) {
			i = next;
			continue;
		}
		if (isspace((unsigned char)text[i])) {
			i++;
			continue;
		}
		kind = token_kind(text, len, i);
		end = token_end(text, len, i, kind);
		if (push(toks, i, end - i, kind)) {
			ptx_toks_free(toks);
			return -ENOMEM;
		}
		i = end;
	}
	return 0;
}

void ptx_toks_free(struct ptx_toks *toks)
{
	free(toks->v);
	toks->v = NULL;
	toks->n = toks->cap = 0;
}

bool ptx_tok_is_punct(const struct ptx_toks *t, size_t i, char c)
{
	return i < t->n && t->v[i].kind == PTX_TOK_PUNCT && t->text[t->v[i].off] == c;
}

bool ptx_tok_is(const struct ptx_toks *t, size_t i, const char *s)
{
	size_t n = strlen(s);

	return i < t->n && t->v[i].len == n && !memcmp(t->text + t->v[i].off, s, n);
}
