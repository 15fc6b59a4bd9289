/* The gate before a program runs on the GPU: every path bounded, every access proven safe. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/bpf_verifier_state.h"

/*
 * The GPU cannot preempt a kernel, so a program that loops forever hangs the
 * application. The control-flow graph must therefore be acyclic (loops are
 * unrolled by the compiler, #pragma unroll), which also bounds the explored
 * paths. Every path is then walked with an abstract state (register kinds,
 * value ranges, stack contents), as the kernel's verifier does, pruning a
 * path when a state already verified at a jump target covers it.
 */

#define MAX_EXPLORED 262144 /* instructions walked over all paths */
#define MAX_SAVED 16	    /* states remembered per jump target */
#define MAX_PENDING 1024    /* branches waiting to be walked */

int gpubpf_insn_error(char *err, size_t err_len, const char *section, size_t pc, const char *fmt,
		      va_list ap)
{
	int n = snprintf(err, err_len, "%s insn %zu: ", section, pc);

	if (n >= 0 && (size_t)n < err_len)
		vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
	return -EINVAL;
}

int verr(struct verifier *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gpubpf_insn_error(v->err, v->err_len, v->prog->section, v->pc, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int prog_err(struct verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int prog_err(struct verifier *v, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(v->err, v->err_len, "%s: ", v->prog->section);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < v->err_len)
		vsnprintf(v->err + n, v->err_len - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* --- the control-flow graph ------------------------------------------------------------- */

static bool is_cond_jump(uint8_t code)
{
	uint8_t cls = BPF_INSN_CLASS(code), op = BPF_INSN_OP(code);

	return (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_JA && op != BPF_CALL &&
	       op != BPF_EXIT;
}

static bool is_known_jump_op(uint8_t op)
{
	return op <= BPF_JSLE;
}

/* Whether the instruction at pc jumps somewhere (its target may be out of range). */
static bool has_target(const struct bpf_insn *insn)
{
	uint8_t cls = BPF_INSN_CLASS(insn->code), op = BPF_INSN_OP(insn->code);

	return (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL && op != BPF_EXIT;
}

/* The target of a jump (has_target), possibly outside the program. */
static int64_t jump_target(const struct bpf_insn *insn, size_t pc)
{
	uint8_t cls = BPF_INSN_CLASS(insn->code), op = BPF_INSN_OP(insn->code);

	if (op == BPF_JA && cls == BPF_JMP32) /* gotol: the offset is in imm */
		return (int64_t)pc + 1 + insn->imm;
	return (int64_t)pc + 1 + insn->off;
}

enum { NODE_NEW, NODE_OPEN, NODE_DONE };

/* Successors of pc: fall-through and/or jump target; returns how many. */
static int successors(const struct bpf_insn *insns, size_t pc, int64_t out[2])
{
	const struct bpf_insn *insn = &insns[pc];
	uint8_t cls = BPF_INSN_CLASS(insn->code), op = BPF_INSN_OP(insn->code);
	int n = 0;

	if ((cls == BPF_JMP || cls == BPF_JMP32) && op == BPF_EXIT)
		return 0;
	if ((cls == BPF_JMP || cls == BPF_JMP32) && op == BPF_JA) {
		out[0] = jump_target(insn, pc);
		return 1;
	}
	out[n++] = (int64_t)pc + (bpf_is_ld_imm64(insn) ? 2 : 1);
	if (is_cond_jump(insn->code))
		out[n++] = jump_target(insn, pc);
	return n;
}

/*
 * Checks every instruction's encoding enough to walk the graph, every jump's
 * target, that no path falls off the end, that the graph has no cycle and
 * that every instruction is reachable; marks jump targets as prune points.
 */
static int check_cfg(struct verifier *v, uint8_t *prune_point)
{
	const struct bpf_insn *insns = v->insns;
	uint8_t *half = calloc(v->n, 1), *color = calloc(v->n, 1);
	size_t *stack = malloc(v->n * sizeof(*stack)), depth = 0;
	int err = 0;

	if (!half || !color || !stack) {
		err = prog_err(v, "out of memory");
		goto out;
	}
	for (v->pc = 0; v->pc < v->n; v->pc++) {
		const struct bpf_insn *insn = &insns[v->pc];
		uint8_t cls = BPF_INSN_CLASS(insn->code);
		int64_t t = has_target(insn) ? jump_target(insn, v->pc) : -1;

		if (half[v->pc])
			continue;
		if (bpf_is_ld_imm64(insn)) {
			if (v->pc + 1 >= v->n) {
				err = verr(v, "ld_imm64 without its second half");
				goto out;
			}
			half[v->pc + 1] = 1;
		}
		if ((cls == BPF_JMP || cls == BPF_JMP32) &&
		    !is_known_jump_op(BPF_INSN_OP(insn->code))) {
			err = verr(v, "unknown opcode 0x%02x", insn->code);
			goto out;
		}
		if (has_target(insn)) {
			if (t < 0 || (uint64_t)t >= v->n) {
				err = verr(
				    v, "jump to insn %lld outside the program (%zu instructions)",
				    (long long)t, v->n);
				goto out;
			}
			prune_point[t] = 1;
			if (is_cond_jump(insn->code))
				prune_point[v->pc + 1 < v->n ? v->pc + 1 : v->pc] = 1;
		}
	}
	for (v->pc = 0; v->pc < v->n; v->pc++) {
		int64_t t = has_target(&insns[v->pc]) ? jump_target(&insns[v->pc], v->pc) : -1;

		if (!half[v->pc] && t >= 0 && half[t]) {
			err = verr(v, "jump into the middle of the ld_imm64 at insn %lld",
				   (long long)t - 1);
			goto out;
		}
	}
	/* depth-first walk: an edge to an open node closes a cycle */
	stack[depth++] = 0;
	color[0] = NODE_OPEN;
	while (depth) {
		size_t pc = stack[depth - 1];
		int64_t next[2];
		int n = successors(insns, pc, next), pushed = 0;

		v->pc = pc;
		for (int i = 0; i < n && !pushed; i++) {
			if (next[i] >= (int64_t)v->n) {
				err =
				    verr(v, "the program falls off its end after this instruction");
				goto out;
			}
			if (color[next[i]] == NODE_OPEN) {
				err = verr(v,
					   "jumps back to insn %lld (loops do not run on the GPU: "
					   "unroll them with #pragma unroll)",
					   (long long)next[i]);
				goto out;
			}
			if (color[next[i]] == NODE_NEW) {
				color[next[i]] = NODE_OPEN;
				stack[depth++] = (size_t)next[i];
				pushed = 1;
			}
		}
		if (!pushed) {
			color[pc] = NODE_DONE;
			depth--;
		}
	}
	for (v->pc = 0; v->pc < v->n; v->pc++)
		if (!half[v->pc] && color[v->pc] != NODE_DONE) {
			err = verr(v, "unreachable instruction");
			goto out;
		}
out:
	free(half);
	free(color);
	free(stack);
	return err;
}

/* --- states: comparison for pruning ------------------------------------------------------ */

/* A consistent renaming of ids between two states (null-check groups, reservations). */
struct idmap {
	uint32_t old[32], cur[32];
	unsigned n;
};

static bool ids_match(struct idmap *m, uint32_t old, uint32_t cur)
{
	for (unsigned i = 0; i < m->n; i++)
		if (m->old[i] == old)
			return m->cur[i] == cur;
	if (m->n == 32)
		return false;
	m->old[m->n] = old;
	m->cur[m->n++] = cur;
	return true;
}

/* Whatever is safe with `old` is safe with `cur`. */
static bool reg_covers(const struct reg *old, const struct reg *cur, struct idmap *m)
{
	if (old->kind == REG_NOT_INIT)
		return true;
	if (old->kind != cur->kind)
		return false;
	switch (old->kind) {
	case REG_SCALAR:
		return scalar_within(&old->v, &cur->v);
	case REG_CTX:
	case REG_STACK:
		return old->off == cur->off;
	case REG_MAP:
		return old->map == cur->map;
	case REG_MAP_VALUE:
		return old->map == cur->map && old->off == cur->off &&
		       scalar_within(&old->v, &cur->v);
	case REG_MAP_VALUE_OR_NULL:
		return old->map == cur->map && old->off == cur->off &&
		       scalar_within(&old->v, &cur->v) && ids_match(m, old->id, cur->id);
	default: /* ring reservations */
		return old->map == cur->map && old->off == cur->off &&
		       old->mem_size == cur->mem_size && scalar_within(&old->v, &cur->v) &&
		       ids_match(m, old->id, cur->id) && ids_match(m, old->ref, cur->ref);
	}
}

static bool state_covers(const struct vstate *old, const struct vstate *cur)
{
	struct idmap m = {.n = 0};

	if (old->nr_refs != cur->nr_refs)
		return false;
	for (int i = 0; i < BPF_MAX_REG; i++)
		if (!reg_covers(&old->r[i], &cur->r[i], &m))
			return false;
	for (int s = 0; s < STACK_SLOTS; s++) {
		const struct slot *o = &old->s[s], *c = &cur->s[s];

		for (int b = 0; b < 8; b++) {
			if (o->bytes[b] == BYTE_INVALID)
				continue;
			if (o->bytes[b] == BYTE_MISC &&
			    (c->bytes[b] == BYTE_MISC ||
			     (c->bytes[b] == BYTE_SPILL && c->spill.kind == REG_SCALAR)))
				continue;
			if (o->bytes[b] == BYTE_SPILL && c->bytes[b] == BYTE_SPILL)
				continue;
			return false;
		}
		if (o->bytes[0] == BYTE_SPILL && !reg_covers(&o->spill, &c->spill, &m))
			return false;
	}
	for (unsigned i = 0; i < old->nr_refs; i++) {
		bool found = false;

		for (unsigned j = 0; j < cur->nr_refs && !found; j++)
			found = ids_match(&m, old->refs[i], cur->refs[j]);
		if (!found)
			return false;
	}
	return true;
}

/* --- exploration ----------------------------------------------------------------------- */

struct saved_states {
	struct vstate *v[MAX_SAVED];
	unsigned n;
};

struct pending {
	struct vstate *st;
	size_t pc;
};

struct walk {
	uint8_t *prune_point;
	struct saved_states *saved; /* per instruction */
	struct pending q[MAX_PENDING];
	size_t nq;
};

static int push_branch(struct verifier *v, struct walk *w, const struct vstate *st, size_t pc)
{
	struct vstate *copy;

	if (w->nq == MAX_PENDING)
		return verr(v, "program too complex: more than %d branches open at once",
			    MAX_PENDING);
	copy = malloc(sizeof(*copy));
	if (!copy)
		return verr(v, "out of memory");
	*copy = *st;
	w->q[w->nq++] = (struct pending){copy, pc};
	return 0;
}

/* True when a state saved at pc covers st (the path needs no more walking); saves st if not. */
static bool seen_before(struct walk *w, size_t pc, const struct vstate *st)
{
	struct saved_states *s = &w->saved[pc];
	struct vstate *copy;

	for (unsigned i = 0; i < s->n; i++)
		if (state_covers(s->v[i], st))
			return true;
	if (s->n < MAX_SAVED && (copy = malloc(sizeof(*copy)))) {
		*copy = *st;
		s->v[s->n++] = copy;
	}
	return false;
}

/* The null check `r == 0` / `r != 0` of a pointer that may be NULL: each branch knows. */
static void mark_null_checked(struct vstate *st, uint32_t id, bool is_null)
{
	struct reg *regs[BPF_MAX_REG + STACK_SLOTS];
	int n = 0;

	for (int i = 0; i < BPF_MAX_REG; i++)
		regs[n++] = &st->r[i];
	for (int i = 0; i < STACK_SLOTS; i++)
		if (st->s[i].bytes[0] == BYTE_SPILL)
			regs[n++] = &st->s[i].spill;
	for (int i = 0; i < n; i++) {
		struct reg *r = regs[i];

		if ((r->kind != REG_MAP_VALUE_OR_NULL && r->kind != REG_RING_MEM_OR_NULL) ||
		    r->id != id)
			continue;
		if (is_null) {
			set_scalar(r, scalar_const(0));
		} else {
			r->kind = r->kind == REG_MAP_VALUE_OR_NULL ? REG_MAP_VALUE : REG_RING_MEM;
			r->id = 0;
		}
	}
	if (is_null) /* a NULL reservation holds nothing */
		for (unsigned i = 0; i < st->nr_refs; i++)
			if (st->refs[i] == id) {
				st->refs[i] = st->refs[--st->nr_refs];
				st->ref_insn[i] = st->ref_insn[st->nr_refs];
				break;
			}
}

/*
 * A conditional jump. Returns 0 with *next the path to follow now (the other,
 * if possible, is queued), 1 when this path ends (no successor is possible).
 */
static int check_cond_jump(struct verifier *v, struct walk *w, struct vstate *st,
			   const struct bpf_insn *insn, size_t *next)
{
	bool is64 = BPF_INSN_CLASS(insn->code) == BPF_JMP;
	uint8_t op = BPF_INSN_OP(insn->code);
	size_t taken_pc = (size_t)jump_target(insn, v->pc), fall_pc = v->pc + 1;
	struct reg *dst = &st->r[insn->dst_reg], *src;
	struct reg src_imm = {.kind = REG_NOT_INIT};
	struct vstate other;
	uint32_t id;
	int outcome;

	if (check_reg_read(v, st, insn->dst_reg))
		return -EINVAL;
	if (BPF_INSN_SRC(insn->code) == BPF_X) {
		if (insn->imm || check_reg_read(v, st, insn->src_reg))
			return insn->imm ? verr(v, "reserved fields of a jump are not zero")
					 : -EINVAL;
		src = &st->r[insn->src_reg];
	} else {
		if (insn->src_reg)
			return verr(v, "reserved fields of a jump are not zero");
		set_scalar(&src_imm, scalar_const(is64 ? (uint64_t)(int64_t)insn->imm
						       : (uint64_t)(uint32_t)insn->imm));
		src = &src_imm;
	}
	if (dst->kind != REG_SCALAR || src->kind != REG_SCALAR) {
		struct reg *ptr = dst->kind != REG_SCALAR ? dst : src,
			   *num = ptr == dst ? src : dst;
		bool eq_null = num->kind == REG_SCALAR && scalar_is_const(&num->v) &&
			       !num->v.t.value && (op == BPF_JEQ || op == BPF_JNE) && is64;

		if (!eq_null ||
		    (ptr->kind != REG_MAP_VALUE_OR_NULL && ptr->kind != REG_RING_MEM_OR_NULL &&
		     ptr->kind != REG_MAP_VALUE && ptr->kind != REG_RING_MEM))
			return verr(v,
				    "comparison of %s (r%u): only a NULL check of a pointer "
				    "is allowed",
				    reg_kind_name(ptr->kind),
				    ptr == dst ? insn->dst_reg : insn->src_reg);
		if (ptr->kind == REG_MAP_VALUE || ptr->kind == REG_RING_MEM) {
			/* already known not to be NULL */
			*next = op == BPF_JNE ? taken_pc : fall_pc;
			return 0;
		}
		other = *st;
		id = ptr->id;
		mark_null_checked(st, id, op == BPF_JEQ);     /* taken */
		mark_null_checked(&other, id, op != BPF_JEQ); /* fall-through */
		if (push_branch(v, w, &other, fall_pc))
			return -EINVAL;
		*next = taken_pc;
		return 0;
	}
	outcome = scalar_branch(&dst->v, &src->v, op, is64);
	if (outcome >= 0) {
		*next = outcome ? taken_pc : fall_pc;
		return 0;
	}
	other = *st;
	{
		bool reg_src = BPF_INSN_SRC(insn->code) == BPF_X;
		struct bpf_scalar imm_taken = src_imm.v, imm_fall = src_imm.v;

		scalar_refine(&st->r[insn->dst_reg].v,
			      reg_src ? &st->r[insn->src_reg].v : &imm_taken, op, is64, true);
		scalar_refine(&other.r[insn->dst_reg].v,
			      reg_src ? &other.r[insn->src_reg].v : &imm_fall, op, is64, false);
	}
	if (!scalar_empty(&other.r[insn->dst_reg].v) &&
	    (BPF_INSN_SRC(insn->code) != BPF_X || !scalar_empty(&other.r[insn->src_reg].v))) {
		if (push_branch(v, w, &other, fall_pc))
			return -EINVAL;
	}
	if (scalar_empty(&st->r[insn->dst_reg].v) ||
	    (BPF_INSN_SRC(insn->code) == BPF_X && scalar_empty(&st->r[insn->src_reg].v)))
		return 1;
	*next = taken_pc;
	return 0;
}

static int check_exit(struct verifier *v, const struct vstate *st)
{
	if (st->nr_refs)
		return verr(v,
			    "exits holding the ring reservation made at insn %u (submit or "
			    "discard it on every path)",
			    st->ref_insn[0]);
	if (st->r[BPF_REG_0].kind == REG_NOT_INIT)
		return verr(v, "exits with r0 not set");
	if (st->r[BPF_REG_0].kind != REG_SCALAR)
		return verr(v, "exits returning %s (return a number)",
			    reg_kind_name(st->r[BPF_REG_0].kind));
	return 0;
}

/* Checks one instruction; returns 0 and *next, 1 when the path ends, -EINVAL. */
static int step(struct verifier *v, struct walk *w, struct vstate *st, size_t *next)
{
	const struct bpf_insn *insn = &v->insns[v->pc];
	uint8_t cls = BPF_INSN_CLASS(insn->code), op = BPF_INSN_OP(insn->code);
	int err;

	*next = v->pc + 1;
	if (insn->dst_reg >= BPF_MAX_REG || insn->src_reg >= BPF_MAX_REG)
		return verr(v, "register r%u does not exist",
			    insn->dst_reg >= BPF_MAX_REG ? insn->dst_reg : insn->src_reg);
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		return check_alu(v, st, insn);
	case BPF_LD:
		if (!bpf_is_ld_imm64(insn))
			return verr(v, "unknown opcode 0x%02x", insn->code);
		*next = v->pc + 2;
		return check_load_imm64(v, st, insn);
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		return check_mem_insn(v, st, insn);
	default: /* BPF_JMP, BPF_JMP32 */
		break;
	}
	switch (op) {
	case BPF_JA:
		if (insn->src_reg || insn->dst_reg || (cls == BPF_JMP && insn->imm) ||
		    (cls == BPF_JMP32 && insn->off))
			return verr(v, "reserved fields of a jump are not zero");
		*next = (size_t)jump_target(insn, v->pc);
		return 0;
	case BPF_CALL:
		if (cls != BPF_JMP)
			return verr(v, "unknown opcode 0x%02x", insn->code);
		return check_call(v, st, insn);
	case BPF_EXIT:
		if (cls != BPF_JMP || insn->src_reg || insn->dst_reg || insn->imm || insn->off)
			return verr(v, "unknown opcode 0x%02x", insn->code);
		err = check_exit(v, st);
		return err ? err : 1;
	default:
		return check_cond_jump(v, w, st, insn, next);
	}
}

static void initial_state(struct vstate *st)
{
	memset(st, 0, sizeof(*st));
	st->r[BPF_REG_1].kind = REG_CTX;
	st->r[BPF_REG_1].map = -1;
	st->r[BPF_REG_1].v = scalar_const(0);
	st->r[BPF_REG_10].kind = REG_STACK;
	st->r[BPF_REG_10].map = -1;
	st->r[BPF_REG_10].v = scalar_const(0);
}

static int walk_paths(struct verifier *v, struct walk *w)
{
	struct vstate *st = malloc(sizeof(*st));
	size_t pc = 0;
	int err = 0;

	if (!st)
		return prog_err(v, "out of memory");
	initial_state(st);
	for (;;) {
		size_t next;
		int rc;

		if (++v->out->explored > MAX_EXPLORED) {
			err = prog_err(v, "program too complex: more than %d instructions explored",
				       MAX_EXPLORED);
			break;
		}
		v->pc = pc;
		if (w->prune_point[pc] && seen_before(w, pc, st)) {
			rc = 1;
		} else {
			v->out->info[pc].seen = true;
			rc = step(v, w, st, &next);
		}
		if (rc < 0) {
			err = rc;
			break;
		}
		if (rc == 0) {
			pc = next;
			continue;
		}
		free(st); /* this path is done: take the latest branch left */
		st = NULL;
		if (!w->nq)
			break;
		w->nq--;
		st = w->q[w->nq].st;
		pc = w->q[w->nq].pc;
	}
	free(st);
	return err;
}

int gpubpf_verify(const struct gpubpf_object *obj, const struct gpubpf_prog *prog,
		  struct gpubpf_verified *out, char *err, size_t err_len)
{
	struct verifier v = {.obj = obj,
			     .prog = prog,
			     .insns = prog->insns,
			     .n = prog->nr_insns,
			     .out = out,
			     .err = err,
			     .err_len = err_len};
	struct walk *w = calloc(1, sizeof(*w));
	int rc;

	memset(out, 0, sizeof(*out));
	out->stack_fixed = true;
	if (!w || !prog->nr_insns) {
		free(w);
		return prog_err(&v, prog->nr_insns ? "out of memory" : "no instructions");
	}
	out->info = calloc(prog->nr_insns, sizeof(*out->info));
	w->prune_point = calloc(prog->nr_insns, 1);
	w->saved = calloc(prog->nr_insns, sizeof(*w->saved));
	if (!out->info || !w->prune_point || !w->saved) {
		rc = prog_err(&v, "out of memory");
		goto out;
	}
	out->nr_insns = prog->nr_insns;
	for (size_t i = 0; i < prog->nr_insns; i++) {
		out->info[i].map = -1;
		for (int a = 0; a < 5; a++)
			out->info[i].arg[a].map = -1;
		out->info[i].mem.map = -1;
	}
	rc = check_cfg(&v, w->prune_point);
	if (!rc)
		rc = walk_paths(&v, w);
out:
	while (w->nq)
		free(w->q[--w->nq].st);
	for (size_t i = 0; w->saved && i < prog->nr_insns; i++)
		for (unsigned k = 0; k < w->saved[i].n; k++)
			free(w->saved[i].v[k]);
	free(w->saved);
	free(w->prune_point);
	free(w);
	return rc;
}

void gpubpf_verified_free(struct gpubpf_verified *v)
{
	free(v->info);
	memset(v, 0, sizeof(*v));
}
