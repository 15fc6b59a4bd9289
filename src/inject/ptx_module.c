/* The structure of a PTX module the rewriter needs: version, kernels, parameters, exits. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptx_module.h"
#include "ptx_names.h"

static int scan_error(struct ptx_module *m, size_t tok, const char *what)
{
	size_t line = 1;

	if (tok < m->toks.n)
		for (uint32_t i = 0; i < m->toks.v[tok].off; i++)
			line += m->toks.text[i] == '\n';
	snprintf(m->error, sizeof(m->error), "malformed PTX: %s (line %zu)", what, line);
	return -EINVAL;
}

/* The token closing the group opened by token `open` ('(' or '{'), or PTX_NO_TOK. */
static size_t match_close(const struct ptx_toks *t, size_t open, char open_c, char close_c)
{
	size_t depth = 0;

	for (size_t i = open; i < t->n; i++) {
		if (ptx_tok_is_punct(t, i, open_c))
			depth++;
		else if (ptx_tok_is_punct(t, i, close_c) && --depth == 0)
			return i;
	}
	return PTX_NO_TOK;
}

/*
 * Parses an unsigned decimal (or 0x hex) number at s[*pos..len), stopping at
 * the first other character; saturates instead of overflowing. The text is
 * not NUL-terminated, so nothing past len is looked at.
 */
static unsigned parse_uint(const char *s, size_t len, size_t *pos)
{
	unsigned base = 10, v = 0;
	size_t i = *pos;

	if (len - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	}
	for (; i < len; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9'		  ? (unsigned)(c - '0')
			     : base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : base == 16 && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
								  : base;

		if (d >= base)
			break;
		v = v > (UINT32_MAX - d) / base ? UINT32_MAX : v * base + d;
	}
	*pos = i;
	return v;
}

static unsigned tok_number(const struct ptx_module *m, size_t i)
{
	size_t pos = 0;

	if (i >= m->toks.n || m->toks.v[i].kind != PTX_TOK_NUMBER)
		return 0;
	return parse_uint(ptx_tok_text(m, i), m->toks.v[i].len, &pos);
}

uint32_t ptx_type_size(const struct ptx_module *m, size_t i)
{
	static const struct {
		const char *name;
		uint32_t size;
	} types[] = {
	    {".b8", 1},	 {".u8", 1},  {".s8", 1},    {".b16", 2},    {".u16", 2},
	    {".s16", 2}, {".f16", 2}, {".bf16", 2},  {".b32", 4},    {".u32", 4},
	    {".s32", 4}, {".f32", 4}, {".f16x2", 4}, {".bf16x2", 4}, {".b64", 8},
	    {".u64", 8}, {".s64", 8}, {".f64", 8},   {".b128", 16},
	};

	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
		if (ptx_tok_is(&m->toks, i, types[k].name))
			return types[k].size;
	return 0;
}

/* Lays out one parameter [a, b) into the argument buffer; false when its size is unknown. */
static bool param_layout(const struct ptx_module *m, size_t a, size_t b, uint32_t *args_end,
			 size_t *name, struct ptx_param *p)
{
	uint32_t align = 0, size = 0, count = 1;
	bool after_ptr = false;

	for (size_t i = a; i < b; i++) {
		if (ptx_tok_is(&m->toks, i, ".align") && !after_ptr && !size)
			align = tok_number(m, ++i);
		else if (ptx_tok_is(&m->toks, i, ".ptr"))
			after_ptr = true; /* a later .align is the pointee's */
		else if (!size && ptx_type_size(m, i))
			size = ptx_type_size(m, i);
		else if (m->toks.v[i].kind == PTX_TOK_IDENT)
			*name = i;
		else if (ptx_tok_is_punct(&m->toks, i, '[')) {
			uint32_t n = tok_number(m, i + 1);

			if (!n || n > (1u << 20) || count > (1u << 20) / n)
				return false;
			count *= n;
		}
	}
	if (!size || !ptx_tok_is(&m->toks, a, ".param"))
		return false;
	if (!align)
		align = size;
	if (align > 4096 || (align & (align - 1)))
		return false;
	p->offset = (*args_end + align - 1) & ~(align - 1);
	p->size = size;
	p->scalar = count == 1;
	*args_end = p->offset + size * count;
	return *args_end < (1u << 24);
}

