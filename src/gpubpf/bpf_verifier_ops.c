/* The verifier's checks of single instructions: arithmetic, memory accesses, helper calls. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gpubpf/bpf_helpers.h"
#include "gpubpf/bpf_verifier_state.h"

const char *reg_kind_name(uint8_t kind)
{
	static const char *const names[] = {
	    [REG_NOT_INIT] = "not set",
	    [REG_SCALAR] = "a number",
	    [REG_CTX] = "the context",
	    [REG_STACK] = "a stack pointer",
	    [REG_MAP] = "a map",
	    [REG_MAP_VALUE] = "a map value pointer",
	    [REG_MAP_VALUE_OR_NULL] = "a map value pointer that may be NULL",
	    [REG_RING_MEM] = "a ring reservation",
	    [REG_RING_MEM_OR_NULL] = "a ring reservation that may be NULL",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

void set_scalar(struct reg *r, struct bpf_scalar s)
{
	memset(r, 0, sizeof(*r));
	r->kind = REG_SCALAR;
	r->map = -1;
	r->v = s;
}

static bool is_pointer(const struct reg *r)
{
	return r->kind != REG_SCALAR && r->kind != REG_NOT_INIT;
}

int check_reg_read(struct verifier *v, const struct vstate *st, unsigned r)
{
	if (r >= BPF_MAX_REG)
		return verr(v, "register r%u does not exist", r);
	if (st->r[r].kind == REG_NOT_INIT)
		return verr(v, "r%u is read before it is set", r);
	return 0;
}

static int check_reg_write(struct verifier *v, unsigned r)
{
	if (r >= BPF_MAX_REG)
		return verr(v, "register r%u does not exist", r);
	if (r == BPF_REG_10)
		return verr(v, "r10 (the frame pointer) is read-only");
	return 0;
}

/* --- arithmetic ------------------------------------------------------------------------- */

static const char *alu_name(uint8_t op)
{
	static const char *const names[16] = {"+",  "-",   "*", "/", "|",   "&",   "<<",
					      ">>", "neg", "%", "^", "mov", "s>>", "byte swap"};

	return names[op >> 4] ? names[op >> 4] : "?";
}

/* Pointer plus or minus a number: the offset moves, the kind stays. */
static int pointer_arith(struct verifier *v, struct reg *dst, const struct reg *num, uint8_t op,
			 unsigned dst_no)
{
	bool known = scalar_is_const(&num->v);
	int64_t c = (int64_t)num->v.t.value, off;

	switch (dst->kind) {
	case REG_STACK:
	case REG_CTX:
		if (!known)
			return verr(
			    v, "r%u: a variable offset into %s (its offsets must be constants)",
			    dst_no, reg_kind_name(dst->kind));
		break;
	case REG_MAP_VALUE:
	case REG_RING_MEM:
		if (known)
			break;
		scalar_alu(&dst->v, &num->v, op, true);
		return 0;
	case REG_MAP_VALUE_OR_NULL:
	case REG_RING_MEM_OR_NULL:
		return verr(v, "r%u may be NULL: check it before computing addresses from it",
			    dst_no);
	default:
		return verr(v, "r%u is %s: arithmetic on it is not allowed", dst_no,
			    reg_kind_name(dst->kind));
	}
	off = op == BPF_ADD ? dst->off + c : dst->off - c;
	if (c < -(1 << 29) || c > (1 << 29) || off < -(1 << 29) || off > (1 << 29))
		return verr(v, "r%u: pointer offset %lld out of range", dst_no, (long long)off);
	dst->off = (int32_t)off;
	return 0;
}

static int check_byte_swap(struct verifier *v, struct vstate *st, const struct bpf_insn *insn)
{
	struct reg *dst = &st->r[insn->dst_reg];
	bool to_le = BPF_INSN_CLASS(insn->code) == BPF_ALU && BPF_INSN_SRC(insn->code) == BPF_TO_LE;

	if (insn->imm != 16 && insn->imm != 32 && insn->imm != 64)
		return verr(v, "byte swap of %d bits (16, 32 or 64)", insn->imm);
	if (check_reg_read(v, st, insn->dst_reg))
		return -EINVAL;
	if (dst->kind != REG_SCALAR)
		return verr(v, "r%u is %s: byte swap of it is not allowed", insn->dst_reg,
			    reg_kind_name(dst->kind));
	if (to_le) /* little-endian machine: a truncation */
		scalar_truncate(&dst->v, (unsigned)insn->imm / 8);
	else
		dst->v = scalar_of_size((unsigned)insn->imm / 8);
	return 0;
}

static int check_alu_operands(struct verifier *v, const struct bpf_insn *insn, uint8_t op,
			      bool is64)
{
	bool reg_src = BPF_INSN_SRC(insn->code) == BPF_X;
	bool signed_div = (op == BPF_DIV || op == BPF_MOD) && insn->off == 1;
	bool movsx = op == BPF_MOV && reg_src &&
		     (insn->off == 8 || insn->off == 16 || (insn->off == 32 && is64));

	if ((reg_src && insn->imm) || (!reg_src && insn->src_reg) ||
	    (insn->off && !signed_div && !movsx))
		return verr(v, "reserved fields of an ALU instruction are not zero");
	if (!reg_src && (op == BPF_DIV || op == BPF_MOD) && insn->imm == 0)
		return verr(v, "division by the constant zero");
	if (!reg_src && (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) &&
	    (insn->imm < 0 || insn->imm >= (is64 ? 64 : 32)))
		return verr(v, "shift by %d in a %d-bit operation", insn->imm, is64 ? 64 : 32);
	return 0;
}

