/* Pasting translated GPU eBPF programs into kernels: at entry, at exits, at memory accesses. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/bpf_attach.h"
#include "inject/ptx_module.h"
#include "inject/ptx_module_vars.h"
#include "inject/ptx_names.h"
#include "inject/ptx_strbuf.h"

/*
 * What a kernel becomes (names carry the module's free prefix <p>, see ptx_names.h):
 *
 *   .entry k(<its parameters>, .param .u64 <p>bpf_env)
 *   {
 *     <its declarations>  + %<p>e (environment), %<p>off, staging registers
 *     ld.param.u64 %<p>e, [<p>bpf_env]; setp.eq.u64 %<p>off, %<p>e, 0; ...
 *     { entry program, pasted }                  kprobe/<k>
 *     ...
 *     { memory program } before each global ld/st  kprobe/__memcapture
 *     ...
 *     bra $<p>bpf_exit;  (for every ret/exit)     kretprobe/<k>
 *   $<p>bpf_exit: { exit program } ret;
 *   }
 *
 * Each pasted program is a { } block: its registers, labels and local stack
 * are its own, so a body may be pasted at many sites. Memory accesses covered:
 * ld, ldu and st of the .global space, and of the generic space when
 * isspacep.global says the address is global at run time; .shared, .local,
 * .param and .const accesses, atomics, reductions, texture and bulk copies
 * are not probed.
 */

#define DEFAULT_INLINE_LIMIT 20000

struct mem_site {
	size_t stmt;	/* first token: the guard or the opcode */
	size_t guard;	/* the guard's predicate token, PTX_NO_TOK when unguarded */
	bool guard_neg; /* @!%p */
	bool store;
	bool generic; /* no state space: probed when the address is global */
	uint32_t size;
	size_t base; /* register or variable token, PTX_NO_TOK for an absolute address */
	long long disp;
};

struct attach {
	const struct ptx_module *m;
	const struct gpubpf_attach_opts *o;
	struct gpubpf_attach_result *res;
	struct strbuf b;
	size_t copied;
	char p[PTX_PREFIX_MAX]; /* the name prefix */
	bool call_mem;		/* memory programs are called, not pasted */
	unsigned site_seq;	/* numbers memory sites across the module (labels) */
	bool hints;		/* the module takes cache-policy forms (gpubpf_hints_allowed) */
};

static void copy_to(struct attach *a, size_t off)
{
	if (off > a->copied) {
		strbuf_add(&a->b, a->m->toks.text + a->copied, off - a->copied);
		a->copied = off;
	}
}

static bool tok_starts(const struct ptx_module *m, size_t tok, const char *s)
{
	size_t n = strlen(s);

	return m->toks.v[tok].len >= n && !memcmp(ptx_tok_text(m, tok), s, n);
}

/* --- what applies where ----------------------------------------------------------------- */

static bool prog_matches(const struct gpubpf_attach_prog *p, const char *kernel)
{
	return p->attach == GRT_BPF_ATTACH_MEMCAPTURE ||
	       (p->kernel && !fnmatch(p->kernel, kernel, 0));
}

/* The sm number of the module's .target (0 when absent). */
static unsigned module_sm(const struct ptx_module *m)
{
	for (size_t i = 0; i + 1 < m->toks.n; i++)
		if (ptx_tok_is(&m->toks, i, ".target") && tok_starts(m, i + 1, "sm_"))
			return (unsigned)strtoul(ptx_tok_text(m, i + 1) + 3, NULL, 10);
	return 0;
}

/* Whether the module's .target and .version take cache-policy forms. */
static bool module_takes_hints(const struct ptx_module *m)
{
	unsigned major = 0, minor = 0;

	for (size_t i = 0; i + 1 < m->toks.n; i++) {
		if (ptx_tok_is(&m->toks, i, ".version")) {
			char buf[16];
			size_t n = m->toks.v[i + 1].len;

			if (n >= sizeof(buf))
				return false;
			memcpy(buf, ptx_tok_text(m, i + 1), n);
			buf[n] = 0;
			if (sscanf(buf, "%u.%u", &major, &minor) != 2)
				return false;
			break;
		}
	}
	return gpubpf_hints_allowed(module_sm(m), major, minor);
}

