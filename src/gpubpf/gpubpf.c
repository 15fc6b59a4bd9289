/* An object made ready for the GPU: loaded, every program verified and translated. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/bpf_attach.h"
#include "gpubpf/bpf_stripe.h"
#include "gpubpf/gpubpf.h"
#include "inject/ptx_strbuf.h"

static int prepare(struct gpubpf_bundle *b, const struct gpubpf_bundle_opts *opts, char *err,
		   size_t err_len)
{
	const char *prefix = opts && opts->name_prefix ? opts->name_prefix : "__grt_bpf";
	unsigned variants = 0;
	char msg[384];

	b->map_slot_base = opts ? opts->map_slot_base : 0;
	if (b->map_slot_base + b->obj.nr_maps > GRT_BPF_MAX_MAPS) {
		snprintf(err, err_len, "%s: more than %u maps in the session", b->obj.name,
			 GRT_BPF_MAX_MAPS);
		return -E2BIG;
	}
	b->progs = calloc(b->obj.nr_progs, sizeof(*b->progs));
	if (!b->progs) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->obj.nr_progs; i++) {
		struct gpubpf_program *p = &b->progs[b->nr_progs++];
		int rc;

		p->prog = &b->obj.progs[i];
		p->id = (uint16_t)((opts ? opts->first_prog_id : 0) + i);
		rc = gpubpf_verify(&b->obj, p->prog, &p->ver, msg, sizeof(msg));
		if (rc) {
			snprintf(err, err_len, "%s: %s", b->obj.name, msg);
			return rc;
		}
	}
	if (gpubpf_variants_parse(getenv(GPUBPF_VARIANTS_ENV), &variants, msg, sizeof(msg))) {
		snprintf(err, err_len, "%s: %s", b->obj.name, msg);
		return -EINVAL;
	}
	/* every program's accesses known: the maps' layouts, before any program is translated */
	gpubpf_stripe_counters(b);
	for (size_t i = 0; i < b->nr_progs; i++) {
		struct gpubpf_program *p = &b->progs[i];
		struct gpubpf_translate_opts t = {.map_slot_base = b->map_slot_base,
						  .variants = variants};
		char name[GPUBPF_NAME_MAX];
		int rc;

		snprintf(name, sizeof(name), "%s%u", prefix, p->id);
		t.name = name;
		t.prog_id = p->id;
		rc = gpubpf_translate(&b->obj, p->prog, &p->ver, &t, &p->ptx, msg, sizeof(msg));
		if (rc) {
			snprintf(err, err_len, "%s: %s", b->obj.name, msg);
			return rc;
		}
	}
	return 0;
}

int gpubpf_bundle_load(const char *path, const struct gpubpf_bundle_opts *opts,
		       struct gpubpf_bundle *b, char *err, size_t err_len)
{
	int rc;

	memset(b, 0, sizeof(*b));
	rc = gpubpf_object_open(path, &b->obj, err, err_len);
	return rc ? rc : prepare(b, opts, err, err_len);
}

int gpubpf_bundle_load_mem(const void *buf, size_t len, const char *name,
			   const struct gpubpf_bundle_opts *opts, struct gpubpf_bundle *b,
			   char *err, size_t err_len)
{
	int rc;

	memset(b, 0, sizeof(*b));
	rc = gpubpf_object_open_mem(buf, len, name, &b->obj, err, err_len);
	return rc ? rc : prepare(b, opts, err, err_len);
}

void gpubpf_bundle_free(struct gpubpf_bundle *b)
{
	for (size_t i = 0; i < b->nr_progs; i++) {
		gpubpf_verified_free(&b->progs[i].ver);
		gpubpf_translation_free(&b->progs[i].ptx);
	}
	free(b->progs);
	gpubpf_object_free(&b->obj);
	memset(b, 0, sizeof(*b));
}

int gpubpf_bundles_load(const char *const *paths, size_t n, struct gpubpf_bundle *out, char *err,
			size_t err_len)
{
	struct gpubpf_bundle_opts opts = {0};

	if (n > GPUBPF_MAX_OBJECTS) {
		snprintf(err, err_len, "more than %d GPU eBPF objects", GPUBPF_MAX_OBJECTS);
		return -E2BIG;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = gpubpf_bundle_load(paths[i], &opts, &out[i], err, err_len);

		if (rc) {
			gpubpf_bundles_free(out, i + 1);
			return rc;
		}
		opts.map_slot_base += (uint32_t)out[i].obj.nr_maps;
		opts.first_prog_id += (uint16_t)out[i].nr_progs;
	}
	return 0;
}