int check_alu(struct verifier *v, struct vstate *st, const struct bpf_insn *insn)
{
	bool is64 = BPF_INSN_CLASS(insn->code) == BPF_ALU64;
	uint8_t op = BPF_INSN_OP(insn->code);
	struct reg *dst = &st->r[insn->dst_reg], src;

	if (op > BPF_END || (op == BPF_NEG && BPF_INSN_SRC(insn->code) == BPF_X))
		return verr(v, "unknown opcode 0x%02x", insn->code);
	if (check_reg_write(v, insn->dst_reg))
		return -EINVAL;
	if (op == BPF_END)
		return check_byte_swap(v, st, insn);
	if (check_alu_operands(v, insn, op, is64))
		return -EINVAL;
	if (BPF_INSN_SRC(insn->code) == BPF_X && op != BPF_NEG) {
		if (check_reg_read(v, st, insn->src_reg))
			return -EINVAL;
		src = st->r[insn->src_reg];
	} else {
		set_scalar(&src, scalar_const(is64 ? (uint64_t)(int64_t)insn->imm
						   : (uint64_t)(uint32_t)insn->imm));
	}
	if (op == BPF_MOV) {
		if (is64 && !insn->off) {
			*dst = src;
			return 0;
		}
		if (is_pointer(&src))
			return verr(v, "r%u is %s: a %s move of it is not allowed", insn->src_reg,
				    reg_kind_name(src.kind),
				    insn->off ? "sign-extending" : "32-bit");
		if (insn->off && scalar_is_const(&src.v)) { /* movsx of a known value */
			unsigned bits = (unsigned)insn->off;
			uint64_t x = src.v.t.value & ((1ull << bits) - 1);

			if (x >> (bits - 1))
				x |= ~0ull << bits;
			set_scalar(dst, scalar_const(x));
		} else {
			set_scalar(dst, insn->off ? scalar_unknown() : src.v);
		}
		if (!is64)
			scalar_truncate(&dst->v, 4);
		return 0;
	}
	if (check_reg_read(v, st, insn->dst_reg))
		return -EINVAL;
	if (is_pointer(dst) || is_pointer(&src)) {
		if (!is64 || (op != BPF_ADD && op != BPF_SUB))
			return verr(v, "r%u is %s: '%s' on it is not allowed",
				    is_pointer(dst) ? insn->dst_reg : insn->src_reg,
				    reg_kind_name(is_pointer(dst) ? dst->kind : src.kind),
				    alu_name(op));
		if (is_pointer(dst) && is_pointer(&src))
			return verr(
			    v, "r%u and r%u are both pointers: '%s' of pointers is not allowed",
			    insn->dst_reg, insn->src_reg, alu_name(op));
		if (is_pointer(&src)) { /* number + pointer: the pointer moves */
			struct reg num = *dst;

			if (op == BPF_SUB)
				return verr(v, "r%u is %s: subtracting it is not allowed",
					    insn->src_reg, reg_kind_name(src.kind));
			*dst = src;
			return pointer_arith(v, dst, &num, op, insn->dst_reg);
		}
		return pointer_arith(v, dst, &src, op, insn->dst_reg);
	}
	if ((op == BPF_DIV || op == BPF_MOD) && insn->off == 1) {
		dst->v = scalar_unknown(); /* signed division (v4): not tracked */
		if (!is64)
			scalar_truncate(&dst->v, 4);
		return 0;
	}
	scalar_alu(&dst->v, op == BPF_NEG ? &dst->v : &src.v, op, is64);
	return 0;
}

int check_load_imm64(struct verifier *v, struct vstate *st, const struct bpf_insn *insn)
{
	struct reg *dst = &st->r[insn->dst_reg];
	const struct bpf_insn *hi = insn + 1;

	if (v->pc + 1 >= v->n || hi->code || hi->dst_reg || hi->src_reg || hi->off)
		return verr(v, "ld_imm64 without its second half");
	if (check_reg_write(v, insn->dst_reg))
		return -EINVAL;
	if (insn->off)
		return verr(v, "reserved fields of ld_imm64 are not zero");
	switch (insn->src_reg) {
	case 0:
		set_scalar(dst, scalar_const((uint64_t)(uint32_t)insn->imm |
					     (uint64_t)(uint32_t)hi->imm << 32));
		return 0;
	case BPF_PSEUDO_MAP_FD:
	case BPF_PSEUDO_MAP_VALUE:
		if (insn->imm < 0 || (size_t)insn->imm >= v->obj->nr_maps)
			return verr(v, "ld_imm64 of map %d, which does not exist", insn->imm);
		memset(dst, 0, sizeof(*dst));
		dst->map = (int16_t)insn->imm;
		if (insn->src_reg == BPF_PSEUDO_MAP_FD) {
			if (v->obj->maps[insn->imm].rodata || hi->imm)
				return verr(v, "ld_imm64 of map %d is malformed", insn->imm);
			dst->kind = REG_MAP;
		} else {
			if (!v->obj->maps[insn->imm].rodata || hi->imm < 0 ||
			    (uint32_t)hi->imm >= v->obj->maps[insn->imm].value_size)
				return verr(v, "ld_imm64 into section %d is malformed", insn->imm);
			dst->kind = REG_MAP_VALUE;
			dst->off = hi->imm;
			dst->v = scalar_const(0);
		}
		v->out->info[v->pc].map = (int16_t)insn->imm;
		return 0;
	}
	return verr(v, "ld_imm64 of kind %u does not run on the GPU", insn->src_reg);
}

