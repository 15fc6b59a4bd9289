/* Rewriting a PTX module so that selected kernels record block (or thread) timing probes. */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/kernel_regex.h"
#include "ptx_module.h"
#include "ptx_module_vars.h"
#include "ptx_names.h"
#include "ptx_probe.h"
#include "ptx_rewrite.h"

/* The output being assembled: the input copied up to `copied`, plus insertions. */
struct rewrite_out {
	const struct ptx_module *m;
	struct strbuf b;
	size_t copied; /* input offset copied so far */
};

static void copy_to(struct rewrite_out *o, size_t off)
{
	if (off > o->copied) {
		strbuf_add(&o->b, o->m->toks.text + o->copied, off - o->copied);
		o->copied = off;
	}
}

/* Why kernel `e` cannot be instrumented, or NULL. */
static const char *refusal(const struct ptx_module *m, const struct ptx_entry *e,
			   struct ptx_kernel_result *k)
{
	if (e->body_open == PTX_NO_TOK)
		return "declaration without a body";
	if (e->last_param_name != PTX_NO_TOK && ptx_is_probe_param(m, e->last_param_name))
		return "already instrumented";
	if (m->address_size != 64)
		return "32-bit PTX (.address_size 32)";
	if (!ptx_version_at_least(m, 3, 1))
		return "PTX ISA older than 3.1 has no %globaltimer";
	if (ptx_param_refusal(m, e, k->param_size, "probe parameter", k->reason, sizeof(k->reason)))
		return k->reason;
	if (m->func_exits && e->has_call)
		return "calls device functions and some device function executes exit";
	if (e->barrier0_subset || (m->func_barrier0_subset && e->has_call))
		return "uses barrier 0 with a thread count (the probe waits on barrier 0 at the exit)";
	return ptx_module_var_refusal(m, e, k->reason, sizeof(k->reason));
}

static void rewrite_entry(struct rewrite_out *o, const struct ptx_entry *e,
			  const struct probe_style *s)
{
	const struct ptx_module *m = o->m;

	if (e->lparen == PTX_NO_TOK) {
		copy_to(o, ptx_tok_end(m, e->name));
		strbuf_puts(&o->b, "(");
		probe_emit_param(&o->b, s);
		strbuf_puts(&o->b, ")");
	} else if (e->nr_params) {
		copy_to(o, ptx_tok_end(m, e->rparen - 1));
		strbuf_puts(&o->b, ",");
		probe_emit_param(&o->b, s);
	} else {
		copy_to(o, ptx_tok_off(m, e->rparen));
		probe_emit_param(&o->b, s);
		strbuf_puts(&o->b, "\n");
	}
	copy_to(o, ptx_tok_end(m, e->body_open));
	probe_emit_decls(&o->b, s);
	copy_to(o, e->first_stmt == e->body_close ? ptx_tok_off(m, e->body_close)
						  : ptx_tok_off(m, e->first_stmt));
	probe_emit_entry(&o->b, s);
	for (size_t i = 0; i < e->nr_exits; i++) {
		copy_to(o, ptx_tok_off(m, e->exits[i].op));
		probe_emit_exit_branch(&o->b, s);
		o->copied = ptx_tok_off(m, e->exits[i].semicolon);
	}
	copy_to(o, ptx_tok_off(m, e->body_close));
	probe_emit_exit(&o->b, s);
}

static int kernel_init(const struct ptx_module *m, const struct ptx_entry *e,
		       struct ptx_kernel_result *k)
{
	k->name = strndup(ptx_tok_text(m, e->name), m->toks.v[e->name].len);
	if (!k->name)
		return -ENOMEM;
	k->nr_params = e->nr_params;
	k->param_index = -1;
	k->param_offset = (e->args_end + 7) & ~7u;
	k->param_size = k->param_offset + 8;
	return 0;
}

static int rewrite_error(struct ptx_rewrite_result *res, int err, const char *msg)
{
	snprintf(res->error, sizeof(res->error), "%s", msg);
	return err;
}

