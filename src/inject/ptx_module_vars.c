/* Redirecting a module's variables to the application's instances, through address slots. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptx_module_vars.h"
#include "ptx_names.h"
#include "ptx_strbuf.h"

/* A function body, .entry or .func. */
struct body {
	size_t open, close;
	const size_t *stmts;
	size_t nr_stmts;
	long entry; /* index in m->entries, -1 for a .func */
	bool pinned; /* names a variable that cannot be redirected: left as it is */
	unsigned regs; /* most redirected operands in one of its instructions */
};

struct redirect {
	const struct ptx_module *m;
	struct body *bodies;
	size_t nr_bodies;
	unsigned char *named;  /* nr_bodies x nr_vars: body b names variable v */
	size_t *rewritten;     /* per variable: uses in instructions that get redirected */
	size_t *total;	       /* per variable: every token naming it, its declaration's included */
	long *slot;	       /* per variable: its slot, -1 for none */
	char p[PTX_PREFIX_MAX];
	struct strbuf b;
	size_t copied;
};

/* Every body in text order: the .entry and .func lists merged. */
static int collect_bodies(struct redirect *r)
{
	const struct ptx_module *m = r->m;
	size_t e = 0, f = 0;

	r->bodies = calloc(m->nr_entries + m->nr_funcs + 1, sizeof(*r->bodies));
	if (!r->bodies)
		return -ENOMEM;
	while (e < m->nr_entries || f < m->nr_funcs) {
		const struct ptx_entry *en = e < m->nr_entries ? &m->entries[e] : NULL;
		const struct ptx_func *fn = f < m->nr_funcs ? &m->funcs[f] : NULL;
		struct body *b = &r->bodies[r->nr_bodies];

		if (en && en->body_open == PTX_NO_TOK) {
			e++;
			continue;
		}
		if (en && (!fn || en->body_open < fn->body_open)) {
			*b = (struct body){en->body_open, en->body_close, en->stmts, en->nr_stmts,
					   (long)e++};
		} else {
			*b = (struct body){fn->body_open, fn->body_close, fn->stmts, fn->nr_stmts,
					   -1};
			f++;
		}
		r->nr_bodies++;
	}
	return 0;
}

/* The token ending the instruction that starts at token s of body b. */
static size_t stmt_end(const struct ptx_module *m, const struct body *b, size_t s)
{
	while (s < b->close && !ptx_tok_is_punct(&m->toks, s, ';'))
		s++;
	return s;
}

static size_t var_index(const struct ptx_module *m, const struct ptx_var *v)
{
	return (size_t)(v - m->vars);
}

/* What each body names; which bodies stay as they are; what each variable needs. */
static void survey(struct redirect *r)
{
	const struct ptx_module *m = r->m;

	for (size_t i = 0; i < m->toks.n; i++) {
		const struct ptx_var *v = ptx_var_named(m, i);

		if (v)
			r->total[var_index(m, v)]++;
	}
	for (size_t bi = 0; bi < r->nr_bodies; bi++) {
		struct body *b = &r->bodies[bi];
		unsigned char *named = r->named + bi * m->nr_vars;

		for (size_t i = b->open; i < b->close; i++) {
			const struct ptx_var *v = ptx_var_named(m, i);

			if (v)
				named[var_index(m, v)] = 1;
			b->pinned |= v && v->unsupported;
		}
		for (size_t s = 0; !b->pinned && s < b->nr_stmts; s++) {
			size_t end = stmt_end(m, b, b->stmts[s]);
			unsigned regs = 0;

			for (size_t i = b->stmts[s]; i < end; i++) {
				const struct ptx_var *v = ptx_var_named(m, i);

				if (!v)
					continue;
				r->rewritten[var_index(m, v)]++;
				regs++;
			}
			if (regs > b->regs)
				b->regs = regs;
		}
	}
}

static void copy_to(struct redirect *r, size_t off)
{
	if (off > r->copied) {
		strbuf_add(&r->b, r->m->toks.text + r->copied, off - r->copied);
		r->copied = off;
	}
}

static void tok_puts(struct redirect *r, size_t tok)
{
	strbuf_add(&r->b, ptx_tok_text(r->m, tok), r->m->toks.v[tok].len);
}

/* The slot's declaration: in place of the variable's, or after it when that one stays. */
static void emit_slot_decl(struct redirect *r, const struct ptx_var *v)
{
	const struct ptx_module *m = r->m;
	bool keep = r->total[var_index(m, v)] != r->rewritten[var_index(m, v)] + 1;

	if (keep) {
		copy_to(r, ptx_tok_end(m, v->semicolon));
		strbuf_puts(&r->b, "\n");
	} else {
		copy_to(r, ptx_tok_off(m, v->decl));
		r->copied = ptx_tok_end(m, v->semicolon);
	}
	strbuf_printf(&r->b, ".visible .const .align 8 .u64 %svar_", r->p);
	tok_puts(r, v->name);
	strbuf_puts(&r->b, ";");
}