/* Where module-scope additions go: after .version, .target and .address_size. */
static size_t header_end(const struct ptx_module *m)
{
	size_t i = 0;

	while (i < m->toks.n) {
		if (ptx_tok_is(&m->toks, i, ".version") ||
		    ptx_tok_is(&m->toks, i, ".address_size")) {
			i += 2;
		} else if (ptx_tok_is(&m->toks, i, ".target")) {
			i += 2;
			while (ptx_tok_is_punct(&m->toks, i, ',') && i + 1 < m->toks.n)
				i += 2;
		} else {
			break;
		}
	}
	return i < m->toks.n ? ptx_tok_off(m, i) : m->toks.len;
}

static long long parse_number(const struct ptx_module *m, size_t tok, bool *ok)
{
	char buf[32];
	char *end;
	long long v;
	size_t n = m->toks.v[tok].len;

	*ok = m->toks.v[tok].kind == PTX_TOK_NUMBER && n < sizeof(buf);
	if (!*ok)
		return 0;
	memcpy(buf, ptx_tok_text(m, tok), n);
	buf[n] = 0;
	v = strtoll(buf, &end, 0);
	*ok = !*end;
	return v;
}

/* The address operand [base], [base+d], [base+-d], [d]. False when it is something else. */
static bool parse_address(const struct ptx_module *m, size_t i, struct mem_site *s)
{
	const struct ptx_toks *t = &m->toks;
	bool ok = true;

	s->base = PTX_NO_TOK;
	s->disp = 0;
	if (t->v[i].kind == PTX_TOK_NUMBER) {
		s->disp = parse_number(m, i, &ok);
		return ok && ptx_tok_is_punct(t, i + 1, ']');
	}
	if (t->v[i].kind != PTX_TOK_IDENT)
		return false;
	s->base = i++;
	if (ptx_tok_is_punct(t, i, ']'))
		return true;
	if (ptx_tok_is_punct(t, i, '+') && ptx_tok_is_punct(t, i + 1, '-')) {
		s->disp = -parse_number(m, i + 2, &ok);
		return ok && ptx_tok_is_punct(t, i + 3, ']');
	}
	if (ptx_tok_is_punct(t, i, '+') || ptx_tok_is_punct(t, i, '-')) {
		s->disp = parse_number(m, i + 1, &ok) * (ptx_tok_is_punct(t, i, '-') ? -1 : 1);
		return ok && ptx_tok_is_punct(t, i + 2, ']');
	}
	return false;
}

/* 1: a global/generic ld/st to probe; 0: another statement; -1: one whose form is not understood.
 */
static int parse_mem_site(const struct ptx_module *m, size_t close, size_t stmt, struct mem_site *s)
{
	const struct ptx_toks *t = &m->toks;
	size_t i = stmt;
	uint32_t type = 0, vec = 1;
	bool global = false;

	memset(s, 0, sizeof(*s));
	s->stmt = stmt;
	s->guard = PTX_NO_TOK;
	if (ptx_tok_is_punct(t, i, '@')) {
		s->guard_neg = ptx_tok_is_punct(t, i + 1, '!');
		s->guard = i + 1 + s->guard_neg;
		i = s->guard + 1;
	}
	if (i >= close ||
	    !(ptx_tok_is(t, i, "ld") || ptx_tok_is(t, i, "ldu") || ptx_tok_is(t, i, "st")))
		return 0;
	s->store = ptx_tok_is(t, i, "st");
	for (i++; i < close; i++) {
		if (ptx_tok_is_punct(t, i, ':')) { /* ".L2::64B", ".shared::cta" */
			i += ptx_tok_is_punct(t, i + 1, ':') ? 2 : 1;
			continue;
		}
		if (t->v[i].kind != PTX_TOK_DIRECTIVE)
			break;
		if (ptx_tok_is(t, i, ".global"))
			global = true;
		else if (ptx_tok_is(t, i, ".shared") || ptx_tok_is(t, i, ".local") ||
			 ptx_tok_is(t, i, ".param") || ptx_tok_is(t, i, ".const") ||
			 ptx_tok_is(t, i, ".async") || ptx_tok_is(t, i, ".bulk"))
			return 0;
		else if (ptx_tok_is(t, i, ".v2"))
			vec = 2;
		else if (ptx_tok_is(t, i, ".v4"))
			vec = 4;
		else if (ptx_tok_is(t, i, ".v8"))
			vec = 8;
		else if (ptx_type_size(m, i))
			type = ptx_type_size(m, i);
	}
	s->generic = !global;
	s->size = type * vec;
	while (i < close && !ptx_tok_is_punct(t, i, '[') && !ptx_tok_is_punct(t, i, ';'))
		i++;
	if (!s->size || !ptx_tok_is_punct(t, i, '[') || !parse_address(m, i + 1, s))
		return -1;
	return 1;
}