/* --- memory ----------------------------------------------------------------------------- */

/* Merges one path's view of a pointer into what the translator gets. */
static void note_ptr(struct verifier *v, struct gpubpf_ptr_info *p, const struct reg *base,
		     int32_t extra)
{
	uint8_t kind = base->kind == REG_STACK	    ? GPUBPF_BASE_STACK
		       : base->kind == REG_CTX	    ? GPUBPF_BASE_CTX
		       : base->kind == REG_RING_MEM ? GPUBPF_BASE_RING
						    : GPUBPF_BASE_MAP;
	bool first = !p->bases;
	int32_t stack_off = kind == GPUBPF_BASE_STACK ? base->off + extra : GPUBPF_OFF_VARIES;
	int32_t off = kind != GPUBPF_BASE_STACK && scalar_is_const(&base->v)
			  ? base->off + extra + (int32_t)base->v.t.value
			  : GPUBPF_OFF_VARIES;
	int16_t map = kind == GPUBPF_BASE_MAP ? base->map : -1;

	if (first) {
		p->stack_off = stack_off;
		p->off = off;
		p->map = map;
	} else {
		if (p->stack_off != stack_off)
			p->stack_off = GPUBPF_OFF_VARIES;
		if (p->off != off)
			p->off = GPUBPF_OFF_VARIES;
		if (p->map != map)
			p->map = -1;
	}
	p->bases |= kind;
	if (kind == GPUBPF_BASE_STACK && stack_off < v->out->stack_low)
		v->out->stack_low = stack_off;
	/*
	 * A stack slot in a register has no address: a site that reaches the
	 * stack on one path and other memory (or another slot) on another needs
	 * the stack in local memory, whichever of its paths came first.
	 */
	if ((p->bases & GPUBPF_BASE_STACK) &&
	    ((p->bases & ~GPUBPF_BASE_STACK) || p->stack_off == GPUBPF_OFF_VARIES))
		v->out->stack_fixed = false;
}

static struct slot *slot_at(struct vstate *st, int32_t fp_off)
{
	return &st->s[(-fp_off - 1) / 8];
}

static uint8_t *byte_at(struct vstate *st, int32_t fp_off)
{
	return &slot_at(st, fp_off)->bytes[(fp_off % 8 + 8) % 8];
}

/* Byte writes into a slot that held a spill turn the rest of the spill into plain data. */
static void unspill(struct slot *s)
{
	for (int i = 0; i < 8; i++)
		if (s->bytes[i] == BYTE_SPILL)
			s->bytes[i] = BYTE_MISC;
}

/* Plain data written over [off, off + size): spills it touches are broken up. */
static void mark_misc(struct vstate *st, int32_t off, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		unspill(slot_at(st, off + (int32_t)i));
	for (unsigned i = 0; i < size; i++)
		*byte_at(st, off + (int32_t)i) = BYTE_MISC;
}

static int stack_write(struct verifier *v, struct vstate *st, int32_t off, unsigned size,
		       const struct reg *val)
{
	struct slot *s = slot_at(st, off);

	if (val && is_pointer(val) && size != 8)
		return verr(v, "a pointer stored into the stack with a %u-byte write", size);
	if (size == 8 && val) { /* a spill: the register's state is kept */
		memset(s->bytes, BYTE_SPILL, 8);
		s->spill = *val;
		return 0;
	}
	mark_misc(st, off, size);
	return 0;
}

static int stack_read(struct verifier *v, struct vstate *st, int32_t off, unsigned size,
		      struct reg *dst, bool sign_extend)
{
	struct slot *s = slot_at(st, off);
	bool spilled = false;

	for (unsigned i = 0; i < size; i++) {
		uint8_t b = *byte_at(st, off + (int32_t)i);

		if (b == BYTE_INVALID)
			return verr(v, "%u-byte read at fp%d of uninitialized stack", size, off);
		spilled |= b == BYTE_SPILL;
	}
	if (!dst)
		return 0;
	if (spilled && size == 8 && !sign_extend) {
		*dst = s->spill;
		return 0;
	}
	if (spilled && is_pointer(&s->spill))
		return verr(v, "%u-byte read of part of a pointer spilled at fp%d", size, off & ~7);
	set_scalar(dst, sign_extend ? scalar_unknown() : scalar_of_size(size));
	return 0;
}

static int check_stack_access(struct verifier *v, struct vstate *st, const struct reg *base,
			      int32_t extra, unsigned size, bool write, const struct reg *val,
			      struct reg *dst, bool sign_extend)
{
	int64_t off = (int64_t)base->off + extra;

