/* A translation's two text forms, the .func and the pasted block: pure text, for the injected library too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/bpf_ptx.h"
#include "inject/ptx_strbuf.h"

void gpubpf_translation_free(struct gpubpf_translation *t)
{
	free(t->decls);
	free(t->body);
	memset(t, 0, sizeof(*t));
}

bool gpubpf_hints_allowed(unsigned sm, unsigned major, unsigned minor)
{
	return sm >= 80 && (major > 7 || (major == 7 && minor >= 4));
}

/*
 * The body, each two-form line resolved (GPUBPF_SM80_MARK); with early_word,
 * the early read block replaced by taking the word from that register.
 */
static void put_body(struct strbuf *b, const char *body, bool hints, const char *early_word)
{
	const size_t mark_len = strlen(GPUBPF_SM80_MARK);
	bool skipping = false;

	while (body && *body) {
		const char *nl = strchr(body, '\n'), *end = nl ? nl + 1 : body + strlen(body);
		const char *mark = memmem(body, (size_t)(end - body), GPUBPF_SM80_MARK, mark_len);
		size_t len = (size_t)(end - body);

		if (early_word && len == strlen(GPUBPF_EARLY_OPEN) &&
		    !memcmp(body, GPUBPF_EARLY_OPEN, len)) {
			strbuf_printf(b, "\tmov.b64 %%xw, %s;\n", early_word);
			skipping = true;
		} else if (skipping) {
			skipping = !(len == strlen(GPUBPF_EARLY_CLOSE) &&
				     !memcmp(body, GPUBPF_EARLY_CLOSE, len));
		} else if (!mark)
			strbuf_add(b, body, (size_t)(end - body));
		else if (hints)
			strbuf_printf(b, "\t%.*s", (int)(end - mark - mark_len), mark + mark_len);
		else if (mark > body + 1) /* the plain form; nothing when it is empty */
			strbuf_printf(b, "%.*s\n", (int)(mark - body), body);
		body = end;
	}
}

char *gpubpf_translation_func(const struct gpubpf_translation *t, bool hints)
{
	struct strbuf b = {0};

	strbuf_puts(&b, t->decls ? t->decls : "");
	strbuf_printf(&b, ".func %s(.reg .b64 %%env", t->name);
	for (unsigned i = 0; i < t->nr_args; i++)
		strbuf_printf(&b, ", .reg .b64 %%c%u", i);
	strbuf_puts(&b, ")\n{\n");
	put_body(&b, t->body, hints, NULL);
	strbuf_puts(&b, "\tret;\n}\n");
	return strbuf_take(&b, NULL);
}

char *gpubpf_translation_inline(const struct gpubpf_translation *t, const char *const *args,
				bool hints, const char *early_word)
{
	struct strbuf b = {0};

	strbuf_puts(&b, "{\n\t.reg .b64 %env;\n");
	if (t->nr_args)
		strbuf_printf(&b, "\t.reg .b64 %%c<%u>;\n", t->nr_args);
	strbuf_printf(&b, "\tmov.b64 %%env, %s;\n", args[0]);
	for (unsigned i = 0; i < t->nr_args; i++)
		strbuf_printf(&b, "\tmov.b64 %%c%u, %s;\n", i, args[i + 1]);
	put_body(&b, t->body, hints, early_word);
	strbuf_puts(&b, "}\n");
	return strbuf_take(&b, NULL);
}

char *gpubpf_translation_early_read(const struct gpubpf_translation *t, const char *env,
				    const char *out)
{
	const char *open = t->body ? strstr(t->body, GPUBPF_EARLY_OPEN) : NULL, *close;
	struct strbuf b = {0};

	if (!open)
		return NULL;
	open += strlen(GPUBPF_EARLY_OPEN);
	close = strstr(open, GPUBPF_EARLY_CLOSE);
	if (!close)
		return NULL;
	strbuf_printf(&b, "{\n\t.reg .b64 %%env;\n\t.reg .b64 %%xw;\n\tmov.b64 %%env, %s;\n", env);
	strbuf_add(&b, open, (size_t)(close - open));
	strbuf_printf(&b, "\tmov.b64 %s, %%xw;\n}\n", out);
	return strbuf_take(&b, NULL);
}