/* --- emission ---------------------------------------------------------------------------- */

/* Pastes program t with args (operands of the kernel's scope), or calls its .func. */
/* Whether program t reads its ring's "exhausted" word at the kernel's entry (ring_entry_read). */
static bool reads_at_entry(const struct gpubpf_translation *t)
{
	return t->attach == GRT_BPF_ATTACH_EXIT && t->body && strstr(t->body, GPUBPF_EARLY_OPEN);
}

static void paste(struct attach *a, const struct gpubpf_translation *t, const char *const *args,
		  bool call, const char *early_word)
{
	char *text;

	if (call) {
		strbuf_printf(&a->b, "\tcall %s, (", t->name);
		for (unsigned i = 0; i <= t->nr_args; i++) {
			strbuf_printf(&a->b, "%s%%%sc%u", i ? ", " : "", a->p, i);
		}
		strbuf_puts(&a->b, ");\n");
		return;
	}
	text = gpubpf_translation_inline(t, args, a->hints, early_word);
	if (!text) {
		a->b.failed = true;
		return;
	}
	strbuf_puts(&a->b, "\t");
	strbuf_puts(&a->b, text);
	free(text);
}

/* Stages call arguments into %<p>c<i> (calls take registers). */
static void stage_call_args(struct attach *a, const struct gpubpf_translation *t,
			    const char *const *args)
{
	for (unsigned i = 0; i <= t->nr_args; i++)
		strbuf_printf(&a->b, "\tmov.b64 %%%sc%u, %s;\n", a->p, i, args[i]);
}

/* The kernel's parameters a program reads, loaded into %<p>a<i>. */
static void stage_params(struct attach *a, const struct ptx_entry *e, uint32_t fields)
{
	for (unsigned i = 0; i < GRT_BPF_CTX_PARAMS; i++) {
		const struct ptx_param *pp = i < e->nr_params ? &e->params[i] : NULL;

		if (!(fields & (1u << i)))
			continue;
		if (pp && pp->scalar && pp->name != PTX_NO_TOK &&
		    (pp->size == 1 || pp->size == 2 || pp->size == 4 || pp->size == 8))
			strbuf_printf(&a->b, "\tld.param.u%u %%%sa%u, [%.*s];\n", 8 * pp->size,
				      a->p, i, (int)a->m->toks.v[pp->name].len,
				      ptx_tok_text(a->m, pp->name));
		else
			strbuf_printf(&a->b, "\tmov.b64 %%%sa%u, 0;\n", a->p, i);
	}
}

/* Runs every program of `kind` that matches the kernel, with the kernel context. */
static unsigned paste_kernel_progs(struct attach *a, const struct ptx_entry *e, const char *name,
				   enum grt_bpf_attach kind, uint32_t kernel_id)
{
	unsigned n = 0;