	if (off < -BPF_STACK_SIZE || off + size > 0)
		return verr(v, "%u-byte %s at fp%+lld outside the %d-byte stack", size,
			    write ? "write" : "read", (long long)off, BPF_STACK_SIZE);
	if (off % size)
		return verr(v, "%u-byte %s at fp%+lld is not %u-byte aligned", size,
			    write ? "write" : "read", (long long)off, size);
	return write ? stack_write(v, st, (int32_t)off, size, val)
		     : stack_read(v, st, (int32_t)off, size, dst, sign_extend);
}

/* "an 8-byte", "a 16-byte": the article English puts before a number. */
static const char *article(uint32_t n)
{
	while (n >= 1000)
		n /= 1000;
	return n == 8 || n == 11 || n == 18 || (n >= 80 && n < 90) || (n >= 800 && n < 900) ? "an"
											    : "a";
}

/* Checks [off + v, off + v + size) inside an object of `limit` bytes, naturally aligned. */
static int check_range(struct verifier *v, const struct reg *base, int32_t extra, unsigned size,
		       const char *access, uint32_t limit, const char *what, bool aligned)
{
	int64_t lo, hi, fixed = (int64_t)base->off + extra;

	if (base->v.smin < -(1ll << 30) || base->v.smax > (1ll << 30))
		return verr(v,
			    "%u-byte %s at an unbounded offset into %s (compare the index with "
			    "the size first)",
			    size, access, what);
	lo = fixed + base->v.smin;
	hi = fixed + base->v.smax;
	if (lo < 0 || hi + size > limit) {
		if (lo == hi)
			return verr(v, "%u-byte %s at offset %lld outside %s %u-byte %s", size,
				    access, (long long)lo, article(limit), limit, what);
		return verr(v, "%u-byte %s at offsets %lld..%lld outside %s %u-byte %s", size,
			    access, (long long)lo, (long long)hi, article(limit), limit, what);
	}
	if (aligned &&
	    ((fixed & (size - 1)) || ((base->v.t.value | base->v.t.mask) & (size - 1)))) {
		if (lo == hi)
			return verr(v, "%u-byte %s at offset %lld of %s is not %u-byte aligned",
				    size, access, (long long)lo, what, size);
		return verr(v, "%u-byte %s at offsets %lld..%lld of %s is not %u-byte aligned",
			    size, access, (long long)lo, (long long)hi, what, size);
	}
	return 0;
}

/* The context field holding [off, off + size), or -1. */
static int ctx_field(enum grt_bpf_attach attach, int32_t off, unsigned size)
{
	static const struct {
		int32_t off;
		unsigned size;
		int field;
	} mem_fields[] = {
	    {0, 8, GRT_BPF_MCTX_ADDR},	 {8, 4, GRT_BPF_MCTX_SIZE},
	    {12, 4, GRT_BPF_MCTX_FLAGS}, {16, 4, GRT_BPF_MCTX_KERNEL_ID},
	    {20, 4, GRT_BPF_MCTX_SITE},
	};

	if (off < 0 || off % size)
		return -1;
	if (attach != GRT_BPF_ATTACH_MEMCAPTURE) {
		if (off + size <= 8 * GRT_BPF_CTX_PARAMS)
			return off / 8;
		if (off >= 8 * GRT_BPF_CTX_PARAMS && off + size <= 8 * GRT_BPF_CTX_PARAMS + 4)
			return GRT_BPF_KCTX_KERNEL_ID;
		return -1;
	}
	for (size_t i = 0; i < sizeof(mem_fields) / sizeof(mem_fields[0]); i++)
		if (off >= mem_fields[i].off &&
		    off + (int32_t)size <= mem_fields[i].off + (int32_t)mem_fields[i].size)
			return mem_fields[i].field;
	return -1;
}

uint32_t gpubpf_ctx_size(enum grt_bpf_attach attach)
{
	return attach == GRT_BPF_ATTACH_MEMCAPTURE ? sizeof(struct grt_bpf_mem_ctx)
						   : sizeof(struct grt_bpf_kernel_ctx);
}

static void value_read(struct verifier *v, const struct reg *base, int32_t extra, unsigned size,
		       struct reg *dst, bool sign_extend)
{
	const struct gpubpf_map *m = base->kind == REG_MAP_VALUE ? &v->obj->maps[base->map] : NULL;
	uint64_t val = 0;

	if (m && m->rodata && scalar_is_const(&base->v) && !sign_extend) {
		/* read-only data is known: the value is a constant */
		int64_t off = (int64_t)base->off + extra + (int64_t)base->v.t.value;

		for (unsigned i = 0; i < size; i++)
			val |= (uint64_t)m->data[off + i] << (8 * i);
		set_scalar(dst, scalar_const(val));
		return;
	}
	set_scalar(dst, sign_extend ? scalar_unknown() : scalar_of_size(size));
}

