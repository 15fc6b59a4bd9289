/* Choosing the name prefix of the registers, labels and parameter the probes add. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ptx_names.h"

static bool prefix_used(const struct ptx_module *m, const char *prefix)
{
	size_t n = strlen(prefix);

	for (size_t i = 0; i < m->toks.n; i++) {
		const struct ptx_tok *t = &m->toks.v[i];

		if (t->kind != PTX_TOK_IDENT && t->kind != PTX_TOK_DIRECTIVE)
			continue;
		if (t->len >= n && memmem(m->toks.text + t->off, t->len, prefix, n))
			return true;
	}
	return false;
}

int ptx_choose_prefix(const struct ptx_module *m, char *prefix)
{
	for (int n = 0; n < 1000; n++) {
		if (n)
			snprintf(prefix, PTX_PREFIX_MAX, "grt_p%d_", n);
		else
			snprintf(prefix, PTX_PREFIX_MAX, "grt_p_");
		if (!prefix_used(m, prefix))
			return 0;
	}
	return -EEXIST;
}

bool ptx_is_probe_param(const struct ptx_module *m, size_t tok)
{
	const char *s = ptx_tok_text(m, tok);
	size_t len = m->toks.v[tok].len, i = 5;

	if (len < 9 || memcmp(s, "grt_p", 5))
		return false;
	while (i < len && isdigit((unsigned char)s[i]))
		i++;
	return len - i == 4 && !memcmp(s + i, "_buf", 4);
}

bool ptx_is_var_slot(const char *name, size_t len)
{
	size_t i = 5;

	if (len < 11 || memcmp(name, "grt_p", 5))
		return false;
	while (i < len && isdigit((unsigned char)name[i]))
		i++;
	return len - i > 5 && !memcmp(name + i, "_var_", 5);
}