	for (size_t i = 0; i < a->o->nr_progs; i++) {
		const struct gpubpf_attach_prog *p = &a->o->progs[i];
		char names[1 + GRT_BPF_KCTX_NR_FIELDS][40], early[PTX_PREFIX_MAX + 24];
		const char *args[1 + GRT_BPF_KCTX_NR_FIELDS];
		unsigned k = 0;

		if (p->attach != kind || !prog_matches(p, name))
			continue;
		stage_params(a, e, p->ptx->ctx_fields);
		snprintf(names[k], sizeof(names[k]), "%%%se", a->p);
		args[k] = names[k];
		k++;
		for (unsigned f = 0; f < GRT_BPF_KCTX_NR_FIELDS; f++) {
			if (!(p->ptx->ctx_fields & (1u << f)))
				continue;
			if (f == GRT_BPF_KCTX_KERNEL_ID)
				snprintf(names[k], sizeof(names[k]), "%u", kernel_id);
			else
				snprintf(names[k], sizeof(names[k]), "%%%sa%u", a->p, f);
			args[k] = names[k];
			k++;
		}
		strbuf_printf(&a->b, "\t// grtrace GPU eBPF: %s\n", p->ptx->name);
		snprintf(early, sizeof(early), "%%%sx%zu", a->p, i);
		paste(a, p->ptx, args, false,
		      kind == GRT_BPF_ATTACH_EXIT && reads_at_entry(p->ptx) ? early : NULL);
		n++;
	}
	return n;
}

static void emit_mem_site(struct attach *a, const struct mem_site *s, uint32_t kernel_id,
			  unsigned site_no)
{
	const struct ptx_module *m = a->m;
	unsigned label = a->site_seq++;

	strbuf_printf(&a->b, "// grtrace GPU eBPF: memory access %u\n\t", site_no);
	if (s->guard != PTX_NO_TOK)
		strbuf_printf(&a->b, "@%s%.*s bra $%sms%u;\n\t", s->guard_neg ? "" : "!",
			      (int)m->toks.v[s->guard].len, ptx_tok_text(m, s->guard), a->p, label);
	strbuf_printf(&a->b, "@%%%soff bra $%sms%u;\n", a->p, a->p, label);
	if (s->base == PTX_NO_TOK)
		strbuf_printf(&a->b, "\tmov.u64 %%%sm, %lld;\n", a->p, s->disp);
	else
		strbuf_printf(&a->b, "\tmov.u64 %%%sm, %.*s;\n", a->p, (int)m->toks.v[s->base].len,
			      ptx_tok_text(m, s->base));
	if (s->base != PTX_NO_TOK && s->disp)
		strbuf_printf(&a->b, "\tadd.s64 %%%sm, %%%sm, %lld;\n", a->p, a->p, s->disp);
	if (s->generic)
		strbuf_printf(&a->b, "\tisspacep.global %%%sg, %%%sm;\n\t@!%%%sg bra $%sms%u;\n",
			      a->p, a->p, a->p, a->p, label);
	for (size_t i = 0; i < a->o->nr_progs; i++) {
		const struct gpubpf_attach_prog *p = &a->o->progs[i];
		char names[1 + GRT_BPF_MCTX_NR_FIELDS][40];
		const char *args[1 + GRT_BPF_MCTX_NR_FIELDS];
		unsigned k = 0;

		if (p->attach != GRT_BPF_ATTACH_MEMCAPTURE)
			continue;
		snprintf(names[k], sizeof(names[k]), "%%%se", a->p);
		args[k] = names[k];
		k++;
		for (unsigned f = 0; f < GRT_BPF_MCTX_NR_FIELDS; f++) {
			uint32_t v = f == GRT_BPF_MCTX_SIZE ? s->size
				     : f == GRT_BPF_MCTX_FLAGS
					 ? (s->store ? GRT_BPF_MEM_STORE : 0) |
					       (s->generic ? GRT_BPF_MEM_GENERIC : 0)
				     : f == GRT_BPF_MCTX_KERNEL_ID ? kernel_id
								   : site_no;

			if (!(p->ptx->ctx_fields & (1u << f)))
				continue;
			if (f == GRT_BPF_MCTX_ADDR)
				snprintf(names[k], sizeof(names[k]), "%%%sm", a->p);
			else
				snprintf(names[k], sizeof(names[k]), "%u", v);
			args[k] = names[k];
			k++;
		}
		if (a->call_mem)
			stage_call_args(a, p->ptx, args);
		paste(a, p->ptx, args, a->call_mem, NULL);
	}
	strbuf_printf(&a->b, "$%sms%u:\n\t", a->p, label);
}