static int scan_params(const struct ptx_module *m, struct ptx_entry *e)
{
	size_t start = e->lparen + 1;

	e->unsized_param = -1;
	if (e->lparen == PTX_NO_TOK || start == e->rparen)
		return 0;
	for (size_t i = start; i <= e->rparen; i++) {
		struct ptx_param p = {.name = PTX_NO_TOK};

		if (i < e->rparen && !ptx_tok_is_punct(&m->toks, i, ','))
			continue;
		e->last_param_name = PTX_NO_TOK;
		if (!param_layout(m, start, i, &e->args_end, &e->last_param_name, &p) &&
		    e->unsized_param < 0)
			e->unsized_param = (int)e->nr_params;
		p.name = e->last_param_name;
		if ((e->nr_params & (e->nr_params - 1)) == 0) { /* grow at powers of two */
			struct ptx_param *v =
			    realloc(e->params, (e->nr_params ? e->nr_params * 2 : 1) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			e->params = v;
		}
		e->params[e->nr_params++] = p;
		start = i + 1;
	}
	return 0;
}

const char *ptx_param_refusal(const struct ptx_module *m, const struct ptx_entry *e,
			      uint32_t param_size, const char *what, char *buf, size_t len)
{
	/* Parameter space: 4 KiB, or 32764 bytes from PTX ISA 8.1 (CUDA 12.1) on. */
	uint32_t space = ptx_version_at_least(m, 8, 1) ? 32764u : 4096u;

	if (e->unsized_param >= 0) {
		snprintf(buf, len, "parameter %d has a type that cannot be sized",
			 e->unsized_param);
		return buf;
	}
	if (param_size > space) {
		snprintf(buf, len, "no room for the %s (%u of %u bytes)", what, param_size, space);
		return buf;
	}
	return NULL;
}

static int add_stmt(size_t **stmts, size_t *nr, size_t tok)
{
	if ((*nr & (*nr - 1)) == 0) {
		size_t *v = realloc(*stmts, (*nr ? *nr * 2 : 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		*stmts = v;
	}
	(*stmts)[(*nr)++] = tok;
	return 0;
}

static int add_exit(struct ptx_entry *e, size_t op, size_t semicolon)
{
	struct ptx_exit_site *v;

	if ((e->nr_exits & (e->nr_exits - 1)) == 0) { /* grow at powers of two */
		v = realloc(e->exits, (e->nr_exits ? e->nr_exits * 2 : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		e->exits = v;
	}
	e->exits[e->nr_exits++] = (struct ptx_exit_site){op, semicolon};
	return 0;
}

static bool is_declaration(const struct ptx_module *m, size_t i)
{
	return ptx_tok_is(&m->toks, i, ".reg") || ptx_tok_is(&m->toks, i, ".local") ||
	       ptx_tok_is(&m->toks, i, ".shared") || ptx_tok_is(&m->toks, i, ".param");
}

/* What a body holds: found by walking its statements. */
struct body_walk {
	size_t first_stmt;
	bool has_exit_op; /* an `exit` instruction */
	bool has_call;
	bool barrier0_subset;
	size_t **stmts; /* where the instructions' first tokens go */
	size_t *nr_stmts;
};

/*
 * Whether the instruction at op (bar/barrier) waits on or arrives at barrier
 * 0, or at a barrier named by a register, with a thread count: the block
 * probe's exit barrier is barrier 0 for every thread of the block, and a
 * barrier given two counts at once is undefined (it may never complete).
 * bar.warp.sync is a warp's, not a barrier; bar.red names its destination
 * first.
 */
static bool barrier0_with_count(const struct ptx_module *m, size_t op, size_t close)
{
	const struct ptx_toks *t = &m->toks;
	size_t i = op + 1, operand = 0, id = PTX_NO_TOK;
	bool red = false;

	for (; i < close && t->v[i].kind == PTX_TOK_DIRECTIVE; i++) {
		if (ptx_tok_is(t, i, ".warp"))
			return false;
		red |= ptx_tok_is(t, i, ".red");
	}
	for (; i < close && !ptx_tok_is_punct(t, i, ';'); i++) {
		if (ptx_tok_is_punct(t, i, ','))
			operand++;
		else if (operand == (red ? 1u : 0u) && id == PTX_NO_TOK)
			id = i;
	}
	/* operands: [d,] a[, b][, c]: a count b makes 2 (sync, arrive) or 4 (red) of them */
	if (id == PTX_NO_TOK || operand + 1 < (red ? 4u : 2u))
		return false;
	return t->v[id].kind != PTX_TOK_NUMBER || tok_number(m, id) == 0;
}

/*
 * Handles the statement starting at token i: notes the first non-declaration
 * and ret/exit/call opcodes. `e` is NULL for a .func body.
 */
static int body_statement(struct ptx_module *m, struct ptx_entry *e, struct body_walk *w, size_t i,
			  size_t close)
{
	const struct ptx_toks *t = &m->toks;
	size_t op = i, semi;

	if (w->first_stmt == PTX_NO_TOK && !is_declaration(m, i))
		w->first_stmt = i;
	if (!is_declaration(m, i) && add_stmt(w->stmts, w->nr_stmts, i))
		return -ENOMEM;
	if (ptx_tok_is_punct(t, op, '@')) /* guard: @%p or @!%p */
		op += ptx_tok_is_punct(t, op + 1, '!') ? 3 : 2;
	if (op >= close || t->v[op].kind != PTX_TOK_IDENT)
		return 0;
	if (ptx_tok_is(t, op, "call"))
		w->has_call = true;
	if (ptx_tok_is(t, op, "bar") || ptx_tok_is(t, op, "barrier"))
		w->barrier0_subset |= barrier0_with_count(m, op, close);
	if (!ptx_tok_is(t, op, "ret") && !ptx_tok_is(t, op, "exit"))
		return 0;
	w->has_exit_op |= ptx_tok_is(t, op, "exit");
	for (semi = op + 1; semi < close && !ptx_tok_is_punct(t, semi, ';'); semi++)
		;
	if (semi >= close)
		return scan_error(m, op, "ret/exit without ';'");
	return e ? add_exit(e, op, semi) : 0;
}

/*
 * Walks the statements of a body. Braces opening at a statement start are
 * scopes; others ({%r1, %r2}) are vector operands inside an instruction.
 */
static int scan_body(struct ptx_module *m, size_t open, size_t close, struct ptx_entry *e,
		     struct body_walk *w)
{
	const struct ptx_toks *t = &m->toks;
	uint64_t vector_bits = 0; /* per nesting level: 1 = vector brace */
	unsigned depth = 0;
	bool stmt_start = true;

	w->first_stmt = PTX_NO_TOK;
	for (size_t i = open + 1; i < close; i++) {
		if (ptx_tok_is_punct(t, i, '{')) {
			if (depth >= 63)
				return scan_error(m, i, "braces nested too deeply");
			if (stmt_start && w->first_stmt == PTX_NO_TOK)
				w->first_stmt = i;
			vector_bits = (vector_bits & ~(1ull << depth)) | (uint64_t)!stmt_start
									     << depth;
			depth++;
		} else if (ptx_tok_is_punct(t, i, '}')) {
			if (!depth)
				return scan_error(m, i, "unbalanced '}'");
			depth--;
			stmt_start = !(vector_bits >> depth & 1);
		} else if (ptx_tok_is_punct(t, i, ';')) {
			stmt_start = true;
		} else if (stmt_start && t->v[i].kind == PTX_TOK_IDENT &&
			   ptx_tok_is_punct(t, i + 1, ':')) {
			if (w->first_stmt == PTX_NO_TOK)
				w->first_stmt = i; /* a label: code starts here */
			i++;
		} else if (stmt_start) {
			int err = body_statement(m, e, w, i, close);

			if (err)
				return err;
			stmt_start = false;
		}
	}
	if (w->first_stmt == PTX_NO_TOK)
		w->first_stmt = close;
	return 0;
}

/* Parses `.entry`/`.func` at token i; returns the token after it, or PTX_NO_TOK on error. */
static size_t scan_function(struct ptx_module *m, size_t i, bool is_entry, int *err)
{
	const struct ptx_toks *t = &m->toks;
	struct ptx_entry e = {.lparen = PTX_NO_TOK,
			      .rparen = PTX_NO_TOK,
			      .body_open = PTX_NO_TOK,
			      .body_close = PTX_NO_TOK,
			      .last_param_name = PTX_NO_TOK,
			      .unsized_param = -1};
	struct ptx_func f = {.body_open = PTX_NO_TOK, .body_close = PTX_NO_TOK};
	struct body_walk w = {0};
	size_t j = i + 1;

	if (!is_entry && ptx_tok_is_punct(t, j, '(')) { /* return value list */
		j = match_close(t, j, '(', ')');
		if (j == PTX_NO_TOK) {
			*err = scan_error(m, i, "unclosed '(' in .func");
			return PTX_NO_TOK;
		}
		j++;
	}
	if (j >= t->n || t->v[j].kind != PTX_TOK_IDENT) {
		*err =
		    scan_error(m, i, is_entry ? ".entry without a name" : ".func without a name");
		return PTX_NO_TOK;
	}
	e.name = j++;
	if (ptx_tok_is_punct(t, j, '(')) {
		e.lparen = j;
		e.rparen = match_close(t, j, '(', ')');
		if (e.rparen == PTX_NO_TOK) {
			*err = scan_error(m, j, "unclosed parameter list");
			return PTX_NO_TOK;
		}
		j = e.rparen + 1;
	}
	/* Performance directives (.maxntid, .reqntid, ...) until the body or ';'. */
	while (j < t->n && !ptx_tok_is_punct(t, j, '{') && !ptx_tok_is_punct(t, j, ';') &&
	       !(t->v[j].kind == PTX_TOK_DIRECTIVE &&
		 (ptx_tok_is(t, j, ".entry") || ptx_tok_is(t, j, ".func"))))
		j++;
	if (ptx_tok_is_punct(t, j, '{')) {
		e.body_open = j;
		e.body_close = match_close(t, j, '{', '}');
		if (e.body_close == PTX_NO_TOK) {
			*err = scan_error(m, j, "unclosed function body");
			return PTX_NO_TOK;
		}
		w.stmts = is_entry ? &e.stmts : &f.stmts;
		w.nr_stmts = is_entry ? &e.nr_stmts : &f.nr_stmts;
		*err = scan_body(m, e.body_open, e.body_close, is_entry ? &e : NULL, &w);
		if (*err) {
			free(e.exits);
			free(e.stmts);
			free(f.stmts);
			return PTX_NO_TOK;
		}
		j = e.body_close + 1;
	}
	e.barrier0_subset = w.barrier0_subset;
	if (!is_entry) {
		m->func_exits |= w.has_exit_op;
		m->func_barrier0_subset |= w.barrier0_subset;
		if (e.body_open == PTX_NO_TOK)
			return j;
		f.name = e.name;
		f.body_open = e.body_open;
		f.body_close = e.body_close;
		if ((m->nr_funcs & (m->nr_funcs - 1)) == 0) {
			struct ptx_func *v =
			    realloc(m->funcs, (m->nr_funcs ? m->nr_funcs * 2 : 1) * sizeof(*v));

			if (!v) {
				free(f.stmts);
				*err = -ENOMEM;
				snprintf(m->error, sizeof(m->error), "out of memory scanning functions");
				return PTX_NO_TOK;
			}
			m->funcs = v;
		}
		m->funcs[m->nr_funcs++] = f;
		return j;
	}
	e.first_stmt = w.first_stmt;
	e.has_call = w.has_call;
	if (scan_params(m, &e)) {
		free(e.exits);
		free(e.stmts);
		free(e.params);
		*err = -ENOMEM;
		snprintf(m->error, sizeof(m->error), "out of memory scanning parameters");
		return PTX_NO_TOK;
	}
	if ((m->nr_entries & (m->nr_entries - 1)) == 0) {
		struct ptx_entry *v =
		    realloc(m->entries, (m->nr_entries ? m->nr_entries * 2 : 1) * sizeof(*v));
		if (!v) {
			free(e.exits);
			free(e.stmts);
			free(e.params);
			*err = -ENOMEM;
			snprintf(m->error, sizeof(m->error), "out of memory scanning kernels");
			return PTX_NO_TOK;
		}
		m->entries = v;
	}
	m->entries[m->nr_entries++] = e;
	return j;
}

/* Reasons a variable's uses cannot be redirected to the application's instance by address. */
static const char unsup_ref[] = "a texture, surface or sampler reference, not shareable by address";
static const char unsup_init[] = "whose initializer holds another variable's address";
static const char unsup_list[] = "declared in a list with other variables";
static const char unsup_bank[] = "in a numbered constant bank";

static bool is_linkage(const struct ptx_module *m, size_t i)
{
	return ptx_tok_is(&m->toks, i, ".visible") || ptx_tok_is(&m->toks, i, ".extern") ||
	       ptx_tok_is(&m->toks, i, ".weak") || ptx_tok_is(&m->toks, i, ".common");
}

static int push_var(struct ptx_module *m, const struct ptx_var *v)
{
	if ((m->nr_vars & (m->nr_vars - 1)) == 0) {
		struct ptx_var *nv =
		    realloc(m->vars, (m->nr_vars ? m->nr_vars * 2 : 1) * sizeof(*nv));

		if (!nv) {
			snprintf(m->error, sizeof(m->error), "out of memory scanning variables");
			return -ENOMEM;
		}
		m->vars = nv;
	}
	m->vars[m->nr_vars++] = *v;
	m->var_lengths |= 1ull << (m->toks.v[v->name].len & 63);
	return 0;
}

/*
 * Notes the variable(s) that the .const/.global/.tex directive at token i
 * declares: `[linkage] .space [.align N] .type name[dims] [= init];`.
 * Returns the token after the declaration.
 */
static size_t scan_variable(struct ptx_module *m, size_t i, int *err)
{
	const struct ptx_toks *t = &m->toks;
	struct ptx_var v = {.name = PTX_NO_TOK, .decl = i, .constant = ptx_tok_is(t, i, ".const")};
	uint32_t type = 0, count = 1;
	unsigned braces = 0;
	bool init = false, list = false;
	size_t j;

	while (v.decl > 0 && is_linkage(m, v.decl - 1))
		v.decl--;
	if (ptx_tok_is(t, i, ".tex"))
		v.unsupported = unsup_ref;
	if (ptx_tok_is_punct(t, i + 1, '['))
		v.unsupported = unsup_bank;
	for (j = i + 1; j < t->n && !(ptx_tok_is_punct(t, j, ';') && !braces); j++) {
		if (ptx_tok_is_punct(t, j, '{'))
			braces++;
		else if (ptx_tok_is_punct(t, j, '}') && braces)
			braces--;
		else if (ptx_tok_is_punct(t, j, '='))
			init = true;
		else if (ptx_tok_is_punct(t, j, ',') && !braces)
			list = true, init = false; /* `a, b` or `a = 1, b = 2` */
		else if (init || v.name != PTX_NO_TOK || braces)
			continue;
		else if (ptx_tok_is(t, j, ".texref") || ptx_tok_is(t, j, ".surfref") ||
			 ptx_tok_is(t, j, ".samplerref"))
			v.unsupported = unsup_ref;
		else if (ptx_tok_is(t, j, ".align"))
			j++;
		else if (!type && ptx_type_size(m, j))
			type = ptx_type_size(m, j);
		else if (t->v[j].kind == PTX_TOK_IDENT)
			v.name = j;
	}
	v.semicolon = j;
	if (v.name == PTX_NO_TOK || j >= t->n)
		return j;
	/* nvcc's printf format strings ($str, $str$1, ...): constant data, safe to duplicate */
	if (t->v[v.name].len >= 4 && !memcmp(ptx_tok_text(m, v.name), "$str", 4))
		return j;
	/* an address slot of grtrace's own, added by an earlier rewrite */
	if (v.constant && type == 8 && !init && !list &&
	    !ptx_tok_is_punct(t, v.name + 1, '[') &&
	    ptx_is_var_slot(ptx_tok_text(m, v.name), t->v[v.name].len))
		return j;
	for (size_t k = v.name + 1; k < j && ptx_tok_is_punct(t, k, '['); k += 3) {
		uint32_t n = tok_number(m, k + 1);

		count = n && ptx_tok_is_punct(t, k + 2, ']') && count <= (1u << 30) / n ? count * n
											: 0;
		if (!ptx_tok_is_punct(t, k + 2, ']'))
			break;
	}
	v.size = type && count <= UINT32_MAX / type ? type * count : 0;
	if (list)
		v.unsupported = unsup_list;
	*err = push_var(m, &v);
	/* the other names of a list share its declaration and its refusal */
	for (size_t k = v.name + 1; !*err && list && k < j; k++)
		if (ptx_tok_is_punct(t, k, ',') && t->v[k + 1].kind == PTX_TOK_IDENT) {
			struct ptx_var other = v;

			other.name = k + 1;
			*err = push_var(m, &other);
		}
	return j;
}

/* Orders names by length, then bytes: tokens a and b of module m. */
static int name_cmp(const struct ptx_module *m, size_t a, size_t b)
{
	uint32_t la = m->toks.v[a].len, lb = m->toks.v[b].len;

	if (la != lb)
		return la < lb ? -1 : 1;
	return memcmp(ptx_tok_text(m, a), ptx_tok_text(m, b), la);
}

static int var_order_cmp(const void *a, const void *b, void *module)
{
	const struct ptx_module *m = module;

	return name_cmp(m, m->vars[*(const size_t *)a].name, m->vars[*(const size_t *)b].name);
}

/* Every identifier of a module is looked up: a sorted index, not a walk over the variables. */
static int index_variables(struct ptx_module *m)
{
	if (!m->nr_vars)
		return 0;
	m->var_order = malloc(m->nr_vars * sizeof(*m->var_order));
	if (!m->var_order) {
		snprintf(m->error, sizeof(m->error), "out of memory scanning variables");
		return -ENOMEM;
	}
	for (size_t v = 0; v < m->nr_vars; v++)
		m->var_order[v] = v;
	qsort_r(m->var_order, m->nr_vars, sizeof(*m->var_order), var_order_cmp, m);
	return 0;
}

const struct ptx_var *ptx_var_named(const struct ptx_module *m, size_t tok)
{
	const struct ptx_toks *t = &m->toks;
	size_t lo = 0, hi = m->nr_vars;

	if (tok >= t->n || t->v[tok].kind != PTX_TOK_IDENT || !m->var_order)
		return NULL;
	if (!(m->var_lengths >> (t->v[tok].len & 63) & 1))
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ptx_var *v = &m->vars[m->var_order[mid]];
		int c = name_cmp(m, tok, v->name);

		if (!c)
			return v;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* A variable whose initializer names another variable holds its address. */
static void check_initializers(struct ptx_module *m)
{
	const struct ptx_toks *t = &m->toks;

	for (size_t v = 0; v < m->nr_vars; v++) {
		struct ptx_var *var = &m->vars[v];
		size_t k = var->name;

		while (k < var->semicolon && !ptx_tok_is_punct(t, k, '='))
			k++;
		for (; k < var->semicolon && !var->unsupported; k++) {
			const struct ptx_var *named = ptx_var_named(m, k);

			if (named && named != var)
				var->unsupported = unsup_init;
		}
	}
}

/* The first variable that tokens [from, to) name, unsupported ones only when asked. */
static const struct ptx_var *first_named(const struct ptx_module *m, size_t from, size_t to,
					 bool unsupported)
{
	for (size_t i = from; i < to; i++) {
		const struct ptx_var *v = ptx_var_named(m, i);

		if (v && v->name != i && (!unsupported || v->unsupported))
			return v;
	}
	return NULL;
}

const char *ptx_module_var_refusal(const struct ptx_module *m, const struct ptx_entry *e, char *buf,
				   size_t len)
{
	const struct ptx_var *v = NULL;

	if (!m->nr_vars || e->body_open == PTX_NO_TOK)
		return NULL;
	/* a kernel that calls device functions: any use in a device function may be on its path */
	for (int pass = 0; pass < 2 && !v; pass++) {
		v = first_named(m, e->body_open, e->body_close, !pass);
		for (size_t f = 0; e->has_call && !v && f < m->nr_funcs; f++)
			v = first_named(m, m->funcs[f].body_open, m->funcs[f].body_close, !pass);
	}
	if (!v)
		return NULL;
	snprintf(buf, len, "uses module variable '%.*s', %s", (int)m->toks.v[v->name].len,
		 ptx_tok_text(m, v->name),
		 v->unsupported ? v->unsupported : "which a rewritten copy would not share");
	return buf;
}

static void scan_version(struct ptx_module *m, size_t i)
{
	const char *s;
	size_t len, pos = 0;

	if (i >= m->toks.n || m->toks.v[i].kind != PTX_TOK_NUMBER)
		return;
	s = ptx_tok_text(m, i);
	len = m->toks.v[i].len;
	m->version_major = parse_uint(s, len, &pos);
	if (pos < len && s[pos] == '.') {
		pos++;
		m->version_minor = parse_uint(s, len, &pos);
	}
}

int ptx_module_scan(const char *text, size_t len, struct ptx_module *m)
{
	const struct ptx_toks *t = &m->toks;
	int depth = 0, err = ptx_lex(text, len, &m->toks);
	bool have_version = false;

	m->address_size = 64;
	if (err) {
		snprintf(m->error, sizeof(m->error), "%s",
			 err == -E2BIG ? "PTX module too large" : "out of memory tokenizing PTX");
		return err;
	}
	for (size_t i = 0; i < t->n;) {
		if (ptx_tok_is_punct(t, i, '{'))
			depth++;
		else if (ptx_tok_is_punct(t, i, '}') && --depth < 0)
			return scan_error(m, i, "unbalanced '}'");
		if (depth || t->v[i].kind != PTX_TOK_DIRECTIVE) {
			i++;
			continue;
		}
		if (ptx_tok_is(t, i, ".version")) {
			have_version = true;
			scan_version(m, i + 1);
		} else if (ptx_tok_is(t, i, ".address_size")) {
			m->address_size = tok_number(m, i + 1);
		} else if (ptx_tok_is(t, i, ".entry") || ptx_tok_is(t, i, ".func")) {
			i = scan_function(m, i, ptx_tok_is(t, i, ".entry"), &err);
			if (err)
				return err;
			continue;
		} else if (ptx_tok_is(t, i, ".const") || ptx_tok_is(t, i, ".global") ||
			   ptx_tok_is(t, i, ".tex")) {
			i = scan_variable(m, i, &err);
			if (err)
				return err;
			continue;
		}
		i++;
	}
	if (depth)
		return scan_error(m, t->n ? t->n - 1 : 0, "unbalanced '{'");
	if (!have_version) {
		snprintf(m->error, sizeof(m->error), "not PTX: no .version directive");
		return -EINVAL;
	}
	err = index_variables(m);
	if (!err)
		check_initializers(m);
	return err;
}

void ptx_module_free(struct ptx_module *m)
{
	for (size_t i = 0; i < m->nr_entries; i++) {
		free(m->entries[i].exits);
		free(m->entries[i].stmts);
		free(m->entries[i].params);
	}
	for (size_t i = 0; i < m->nr_funcs; i++)
		free(m->funcs[i].stmts);
	free(m->entries);
	free(m->funcs);
	free(m->vars);
	free(m->var_order);
	ptx_toks_free(&m->toks);
	memset(m, 0, sizeof(*m));
}