/* A load, store or atomic through `base` + extra; val is the stored register (NULL for ST). */
static int check_access(struct verifier *v, struct vstate *st, unsigned base_no, int32_t extra,
			unsigned size, bool write, const struct reg *val, struct reg *dst,
			bool sign_extend)
{
	struct reg *base = &st->r[base_no];
	struct gpubpf_insn_info *info = &v->out->info[v->pc];
	const char *access = write ? "write" : "read";
	const struct gpubpf_map *m;
	int field;

	if (check_reg_read(v, st, base_no))
		return -EINVAL;
	if (write && val && is_pointer(val) && base->kind != REG_STACK)
		return verr(v, "storing %s into memory other than the stack would leak it",
			    reg_kind_name(val->kind));
	switch (base->kind) {
	case REG_STACK:
		note_ptr(v, &info->mem, base, extra);
		return check_stack_access(v, st, base, extra, size, write, val, dst, sign_extend);
	case REG_MAP_VALUE:
		m = &v->obj->maps[base->map];
		if (write && m->rodata)
			return verr(v, "%u-byte write into read-only section %s", size, m->name);
		if (check_range(v, base, extra, size, access, m->value_size,
				m->rodata ? "read-only section" : "map value", true))
			return -EINVAL;
		note_ptr(v, &info->mem, base, extra);
		if (dst)
			value_read(v, base, extra, size, dst, sign_extend);
		return 0;
	case REG_RING_MEM:
		if (check_range(v, base, extra, size, access, base->mem_size, "ring reservation",
				true))
			return -EINVAL;
		note_ptr(v, &info->mem, base, extra);
		if (dst)
			set_scalar(dst, sign_extend ? scalar_unknown() : scalar_of_size(size));
		return 0;
	case REG_CTX:
		if (write)
			return verr(v, "%u-byte write into the context (it is read-only)", size);
		field = ctx_field(v->prog->attach, base->off + extra, size);
		if (field < 0)
			return verr(v,
				    "%u-byte read at offset %d of the %u-byte context is not "
				    "within one of its fields",
				    size, base->off + extra, gpubpf_ctx_size(v->prog->attach));
		v->out->ctx_fields |= 1u << field;
		note_ptr(v, &info->mem, base, extra);
		info->mem.off = base->off + extra;
		set_scalar(dst, sign_extend ? scalar_unknown() : scalar_of_size(size));
		return 0;
	case REG_MAP_VALUE_OR_NULL:
	case REG_RING_MEM_OR_NULL:
		return verr(v, "r%u may be NULL: check the pointer %s returned before using it",
			    base_no,
			    base->kind == REG_RING_MEM_OR_NULL ? "bpf_ringbuf_reserve"
							       : "bpf_map_lookup_elem");
	case REG_MAP:
		return verr(v, "r%u is a map, not a pointer to a value: use bpf_map_lookup_elem",
			    base_no);
	default:
		return verr(v, "%u-byte %s through r%u, which is %s, not a pointer", size, access,
			    base_no, reg_kind_name(base->kind));
	}
}

static int check_atomic(struct verifier *v, struct vstate *st, const struct bpf_insn *insn)
{
	unsigned size = bpf_size_bytes(insn->code);
	int32_t op = insn->imm;
	bool fetch = op & BPF_FETCH;
	struct reg *base = &st->r[insn->dst_reg];
	struct reg old;

	if (size != 4 && size != 8)
		return verr(v, "%u-byte atomic (4 or 8 bytes)", size);
	if (op != BPF_ADD && op != BPF_OR && op != BPF_AND && op != BPF_XOR &&
	    op != (BPF_ADD | BPF_FETCH) && op != (BPF_OR | BPF_FETCH) &&
	    op != (BPF_AND | BPF_FETCH) && op != (BPF_XOR | BPF_FETCH) && op != BPF_XCHG &&
	    op != BPF_CMPXCHG)
		return verr(v, "unknown atomic operation 0x%x", (unsigned)op);
	if (check_reg_read(v, st, insn->src_reg) || check_reg_read(v, st, insn->dst_reg))
		return -EINVAL;
	if (is_pointer(&st->r[insn->src_reg]))
		return verr(v, "r%u is %s: atomics store numbers only", insn->src_reg,
			    reg_kind_name(st->r[insn->src_reg].kind));
	if (op == BPF_CMPXCHG) {
		if (check_reg_read(v, st, BPF_REG_0))
			return -EINVAL;
		if (is_pointer(&st->r[BPF_REG_0]))
			return verr(v, "r0 is %s: compare-and-exchange compares numbers only",
				    reg_kind_name(st->r[0].kind));
	}
	if (base->kind == REG_CTX)
		return verr(v, "atomic on the context (it is read-only)");
	if (base->kind == REG_STACK &&
	    check_access(v, st, insn->dst_reg, insn->off, size, false, NULL, &old, false))
		return -EINVAL;
	{
		struct gpubpf_insn_info *info = &v->out->info[v->pc];
		const struct reg *src = &st->r[insn->src_reg];
		bool known = scalar_is_const(&src->v);

		if (info->src_known == GPUBPF_SRC_UNSEEN && known) {
			info->src_known = GPUBPF_SRC_CONST;
			info->src_value = src->v.t.value;
		} else if (!known || info->src_value != src->v.t.value) {
			info->src_known = GPUBPF_SRC_VARIES;
		}
	}
	/* the stored result is a number nobody tracks */
	if (check_access(v, st, insn->dst_reg, insn->off, size, true, NULL, NULL, false))
		return -EINVAL;
	if (op == BPF_CMPXCHG)
		set_scalar(&st->r[BPF_REG_0], scalar_of_size(size));
	else if (fetch)
		set_scalar(&st->r[insn->src_reg], scalar_of_size(size));
	return 0;
}