/* Registers the additions use, declared at the top of the kernel body. */
static void emit_decls(struct attach *a, bool mem)
{
	strbuf_printf(&a->b, "\n\t.reg .b64 %%%se;\n\t.reg .pred %%%soff;\n", a->p, a->p);
	for (size_t i = 0; i < a->o->nr_progs; i++)
		if (reads_at_entry(a->o->progs[i].ptx)) {
			strbuf_printf(&a->b, "\t.reg .b64 %%%sx<%zu>;\n", a->p, a->o->nr_progs);
			break;
		}
	strbuf_printf(&a->b, "\t.reg .b64 %%%sa<%u>;\n", a->p, GRT_BPF_CTX_PARAMS);
	if (mem)
		strbuf_printf(&a->b, "\t.reg .b64 %%%sm;\n\t.reg .pred %%%sg;\n", a->p, a->p);
	if (mem && a->call_mem)
		strbuf_printf(&a->b, "\t.reg .b64 %%%sc<%u>;\n", a->p, 1 + GRT_BPF_MCTX_NR_FIELDS);
}

static void emit_param(struct attach *a, const struct ptx_entry *e)
{
	const struct ptx_module *m = a->m;

	if (e->lparen == PTX_NO_TOK) {
		copy_to(a, ptx_tok_end(m, e->name));
		strbuf_printf(&a->b, "(\n\t.param .u64 %sbpf_env)", a->p);
	} else if (e->nr_params) {
		copy_to(a, ptx_tok_end(m, e->rparen - 1));
		strbuf_printf(&a->b, ",\n\t.param .u64 %sbpf_env", a->p);
	} else {
		copy_to(a, ptx_tok_off(m, e->rparen));
		strbuf_printf(&a->b, "\n\t.param .u64 %sbpf_env\n", a->p);
	}
}

/*
 * The early reads of the exit programs that run in this kernel (ring_entry_read),
 * at its entry: each leaves its word in %<p>x<i>, 0 (the full path) while off.
 */
static void emit_entry_reads(struct attach *a, const char *kernel)
{
	char env[PTX_PREFIX_MAX + 8], out[PTX_PREFIX_MAX + 24];
	bool any = false;

	snprintf(env, sizeof(env), "%%%se", a->p);
	for (size_t i = 0; i < a->o->nr_progs; i++) {
		const struct gpubpf_attach_prog *p = &a->o->progs[i];
		char *text;

		if (p->attach != GRT_BPF_ATTACH_EXIT || !prog_matches(p, kernel) ||
		    !reads_at_entry(p->ptx))
			continue;
		snprintf(out, sizeof(out), "%%%sx%zu", a->p, i);
		text = gpubpf_translation_early_read(p->ptx, env, out);
		if (!text) {
			a->b.failed = true;
			return;
		}
		strbuf_printf(&a->b, "\tmov.b64 %s, 0;\n", out);
		if (!any)
			strbuf_printf(&a->b, "\t@%%%soff bra $%sbpf_reads_done;\n", a->p, a->p);
		any = true;
		strbuf_printf(&a->b, "\t// grtrace GPU eBPF: %s's ring word, read early\n",
			      p->ptx->name);
		strbuf_puts(&a->b, text);
		free(text);
	}
	if (any)
		strbuf_printf(&a->b, "$%sbpf_reads_done:\n", a->p);
}

/* Writes one kernel with its sites; mem holds its memory sites in text order. */
static void rewrite_kernel(struct attach *a, const struct ptx_entry *e, const char *name,
			   uint32_t kernel_id, const struct mem_site *mem, size_t nr_mem,
			   struct gpubpf_kernel_sites *sites, bool has_exit)
{
	const struct ptx_module *m = a->m;
	size_t x = 0, k = 0;

