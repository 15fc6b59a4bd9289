/* The structure of a PTX module the rewriter needs: version, kernels, parameters, exits. */
#ifndef GRT_PTX_MODULE_H
#define GRT_PTX_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ptx_lex.h"

#define PTX_NO_TOK SIZE_MAX

/* A `ret` or `exit` instruction of a kernel body. */
struct ptx_exit_site {
	size_t op;	  /* the opcode token */
	size_t semicolon; /* the token ending the instruction */
};

/* One parameter of an `.entry`. */
struct ptx_param {
	size_t name;	 /* its token, PTX_NO_TOK when it has none */
	uint32_t offset; /* in the argument buffer */
	uint32_t size;	 /* bytes of one element; 0 when unknown */
	bool scalar;	 /* a single value (no array), so ld.param can read it whole */
};

/* One `.entry` (all indices are token indices). */
struct ptx_entry {
	size_t name;
	size_t lparen, rparen;	      /* PTX_NO_TOK when there is no parameter list */
	size_t body_open, body_close; /* PTX_NO_TOK for a declaration without body */
	size_t first_stmt;	      /* first statement after the leading declarations */
	unsigned nr_params;
	size_t last_param_name; /* PTX_NO_TOK when no params */
	int unsized_param;	/* index of a parameter whose size is unknown, or -1 */
	uint32_t args_end;	/* bytes of the argument buffer before rewriting */
	struct ptx_exit_site *exits;
	size_t nr_exits;
	bool has_call;
	bool barrier0_subset; /* a barrier instruction on barrier 0 (or a register) with a count */
	struct ptx_param *params; /* nr_params of them */
	size_t *stmts;		  /* first token (guard included) of every instruction */
	size_t nr_stmts;
};

/* One `.func` with a body. */
struct ptx_func {
	size_t name;
	size_t body_open, body_close;
	size_t *stmts; /* first token (guard included) of every instruction */
	size_t nr_stmts;
};

/*
 * A .const, .global or .tex variable of the module (not nvcc's printf
 * strings, not the address slots ptx_module_vars.c adds). A rewritten copy
 * of the module gets its own instances, which the host's cudaMemcpyToSymbol
 * never reaches, unless its uses are redirected to the application's.
 */
struct ptx_var {
	size_t name;	    /* its token */
	size_t decl;	    /* first token of its declaration (.visible, .extern, ... included) */
	size_t semicolon;   /* the token ending the declaration */
	bool constant;	    /* .const: its instructions name the .const state space */
	uint32_t size;	    /* bytes as declared, 0 when the declaration does not say */
	const char *unsupported; /* why its uses cannot be redirected by address, or NULL */
};

struct ptx_module {
	struct ptx_toks toks;
	unsigned version_major, version_minor;
	unsigned address_size; /* 64 unless .address_size says otherwise */
	bool func_exits;       /* some .func body executes `exit` */
	bool func_barrier0_subset; /* some .func body: a barrier on barrier 0 with a count */
	struct ptx_var *vars;
	size_t nr_vars;
	uint64_t var_lengths; /* bit (len & 63) set for the length of each variable's name */
	size_t *var_order;    /* vars by name (length, then bytes): ptx_var_named() searches it */
	struct ptx_func *funcs;
	size_t nr_funcs;
	struct ptx_entry *entries;
	size_t nr_entries;
	char error[128];
};

/*
 * Tokenizes and scans a module. Returns 0, or -EINVAL (not PTX: no .version,
 * unbalanced braces, an .entry without a name) / -E2BIG / -ENOMEM with
 * m->error set. Free with ptx_module_free() in every case.
 */
int ptx_module_scan(const char *text, size_t len, struct ptx_module *m);
void ptx_module_free(struct ptx_module *m);

/* The module's .version is at least major.minor. */
static inline bool ptx_version_at_least(const struct ptx_module *m, unsigned major, unsigned minor)
{
	return m->version_major > major || (m->version_major == major && m->version_minor >= minor);
}

/*
 * Why kernel e cannot take one more parameter (its `what`, making the
 * argument buffer param_size bytes), written into buf: a parameter of
 * unknown size, or the parameter space full (4 KiB, 32764 bytes from PTX ISA
 * 8.1). NULL when it can.
 */
const char *ptx_param_refusal(const struct ptx_module *m, const struct ptx_entry *e,
			      uint32_t param_size, const char *what, char *buf, size_t len);

/*
 * Why kernel e must not run from a rewritten copy of its module: it (or a
 * device function, when it calls one) names a variable of the module, whose
 * copy would not be the one the application writes and reads. Variables
 * that cannot be redirected (struct ptx_var.unsupported) are named first.
 * Written into buf; NULL when the kernel names none. ptx_module_vars.h
 * redirects the others, after which the kernel names none of them.
 */
const char *ptx_module_var_refusal(const struct ptx_module *m, const struct ptx_entry *e, char *buf,
				   size_t len);

/* The variable token i names, or NULL. */
const struct ptx_var *ptx_var_named(const struct ptx_module *m, size_t i);

/* Bytes of a scalar PTX type directive at token i (".u32" -> 4), 0 when it is not one. */
uint32_t ptx_type_size(const struct ptx_module *m, size_t i);

/* The text of token i (not NUL-terminated) and its length. */
static inline const char *ptx_tok_text(const struct ptx_module *m, size_t i)
{
	return m->toks.text + m->toks.v[i].off;
}

/* Byte offsets of token i's first byte and of the byte after it. */
static inline size_t ptx_tok_off(const struct ptx_module *m, size_t i)
{
	return m->toks.v[i].off;
}

static inline size_t ptx_tok_end(const struct ptx_module *m, size_t i)
{
	return m->toks.v[i].off + m->toks.v[i].len;
}

#endif