void gpubpf_bundles_free(struct gpubpf_bundle *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gpubpf_bundle_free(&b[i]);
}

/* An entry that runs one program inline, its inputs taken from parameters. */
static void harness_entry(struct strbuf *m, const struct gpubpf_translation *t, bool hints)
{
	const char *args[1 + 32];
	char names[1 + 32][16];

	strbuf_printf(m, ".visible .entry %s_check(.param .u64 %s_check_env", t->name, t->name);
	for (unsigned i = 0; i < t->nr_args; i++)
		strbuf_printf(m, ", .param .u64 %s_check_c%u", t->name, i);
	strbuf_printf(m, ")\n{\n\t.reg .b64 %%grt_a<%u>;\n", t->nr_args + 1);
	strbuf_printf(m, "\tld.param.u64 %%grt_a0, [%s_check_env];\n", t->name);
	strbuf_puts(m, "\tcvta.to.global.u64 %grt_a0, %grt_a0;\n");
	for (unsigned i = 0; i <= t->nr_args && i < 33; i++) {
		snprintf(names[i], sizeof(names[i]), "%%grt_a%u", i);
		args[i] = names[i];
		if (i)
			strbuf_printf(m, "\tld.param.u64 %%grt_a%u, [%s_check_c%u];\n", i, t->name,
				      i - 1);
	}
	{
		char *inl = gpubpf_translation_inline(t, args, hints, NULL);

		if (inl)
			strbuf_puts(m, inl);
		else
			m->failed = true;
		free(inl);
	}
	strbuf_puts(m, "\tret;\n}\n");
}

char *gpubpf_bundle_module(const struct gpubpf_bundle *b, const char *arch, bool harness)
{
	const char *version = gpubpf_ptx_version_for(arch);
	struct strbuf m = {0};
	unsigned sm = 0, major = 0, minor = 0;
	bool hints;

	if (!version)
		return NULL;
	sscanf(arch, "sm_%u", &sm);
	sscanf(version, "%u.%u", &major, &minor);
	hints = gpubpf_hints_allowed(sm, major, minor);
	strbuf_printf(&m, "//\n// GPU eBPF programs of %s, translated by grtrace\n//\n\n",
		      b->obj.name);
	strbuf_printf(&m, ".version %s\n.target %s\n.address_size 64\n\n", version, arch);
	for (size_t i = 0; i < b->nr_progs; i++) {
		const struct gpubpf_translation *t = &b->progs[i].ptx;
		char *func = gpubpf_translation_func(t, hints);

		strbuf_printf(&m, "// %s: %s\n", b->progs[i].prog->section, b->progs[i].prog->name);
		if (!func) {
			m.failed = true;
			break;
		}
		strbuf_puts(&m, func);
		strbuf_puts(&m, "\n");
		free(func);
		if (harness) {
			harness_entry(&m, t, hints);
			strbuf_puts(&m, "\n");
		}
	}
	return strbuf_take(&m, NULL);
}

int gpubpf_attach_bundle(const char *ptx, size_t len, const struct gpubpf_bundle *b,
			 struct gpubpf_attach_result *res)
{
	struct gpubpf_attach_prog *progs = calloc(b->nr_progs ? b->nr_progs : 1, sizeof(*progs));
	struct gpubpf_attach_opts o = {.progs = progs, .nr_progs = b->nr_progs};
	int rc;

	if (!progs) {
		memset(res, 0, sizeof(*res));
		snprintf(res->rw.error, sizeof(res->rw.error), "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->nr_progs; i++)
		progs[i] = (struct gpubpf_attach_prog){.attach = b->progs[i].prog->attach,
						       .kernel = b->progs[i].prog->kernel,
						       .ptx = &b->progs[i].ptx};
	rc = gpubpf_attach(ptx, len, &o, res);
	free(progs);
	return rc;
}