	emit_param(a, e);
	copy_to(a, ptx_tok_end(m, e->body_open));
	emit_decls(a, nr_mem > 0);
	copy_to(a, e->first_stmt == e->body_close ? ptx_tok_off(m, e->body_close)
						  : ptx_tok_off(m, e->first_stmt));
	strbuf_printf(&a->b,
		      "\n\t// grtrace GPU eBPF: the environment (0: programs off)\n"
		      "\tld.param.u64 %%%se, [%sbpf_env];\n"
		      "\tsetp.eq.u64 %%%soff, %%%se, 0;\n"
		      "\tcvta.to.global.u64 %%%se, %%%se;\n",
		      a->p, a->p, a->p, a->p, a->p, a->p);
	if (has_exit)
		emit_entry_reads(a, name);
	if (sites->entry) {
		strbuf_printf(&a->b, "\t@%%%soff bra $%sbpf_entry_done;\n", a->p, a->p);
		paste_kernel_progs(a, e, name, GRT_BPF_ATTACH_ENTRY, kernel_id);
		strbuf_printf(&a->b, "$%sbpf_entry_done:\n", a->p);
	}
	strbuf_puts(&a->b, "\t");
	/* memory sites and exits, in text order */
	while (k < nr_mem || (has_exit && x < e->nr_exits)) {
		bool take_mem =
		    k < nr_mem && (!has_exit || x >= e->nr_exits || mem[k].stmt < e->exits[x].op);

		if (take_mem) {
			copy_to(a, ptx_tok_off(m, mem[k].stmt));
			emit_mem_site(a, &mem[k], kernel_id, (unsigned)k);
			k++;
		} else {
			copy_to(a, ptx_tok_off(m, e->exits[x].op));
			strbuf_printf(&a->b, "bra $%sbpf_exit", a->p);
			a->copied = ptx_tok_off(m, e->exits[x].semicolon);
			x++;
		}
	}
	sites->exits = has_exit ? (unsigned)e->nr_exits : 0;
	copy_to(a, ptx_tok_off(m, e->body_close));
	if (has_exit) {
		strbuf_printf(&a->b, "\n$%sbpf_exit:\n\t@%%%soff bra $%sbpf_exit_done;\n", a->p,
			      a->p, a->p);
		paste_kernel_progs(a, e, name, GRT_BPF_ATTACH_EXIT, kernel_id);
		strbuf_printf(&a->b, "$%sbpf_exit_done:\n\tret;\n", a->p);
	}
}

/* --- decisions --------------------------------------------------------------------------- */

static const char *refusal(const struct attach *a, const struct ptx_entry *e, bool has_exit,
			   struct ptx_kernel_result *k, unsigned sm)
{
	const struct ptx_module *m = a->m;
	if (e->body_open == PTX_NO_TOK)
		return "declaration without a body";
	if (e->last_param_name != PTX_NO_TOK && tok_starts(m, e->last_param_name, "grt_p") &&
	    m->toks.v[e->last_param_name].len > 7 &&
	    !memcmp(ptx_tok_text(m, e->last_param_name) + m->toks.v[e->last_param_name].len - 7,
		    "bpf_env", 7))
		return "already instrumented with GPU eBPF programs";
	if (m->address_size != 64)
		return "32-bit PTX (.address_size 32)";
	if (!ptx_version_at_least(m, 6, 2))
		return "PTX ISA older than 6.2 (GPU eBPF programs need activemask and shfl.sync)";
	if (sm && sm < 70) {
		snprintf(k->reason, sizeof(k->reason),
			 "PTX for sm_%u: GPU eBPF programs need sm_70 or newer", sm);
		return k->reason;
	}
	if (ptx_param_refusal(m, e, k->param_size, "environment parameter", k->reason,
			      sizeof(k->reason)))
		return k->reason;
	if (has_exit && m->func_exits && e->has_call)
		return "calls device functions and some device function executes exit";
	if (!a->p[0])
		return "no free name prefix for the added names";
	return ptx_module_var_refusal(m, e, k->reason, sizeof(k->reason));
}