int check_mem_insn(struct verifier *v, struct vstate *st, const struct bpf_insn *insn)
{
	uint8_t cls = BPF_INSN_CLASS(insn->code), mode = BPF_INSN_MODE(insn->code);
	unsigned size = bpf_size_bytes(insn->code);
	struct reg val, dst;

	if (cls == BPF_LDX) {
		if ((mode != BPF_MEM && mode != BPF_MEMSX) || insn->imm ||
		    (mode == BPF_MEMSX && size == 8))
			return verr(v, "unknown opcode 0x%02x", insn->code);
		if (check_reg_write(v, insn->dst_reg) ||
		    check_access(v, st, insn->src_reg, insn->off, size, false, NULL, &dst,
				 mode == BPF_MEMSX))
			return -EINVAL;
		st->r[insn->dst_reg] = dst;
		return 0;
	}
	if (cls == BPF_STX && mode == BPF_ATOMIC)
		return check_atomic(v, st, insn);
	if (mode != BPF_MEM)
		return verr(v, "unknown opcode 0x%02x", insn->code);
	if (cls == BPF_ST) {
		if (insn->src_reg)
			return verr(v, "reserved fields of a store are not zero");
		set_scalar(&val, scalar_const((uint64_t)(int64_t)insn->imm));
		return check_access(v, st, insn->dst_reg, insn->off, size, true,
				    size == 8 ? &val : NULL, NULL, false);
	}
	if (insn->imm)
		return verr(v, "reserved fields of a store are not zero");
	if (check_reg_read(v, st, insn->src_reg))
		return -EINVAL;
	val = st->r[insn->src_reg];
	return check_access(v, st, insn->dst_reg, insn->off, size, true,
			    size == 8 || is_pointer(&val) ? &val : NULL, NULL, false);
}

/* --- helper calls ----------------------------------------------------------------------- */

/* Readable (or writable) helper memory of `size` bytes at a pointer argument. */
static int check_helper_mem(struct verifier *v, struct vstate *st, unsigned argno,
			    const struct gpubpf_helper *h, uint32_t size, bool write)
{
	struct reg *r = &st->r[argno];
	struct gpubpf_ptr_info *info = &v->out->info[v->pc].arg[argno - 1];
	int64_t off;

	switch (r->kind) {
	case REG_STACK:
		off = r->off;
		if (off < -BPF_STACK_SIZE || off + size > 0)
			return verr(v, "%s arg%u: %u bytes at fp%+lld outside the %d-byte stack",
				    h->name, argno, size, (long long)off, BPF_STACK_SIZE);
		note_ptr(v, info, r, 0);
		for (uint32_t i = 0; i < size; i++) {
			int32_t b = (int32_t)off + (int32_t)i;
			struct slot *s = slot_at(st, b);

			if (write)
				continue;
			if (*byte_at(st, b) == BYTE_SPILL && is_pointer(&s->spill))
				return verr(v, "%s arg%u would read the pointer spilled at fp%d",
					    h->name, argno, b & ~7);
			if (*byte_at(st, b) ==
			    BYTE_INVALID) /* read as zero: the stack starts zeroed */
				v->out->stack_zeroed |= 1ull << ((-b - 1) / 8);
		}
		if (write)
			mark_misc(st, (int32_t)off, size);
		return 0;
	case REG_MAP_VALUE:
		if (write && v->obj->maps[r->map].rodata)
			return verr(v, "%s arg%u points into read-only section %s", h->name, argno,
				    v->obj->maps[r->map].name);
		if (check_range(v, r, 0, size, write ? "write" : "read",
				v->obj->maps[r->map].value_size, "map value", write))
			return -EINVAL;
		note_ptr(v, info, r, 0);
		return 0;
	case REG_RING_MEM:
		if (check_range(v, r, 0, size, write ? "write" : "read", r->mem_size,
				"ring reservation", write))
			return -EINVAL;
		note_ptr(v, info, r, 0);
		return 0;
	case REG_MAP_VALUE_OR_NULL:
	case REG_RING_MEM_OR_NULL:
		return verr(v, "%s arg%u (r%u) may be NULL: check it first", h->name, argno, argno);
	default:
		return verr(v, "%s arg%u (r%u) must point to memory, not %s", h->name, argno, argno,
			    reg_kind_name(r->kind));
	}
}

static int check_size_arg(struct verifier *v, const struct vstate *st, unsigned argno,
			  const struct gpubpf_helper *h, uint32_t *size)
{
	const struct reg *r = &st->r[argno];

	if (r->kind != REG_SCALAR || !scalar_is_const(&r->v))
		return verr(v, "%s arg%u (r%u, a size) must be a constant on the GPU", h->name,
			    argno, argno);
	if (!r->v.t.value || r->v.t.value > (1u << 15))
		return verr(v, "%s arg%u: size %llu (1 to 32768 bytes)", h->name, argno,
			    (unsigned long long)r->v.t.value);
	*size = (uint32_t)r->v.t.value;
	v->out->info[v->pc].size = *size;
	return 0;
}