/* Decides for each kernel and writes the output; the module is already scanned. */
static int rewrite_module(const struct ptx_module *m, const regex_t *filter,
			  const struct probe_style *s, struct ptx_rewrite_result *res)
{
	struct rewrite_out o = {.m = m};

	for (size_t i = 0; i < m->nr_entries; i++) {
		const struct ptx_entry *e = &m->entries[i];
		struct ptx_kernel_result *k = &res->kernels[i];
		const char *why;

		if (kernel_init(m, e, k))
			break;
		res->nr_kernels++;
		why = filter && regexec(filter, k->name, 0, NULL, 0)
			  ? "not selected by the kernel filter"
			  : refusal(m, e, k);
		if (!why && !s->prefix)
			why = "no free name prefix for the probe";
		if (why) {
			if (why != k->reason)
				snprintf(k->reason, sizeof(k->reason), "%s", why);
			continue;
		}
		k->reason[0] = 0;
		k->instrumented = true;
		k->param_index = (int)e->nr_params;
		res->nr_instrumented++;
		rewrite_entry(&o, e, s);
	}
	if (res->nr_kernels < m->nr_entries) {
		strbuf_free(&o.b);
		return rewrite_error(res, -ENOMEM, "out of memory naming kernels");
	}
	copy_to(&o, m->toks.len);
	res->ptx = strbuf_take(&o.b, &res->ptx_len);
	if (!res->ptx) {
		res->ptx = strdup("");
		return rewrite_error(res, -ENOMEM, "out of memory writing rewritten PTX");
	}
	return 0;
}

int ptx_rewrite(const char *ptx, size_t len, const struct ptx_rewrite_opts *opts,
		struct ptx_rewrite_result *res)
{
	struct ptx_module m = {0};
	struct ptx_vars_out vars = {0};
	char prefix[PTX_PREFIX_MAX];
	struct probe_style style = {.mode = GRT_PROBE_BLOCK};
	regex_t filter;
	bool have_filter = opts && opts->kernel_regex;
	char why[160];
	int err;

	memset(res, 0, sizeof(*res));
	if (opts && opts->mode)
		style.mode = opts->mode;
	if (style.mode != GRT_PROBE_BLOCK && style.mode != GRT_PROBE_THREAD)
		return rewrite_error(res, -EINVAL, "unknown probe mode");
	if (!ptx)
		return rewrite_error(res, -EINVAL, "no PTX given");
	if (have_filter && kernel_regex_compile(&filter, opts->kernel_regex, why, sizeof(why)))
		return rewrite_error(res, -EINVAL, "bad kernel filter regular expression");
	err = ptx_scan_redirected(ptx, len, &m, &vars);
	if (err) {
		rewrite_error(res, err, m.error);
		goto out;
	}
	style.prefix = ptx_choose_prefix(&m, prefix) ? NULL : prefix;
	if (style.prefix)
		snprintf(res->name_prefix, sizeof(res->name_prefix), "%s", prefix);
	res->kernels = calloc(m.nr_entries ? m.nr_entries : 1, sizeof(*res->kernels));
	if (!res->kernels) {
		err = rewrite_error(res, -ENOMEM, "out of memory");
		goto out;
	}
	err = rewrite_module(&m, have_filter ? &filter : NULL, &style, res);
	if (!err)
		ptx_vars_hand_over(&vars, res);
out:
	if (err)
		ptx_rewrite_result_free(res);
	ptx_module_free(&m);
	ptx_vars_out_free(&vars);
	if (have_filter)
		regfree(&filter);
	return err;
}

void ptx_rewrite_result_free(struct ptx_rewrite_result *res)
{
	for (size_t i = 0; i < res->nr_kernels; i++) {
		free(res->kernels[i].name);
		free(res->kernels[i].slots);
	}
	for (size_t i = 0; i < res->nr_slots; i++) {
		free(res->slots[i].var);
		free(res->slots[i].slot);
	}
	free(res->slots);
	free(res->kernels);
	free(res->ptx);
	res->slots = NULL;
	res->nr_slots = 0;
	res->kernels = NULL;
	res->ptx = NULL;
	res->nr_kernels = res->nr_instrumented = 0;
	res->ptx_len = 0;
}

const struct ptx_kernel_result *ptx_rewrite_find(const struct ptx_rewrite_result *res,
						 const char *name)
{
	for (size_t i = 0; i < res->nr_kernels; i++)
		if (!strcmp(res->kernels[i].name, name))
			return &res->kernels[i];
	return NULL;
}