static int collect_mem_sites(const struct ptx_module *m, const struct ptx_entry *e,
			     struct mem_site **out, size_t *n, unsigned *skipped)
{
	*out = NULL;
	*n = 0;
	if (!e->nr_stmts)
		return 0;
	*out = calloc(e->nr_stmts, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < e->nr_stmts; i++) {
		int r = parse_mem_site(m, e->body_close, e->stmts[i], &(*out)[*n]);

		if (r > 0)
			(*n)++;
		else if (r < 0)
			(*skipped)++;
	}
	return 0;
}

static bool names_collide(const struct ptx_module *m, const struct gpubpf_attach_opts *o, char *err,
			  size_t len)
{
	for (size_t p = 0; p < o->nr_progs; p++) {
		const char *name = o->progs[p].ptx->name;

		for (size_t i = 0; i < m->toks.n; i++)
			if (m->toks.v[i].kind == PTX_TOK_IDENT && tok_starts(m, i, name)) {
				snprintf(err, len, "the module already uses the name %s", name);
				return true;
			}
	}
	return false;
}

static size_t mem_prog_insns(const struct gpubpf_attach_opts *o)
{
	size_t n = 0;

	for (size_t i = 0; i < o->nr_progs; i++)
		if (o->progs[i].attach == GRT_BPF_ATTACH_MEMCAPTURE)
			n += o->progs[i].ptx->ptx_insns + 8;
	return n;
}

/* Module scope: the programs' data and, when memory accesses call them, their .func forms. */
static void emit_module_scope(struct attach *a)
{
	copy_to(a, header_end(a->m));
	strbuf_puts(&a->b, "\n// grtrace GPU eBPF programs\n");
	for (size_t i = 0; i < a->o->nr_progs; i++) {
		const struct gpubpf_translation *t = a->o->progs[i].ptx;

		if (a->call_mem && a->o->progs[i].attach == GRT_BPF_ATTACH_MEMCAPTURE) {
			char *func = gpubpf_translation_func(t, a->hints);

			if (!func)
				a->b.failed = true;
			else
				strbuf_puts(&a->b, func);
			free(func);
		} else if (t->decls) {
			strbuf_puts(&a->b, t->decls);
		}
	}
	strbuf_puts(&a->b, "\n");
}

static int attach_error(struct gpubpf_attach_result *res, int err, const char *msg)
{
	snprintf(res->rw.error, sizeof(res->rw.error), "%s", msg);
	return err;
}

/* Decides kernel i: its result and sites, and its memory sites in *mem; false when left alone. */
static int decide_kernel(struct attach *a, size_t i, unsigned sm, struct mem_site **mem,
			 size_t *nr_mem)
{
	const struct ptx_module *m = a->m;
	const struct ptx_entry *e = &m->entries[i];
	struct ptx_kernel_result *k = &a->res->rw.kernels[i];
	struct gpubpf_kernel_sites *s = &a->res->sites[i];
	bool has_mem = false;
	const char *why;

	*mem = NULL;
	*nr_mem = 0;
	k->name = strndup(ptx_tok_text(m, e->name), m->toks.v[e->name].len);
	if (!k->name)
		return attach_error(a->res, -ENOMEM, "out of memory");
	a->res->rw.nr_kernels++;
	k->nr_params = e->nr_params;
	k->param_index = -1;
	k->param_offset = (e->args_end + 7) & ~7u;
	k->param_size = k->param_offset + 8;
	for (size_t p = 0; p < a->o->nr_progs; p++) {
		const struct gpubpf_attach_prog *pr = &a->o->progs[p];

		if (!prog_matches(pr, k->name))
			continue;
		s->entry += pr->attach == GRT_BPF_ATTACH_ENTRY;
		s->exit += pr->attach == GRT_BPF_ATTACH_EXIT;
		has_mem |= pr->attach == GRT_BPF_ATTACH_MEMCAPTURE;
	}
	why = !s->entry && !s->exit && !has_mem ? "no GPU eBPF program matches"
						: refusal(a, e, s->exit > 0, k, sm);
	if (!why && has_mem && collect_mem_sites(m, e, mem, nr_mem, &s->mem_skipped))
		return attach_error(a->res, -ENOMEM, "out of memory");
	if (!why && !s->entry && !s->exit && !*nr_mem)
		why = "no global memory access to probe";
	if (why) {
		if (why != k->reason)
			snprintf(k->reason, sizeof(k->reason), "%s", why);
		memset(s, 0, sizeof(*s));
		free(*mem);
		*mem = NULL;
		*nr_mem = 0;
		return 0;
	}
	s->mem = (unsigned)*nr_mem;
	k->instrumented = true;
	k->param_index = (int)e->nr_params;
	a->res->rw.nr_instrumented++;
	return 0;
}