/* How an operand naming a variable reads: the tokens it spans and what it adds. */
struct operand {
	size_t first, last; /* tokens replaced by the register */
	size_t offset;	    /* X+N / X-N outside brackets: the number's token, or PTX_NO_TOK */
	bool negative;
};

static struct operand operand_at(const struct ptx_module *m, size_t i, size_t end)
{
	const struct ptx_toks *t = &m->toks;
	struct operand o = {i, i, PTX_NO_TOK, false};
	size_t n = i + 1;

	if (ptx_tok_is_punct(t, i - 1, '[')) /* [X], [X+8]: the offset stays in the address */
		return o;
	if (!ptx_tok_is_punct(t, n, '+') && !ptx_tok_is_punct(t, n, '-'))
		return o;
	o.negative = ptx_tok_is_punct(t, n, '-');
	if (ptx_tok_is_punct(t, n + 1, '-')) { /* X+-8 */
		o.negative = !o.negative;
		n++;
	}
	if (n + 1 < end && t->v[n + 1].kind == PTX_TOK_NUMBER) {
		o.offset = n + 1;
		o.last = n + 1;
	}
	return o;
}

/* Loads variable v's address into %<p>va<reg>, before the instruction. */
static void emit_load(struct redirect *r, const struct ptx_var *v, unsigned reg,
		      const struct operand *o)
{
	strbuf_printf(&r->b, "ld.const.u64 %%%sva%u, [%svar_", r->p, reg, r->p);
	tok_puts(r, v->name);
	strbuf_puts(&r->b, "];\n\t");
	strbuf_printf(&r->b, "cvta.to.global.u64 %%%sva%u, %%%sva%u;\n\t", r->p, reg, r->p, reg);
	if (o->offset != PTX_NO_TOK) {
		strbuf_printf(&r->b, "%s.s64 %%%sva%u, %%%sva%u, ", o->negative ? "sub" : "add",
			      r->p, reg, r->p, reg);
		tok_puts(r, o->offset);
		strbuf_puts(&r->b, ";\n\t");
	}
}

/* One instruction of a redirected body: loads first, then its operands and state spaces. */
static void emit_stmt(struct redirect *r, const struct body *b, size_t s)
{
	const struct ptx_module *m = r->m;
	size_t end = stmt_end(m, b, s);
	unsigned reg = 0;

	copy_to(r, ptx_tok_off(m, s));
	for (size_t i = s; i < end; i++) {
		const struct ptx_var *v = ptx_var_named(m, i);

		if (v) {
			struct operand o = operand_at(m, i, end);

			emit_load(r, v, reg++, &o);
		}
	}
	reg = 0;
	for (size_t i = s; i < end; i++) {
		const struct ptx_var *v = ptx_var_named(m, i);

		if (ptx_tok_is(&m->toks, i, ".const")) {
			copy_to(r, ptx_tok_off(m, i));
			strbuf_puts(&r->b, ".global");
			r->copied = ptx_tok_end(m, i);
		} else if (v) {
			struct operand o = operand_at(m, i, end);

			copy_to(r, ptx_tok_off(m, o.first));
			strbuf_printf(&r->b, "%%%sva%u", r->p, reg++);
			r->copied = ptx_tok_end(m, o.last);
			i = o.last;
		}
	}
}

static void emit_body(struct redirect *r, const struct body *b)
{
	if (b->pinned)
		return;
	copy_to(r, ptx_tok_end(r->m, b->open));
	if (b->regs)
		strbuf_printf(&r->b, "\n\t.reg .b64 %%%sva<%u>;", r->p, b->regs);
	for (size_t s = 0; s < b->nr_stmts; s++)
		emit_stmt(r, b, b->stmts[s]);
}

/* Declarations and bodies, in text order. */
static void emit_module(struct redirect *r)
{
	const struct ptx_module *m = r->m;
	size_t v = 0, bi = 0;

	while (v < m->nr_vars || bi < r->nr_bodies) {
		if (v < m->nr_vars &&
		    (bi == r->nr_bodies || m->vars[v].decl < r->bodies[bi].open)) {
			if (r->slot[v] >= 0)
				emit_slot_decl(r, &m->vars[v]);
			v++;
		} else {
			emit_body(r, &r->bodies[bi++]);
		}
	}
	copy_to(r, m->toks.len);
}

static int add_slot(struct redirect *r, struct ptx_vars_out *out, size_t v)
{
	const struct ptx_module *m = r->m;
	const struct ptx_var *var = &m->vars[v];
	struct ptx_var_slot *s = &out->slots[out->nr_slots];

	s->var = strndup(ptx_tok_text(m, var->name), m->toks.v[var->name].len);
	if (s->var &&
	    asprintf(&s->slot, "%svar_%.*s", r->p, (int)m->toks.v[var->name].len,
		     ptx_tok_text(m, var->name)) < 0)
		s->slot = NULL;
	s->size = var->size;
	if (!s->var || !s->slot) {
		free(s->var);
		return -ENOMEM;
	}
	r->slot[v] = (long)out->nr_slots++;
	return 0;
}