static int check_map_arg(struct verifier *v, const struct vstate *st, const struct gpubpf_helper *h,
			 const struct gpubpf_map **map)
{
	const struct reg *r = &st->r[BPF_REG_1 + (h->args[0] == GPUBPF_ARG_MAP ? 0 : 1)];
	unsigned argno = h->args[0] == GPUBPF_ARG_MAP ? 1 : 2;
	int16_t *seen = &v->out->info[v->pc].map;
	bool ring;

	if (r->kind != REG_MAP)
		return verr(v, "%s arg%u (r%u) must be a map, not %s", h->name, argno, argno,
			    reg_kind_name(r->kind));
	*map = &v->obj->maps[r->map];
	ring = gpubpf_map_is_ring((*map)->type);
	if ((ring && !(h->maps & GPUBPF_MAPS_RING)) || (!ring && !(h->maps & GPUBPF_MAPS_DATA)))
		return verr(v, "%s does not take %s map '%s'", h->name,
			    gpubpf_map_type_name((*map)->type), (*map)->name);
	if (*seen >= 0 && *seen != r->map)
		return verr(v, "%s gets map '%s' on one path and '%s' on another", h->name,
			    v->obj->maps[*seen].name, (*map)->name);
	*seen = r->map;
	return 0;
}

/* How many bytes a string argument may span: the rest of the stack or of the value. */
static int check_str_arg(struct verifier *v, struct vstate *st, const struct gpubpf_helper *h)
{
	const struct reg *r = &st->r[BPF_REG_1];
	uint32_t avail;

	if (r->kind == REG_STACK) {
		/* the string ends at its NUL; what can be copied ends at the first non-data byte */
		avail = 0;
		for (int32_t b = r->off; b < 0 && b >= -BPF_STACK_SIZE; b++, avail++) {
			const struct slot *s = slot_at(st, b);

			if (*byte_at(st, b) == BYTE_INVALID ||
			    (*byte_at(st, b) == BYTE_SPILL && is_pointer(&s->spill)))
				break;
		}
		if (!avail)
			return verr(v, "%s arg1 (r1) points to uninitialized stack", h->name);
	} else if (r->kind == REG_MAP_VALUE && scalar_is_const(&r->v))
		avail =
		    v->obj->maps[r->map].value_size - (uint32_t)(r->off + (int32_t)r->v.t.value);
	else
		return verr(v,
			    "%s arg1 (r1) must point to a string on the stack or in a "
			    "read-only section, not %s",
			    h->name, reg_kind_name(r->kind));
	if (!avail || avail > (1u << 16))
		return verr(v, "%s arg1 (r1) points outside its memory", h->name);
	if (avail > GRT_BPF_PRINTK_MAX)
		avail = GRT_BPF_PRINTK_MAX;
	if (v->out->info[v->pc].size && v->out->info[v->pc].size != avail)
		avail = avail < v->out->info[v->pc].size ? avail : v->out->info[v->pc].size;
	v->out->info[v->pc].size = avail;
	return check_helper_mem(v, st, 1, h, avail, false);
}

static int check_release(struct verifier *v, struct vstate *st, const struct gpubpf_helper *h)
{
	const struct reg *r = &st->r[BPF_REG_1];
	uint32_t ref = r->ref;
	uint8_t i;

	if (r->kind != REG_RING_MEM)
		return verr(v, "%s arg1 (r1) must be a ring reservation, not %s", h->name,
			    reg_kind_name(r->kind));
	if (r->off || !scalar_is_const(&r->v) || r->v.t.value)
		return verr(v, "%s arg1 (r1) must point to the start of the reservation", h->name);
	if (v->out->info[v->pc].size && v->out->info[v->pc].size != r->mem_size)
		return verr(v, "%s releases reservations of different sizes on different paths",
			    h->name);
	v->out->info[v->pc].size = r->mem_size;
	for (i = 0; i < st->nr_refs && st->refs[i] != ref; i++)
		;
	if (i == st->nr_refs)
		return verr(v, "%s arg1 (r1): the reservation was already released", h->name);
	st->refs[i] = st->refs[st->nr_refs - 1];
	st->ref_insn[i] = st->ref_insn[st->nr_refs - 1];
	st->nr_refs--;
	/* every copy of the released pointer is a mere number now */
	for (int k = 0; k < BPF_MAX_REG; k++)
		if ((st->r[k].kind == REG_RING_MEM || st->r[k].kind == REG_RING_MEM_OR_NULL) &&
		    st->r[k].ref == ref)
			set_scalar(&st->r[k], scalar_unknown());
	for (int k = 0; k < STACK_SLOTS; k++)
		if (st->s[k].bytes[0] == BYTE_SPILL && st->s[k].spill.ref == ref &&
		    (st->s[k].spill.kind == REG_RING_MEM ||
		     st->s[k].spill.kind == REG_RING_MEM_OR_NULL))
			memset(st->s[k].bytes, BYTE_MISC, 8);
	return 0;
}