static int attach_kernels(struct attach *a)
{
	const struct ptx_module *m = a->m;
	size_t limit = a->o->inline_limit ? a->o->inline_limit : DEFAULT_INLINE_LIMIT;
	size_t total_mem = 0, n = m->nr_entries;
	struct mem_site **mem = calloc(n ? n : 1, sizeof(*mem));
	size_t *nr_mem = calloc(n ? n : 1, sizeof(*nr_mem));
	unsigned sm = module_sm(m);
	int err = mem && nr_mem ? 0 : attach_error(a->res, -ENOMEM, "out of memory");

	for (size_t i = 0; !err && i < n; i++) {
		err = decide_kernel(a, i, sm, &mem[i], &nr_mem[i]);
		total_mem += nr_mem[i];
	}
	/* pasting or calling is decided for the whole module: one .func serves all */
	a->call_mem = total_mem * mem_prog_insns(a->o) > limit;
	if (!err && a->res->rw.nr_instrumented)
		emit_module_scope(a);
	for (size_t i = 0; !err && i < n; i++) {
		struct gpubpf_kernel_sites *s = &a->res->sites[i];

		if (!a->res->rw.kernels[i].instrumented)
			continue;
		s->mem_called = a->call_mem && nr_mem[i];
		rewrite_kernel(a, &m->entries[i], a->res->rw.kernels[i].name,
			       a->o->first_kernel_id + (uint32_t)i, mem[i], nr_mem[i], s,
			       s->exit > 0);
	}
	for (size_t i = 0; mem && i < n; i++)
		free(mem[i]);
	free(mem);
	free(nr_mem);
	return err;
}

int gpubpf_attach(const char *ptx, size_t len, const struct gpubpf_attach_opts *opts,
		  struct gpubpf_attach_result *res)
{
	struct ptx_module m = {0};
	struct ptx_vars_out vars = {0};
	struct attach a = {.m = &m, .o = opts, .res = res};
	int err;

	memset(res, 0, sizeof(*res));
	if (!ptx)
		return attach_error(res, -EINVAL, "no PTX given");
	err = ptx_scan_redirected(ptx, len, &m, &vars);
	if (err) {
		attach_error(res, err, m.error);
		goto out;
	}
	if (names_collide(&m, opts, res->rw.error, sizeof(res->rw.error))) {
		err = -EINVAL;
		goto out;
	}
	a.hints = module_takes_hints(&m);
	if (ptx_choose_prefix(&m, a.p))
		a.p[0] = 0;
	snprintf(res->rw.name_prefix, sizeof(res->rw.name_prefix), "%s", a.p);
	res->rw.kernels = calloc(m.nr_entries ? m.nr_entries : 1, sizeof(*res->rw.kernels));
	res->sites = calloc(m.nr_entries ? m.nr_entries : 1, sizeof(*res->sites));
	if (!res->rw.kernels || !res->sites) {
		err = attach_error(res, -ENOMEM, "out of memory");
		goto out;
	}
	err = attach_kernels(&a);
	if (!err) {
		copy_to(&a, m.toks.len);
		res->rw.ptx = strbuf_take(&a.b, &res->rw.ptx_len);
		if (!res->rw.ptx)
			err = attach_error(res, -ENOMEM, "out of memory writing the module");
	}
	if (!err)
		ptx_vars_hand_over(&vars, &res->rw);
out:
	strbuf_free(&a.b);
	ptx_module_free(&m);
	ptx_vars_out_free(&vars);
	return err;
}

void gpubpf_attach_result_free(struct gpubpf_attach_result *res)
{
	ptx_rewrite_result_free(&res->rw);
	free(res->sites);
	res->sites = NULL;
}
