/* A translation's two text forms, the .func and the pasted block: pure text, for the injected library too. */
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

char *gpubpf_translation_func(const struct gpubpf_translation *t)
{
	struct strbuf b = {0};

	strbuf_puts(&b, t->decls ? t->decls : "");
	strbuf_printf(&b, ".func %s(.reg .b64 %%env", t->name);
	for (unsigned i = 0; i < t->nr_args; i++)
		strbuf_printf(&b, ", .reg .b64 %%c%u", i);
	strbuf_printf(&b, ")\n{\n%s\tret;\n}\n", t->body ? t->body : "");
	return strbuf_take(&b, NULL);
}

char *gpubpf_translation_inline(const struct gpubpf_translation *t, const char *const *args)
{
	struct strbuf b = {0};

	strbuf_puts(&b, "{\n\t.reg .b64 %env;\n");
	if (t->nr_args)
		strbuf_printf(&b, "\t.reg .b64 %%c<%u>;\n", t->nr_args);
	strbuf_printf(&b, "\tmov.b64 %%env, %s;\n", args[0]);
	for (unsigned i = 0; i < t->nr_args; i++)
		strbuf_printf(&b, "\tmov.b64 %%c%u, %s;\n", i, args[i + 1]);
	strbuf_printf(&b, "%s}\n", t->body ? t->body : "");
	return strbuf_take(&b, NULL);
}