static int check_args(struct verifier *v, struct vstate *st, const struct gpubpf_helper *h,
		      const struct gpubpf_map *map, uint32_t *alloc)
{
	uint32_t size = 0;

	for (unsigned i = 0; i < 5 && h->args[i] != GPUBPF_ARG_NONE; i++) {
		unsigned argno = i + 1;
		const struct reg *r = &st->r[argno];
		enum gpubpf_arg next = i < 4 ? h->args[i + 1] : GPUBPF_ARG_NONE;

		if (h->args[i] == GPUBPF_ARG_OPTIONAL)
			continue;
		if (check_reg_read(v, st, argno))
			return -EINVAL;
		switch (h->args[i]) {
		case GPUBPF_ARG_ANYTHING:
			if (is_pointer(r))
				return verr(v, "%s arg%u (r%u) must be a number, not %s", h->name,
					    argno, argno, reg_kind_name(r->kind));
			break;
		case GPUBPF_ARG_MAP:
			break;
		case GPUBPF_ARG_MAP_KEY:
			if (check_helper_mem(v, st, argno, h, map->key_size, false))
				return -EINVAL;
			break;
		case GPUBPF_ARG_MAP_VALUE:
			if (check_helper_mem(v, st, argno, h, map->value_size, false))
				return -EINVAL;
			break;
		case GPUBPF_ARG_MEM:
			if (next != GPUBPF_ARG_CONST_SIZE ||
			    check_size_arg(v, st, argno + 1, h, &size) ||
			    check_helper_mem(v, st, argno, h, size, false))
				return -EINVAL;
			break;
		case GPUBPF_ARG_CONST_SIZE:
			break;
		case GPUBPF_ARG_ALLOC_SIZE:
			if (check_size_arg(v, st, argno, h, alloc))
				return -EINVAL;
			break;
		case GPUBPF_ARG_U64_OUT:
			if (check_helper_mem(v, st, argno, h, 8, true))
				return -EINVAL;
			break;
		case GPUBPF_ARG_CTX_OR_NULL:
			if (r->kind != REG_CTX &&
			    !(r->kind == REG_SCALAR && scalar_is_const(&r->v) && !r->v.t.value))
				return verr(v, "%s arg%u (r%u) must be the context or NULL",
					    h->name, argno, argno);
			break;
		case GPUBPF_ARG_RING_MEM:
			if (check_release(v, st, h))
				return -EINVAL;
			break;
		case GPUBPF_ARG_STR:
			if (check_str_arg(v, st, h))
				return -EINVAL;
			break;
		default:
			break;
		}
	}
	if (map && map->type == GRT_BPF_MAP_GPU_RINGBUF && size > map->value_size)
		return verr(v, "%s: a %u-byte event is larger than map '%s''s %u-byte value",
			    h->name, size, map->name, map->value_size);
	return 0;
}

int check_call(struct verifier *v, struct vstate *st, const struct bpf_insn *insn)
{
	const struct gpubpf_helper *h;
	const struct gpubpf_map *map = NULL;
	struct reg *r0 = &st->r[BPF_REG_0];
	uint32_t alloc = 0;

	if (insn->src_reg == BPF_PSEUDO_CALL)
		return verr(v, "calls another eBPF function (not supported on the GPU: declare it "
			       "static __always_inline)");
	if (insn->src_reg || insn->dst_reg || insn->off)
		return verr(v, "kfunc and other special calls do not run on the GPU");
	h = gpubpf_helper_find(insn->imm);
	if (!h) {
		const char *why = gpubpf_helper_refusal(insn->imm);

		return why ? verr(v, "%s", why)
			   : verr(v, "helper %d is not available on the GPU", insn->imm);
	}
	if ((h->args[0] == GPUBPF_ARG_MAP || h->args[1] == GPUBPF_ARG_MAP) &&
	    (check_reg_read(v, st, h->args[0] == GPUBPF_ARG_MAP ? 1 : 2) ||
	     check_map_arg(v, st, h, &map)))
		return -EINVAL;
	if (check_args(v, st, h, map, &alloc))
		return -EINVAL;
	for (int i = BPF_REG_1; i <= BPF_REG_5; i++)
		st->r[i].kind = REG_NOT_INIT;
	switch (h->ret) {
	case GPUBPF_RET_MAP_VALUE_OR_NULL:
		memset(r0, 0, sizeof(*r0));
		r0->kind = REG_MAP_VALUE_OR_NULL;
		r0->map = (int16_t)(map - v->obj->maps);
		r0->id = ++v->next_id;
		r0->v = scalar_const(0);
		break;
	case GPUBPF_RET_RING_MEM_OR_NULL:
		if (st->nr_refs == MAX_REFS)
			return verr(v, "more than %d ring reservations held at once", MAX_REFS);
		memset(r0, 0, sizeof(*r0));
		r0->kind = REG_RING_MEM_OR_NULL;
		r0->map = (int16_t)(map - v->obj->maps);
		r0->id = ++v->next_id;
		r0->ref = r0->id;
		r0->mem_size = alloc;
		r0->v = scalar_const(0);
		st->refs[st->nr_refs] = r0->ref;
		st->ref_insn[st->nr_refs++] = (uint32_t)v->pc;
		break;
	case GPUBPF_RET_VOID:
		r0->kind = REG_NOT_INIT;
		break;
	default:
		switch (insn->imm) {
		case GRT_BPF_FN_BLOCK_IDX: /* bpftime's index helpers return 0 */
		case GRT_BPF_FN_BLOCK_DIM:
		case GRT_BPF_FN_THREAD_IDX:
		case GRT_BPF_FN_GRID_DIM:
		case GRT_BPF_FN_MEMBAR:
			set_scalar(r0, scalar_const(0));
			break;
		case GRT_BPF_FN_SMP_PROCESSOR_ID:
		case GRT_BPF_FN_SM_ID:
		case GRT_BPF_FN_WARP_ID:
		case GRT_BPF_FN_LANE_ID:
			set_scalar(r0, scalar_of_size(4));
			break;
		default:
			set_scalar(r0, scalar_unknown());
		}
	}
	return 0;
}