/* Each kernel's slots: those its body names, and every .func's when it calls any. */
static int kernel_reach(struct redirect *r, struct ptx_vars_out *out)
{
	const struct ptx_module *m = r->m;

	out->nr_entries = m->nr_entries;
	out->reach = calloc(m->nr_entries + 1, sizeof(*out->reach));
	out->nr_reach = calloc(m->nr_entries + 1, sizeof(*out->nr_reach));
	if (!out->reach || !out->nr_reach)
		return -ENOMEM;
	for (size_t bi = 0; bi < r->nr_bodies; bi++) {
		const struct body *b = &r->bodies[bi];
		size_t e = (size_t)b->entry;

		if (b->entry < 0)
			continue;
		out->reach[e] = calloc(out->nr_slots, sizeof(**out->reach));
		if (!out->reach[e])
			return -ENOMEM;
		for (size_t v = 0; v < m->nr_vars; v++) {
			bool reached = r->named[bi * m->nr_vars + v];

			for (size_t f = 0; !reached && m->entries[e].has_call && f < r->nr_bodies;
			     f++)
				reached = r->bodies[f].entry < 0 && r->named[f * m->nr_vars + v];
			if (reached && r->slot[v] >= 0)
				out->reach[e][out->nr_reach[e]++] = (uint32_t)r->slot[v];
		}
	}
	return 0;
}

static int redirect_vars(struct redirect *r, struct ptx_vars_out *out)
{
	const struct ptx_module *m = r->m;
	size_t nv = m->nr_vars;
	int err;

	r->named = calloc(r->nr_bodies * nv + 1, 1);
	r->rewritten = calloc(nv, sizeof(*r->rewritten));
	r->total = calloc(nv, sizeof(*r->total));
	r->slot = calloc(nv, sizeof(*r->slot));
	out->slots = calloc(nv, sizeof(*out->slots));
	if (!r->named || !r->rewritten || !r->total || !r->slot || !out->slots)
		return -ENOMEM;
	survey(r);
	for (size_t v = 0; v < nv; v++)
		r->slot[v] = -1;
	/* no name free for the slots: nothing is redirected, the kernels are refused */
	if (ptx_choose_prefix(m, r->p))
		return 0;
	for (size_t v = 0; v < nv; v++)
		if (!m->vars[v].unsupported && r->rewritten[v] && (err = add_slot(r, out, v)))
			return err;
	if (!out->nr_slots)
		return 0;
	err = kernel_reach(r, out);
	if (err)
		return err;
	emit_module(r);
	out->ptx = strbuf_take(&r->b, &out->len);
	return out->ptx ? 0 : -ENOMEM;
}

int ptx_vars_redirect(const struct ptx_module *m, struct ptx_vars_out *out)
{
	struct redirect r = {.m = m};
	int err;

	memset(out, 0, sizeof(*out));
	if (!m->nr_vars)
		return 0;
	err = collect_bodies(&r);
	if (!err)
		err = redirect_vars(&r, out);
	free(r.bodies);
	free(r.named);
	free(r.rewritten);
	free(r.total);
	free(r.slot);
	strbuf_free(&r.b);
	if (err)
		ptx_vars_out_free(out);
	return err;
}

void ptx_vars_out_free(struct ptx_vars_out *out)
{
	for (size_t i = 0; out->slots && i < out->nr_slots; i++) {
		free(out->slots[i].var);
		free(out->slots[i].slot);
	}
	for (size_t e = 0; out->reach && e < out->nr_entries; e++)
		free(out->reach[e]);
	free(out->slots);
	free(out->reach);
	free(out->nr_reach);
	free(out->ptx);
	memset(out, 0, sizeof(*out));
}

int ptx_scan_redirected(const char *ptx, size_t len, struct ptx_module *m,
			struct ptx_vars_out *out)
{
	int err = ptx_module_scan(ptx, len, m);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	err = ptx_vars_redirect(m, out);
	if (err) {
		snprintf(m->error, sizeof(m->error), "out of memory redirecting module variables");
		return err;
	}
	if (!out->ptx)
		return 0;
	ptx_module_free(m);
	return ptx_module_scan(out->ptx, out->len, m);
}

void ptx_vars_hand_over(struct ptx_vars_out *out, struct ptx_rewrite_result *res)
{
	res->slots = out->slots;
	res->nr_slots = out->nr_slots;
	out->slots = NULL;
	out->nr_slots = 0;
	for (size_t i = 0; i < res->nr_kernels && i < out->nr_entries; i++) {
		res->kernels[i].slots = out->reach[i];
		res->kernels[i].nr_slots = out->nr_reach[i];
		out->reach[i] = NULL;
	}
}
