/* Translating a verified eBPF program into the PTX body of a device function (gpu_abi.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/bpf_ptx_emit.h"

/*
 * Registers stay registers: eBPF R0..R10 are PTX .b64 registers, ALU32
 * operations work on .b32 copies and zero-extend. The 512-byte stack is a
 * .local array only when the verifier could not give every stack access one
 * fixed offset; otherwise each used 8-byte slot is a register too and narrower
 * accesses are bit-field extracts and inserts, which ptxas folds. The context
 * is never in memory: its fields arrive as arguments (%c0..) and a load from
 * it is a register read. Helpers are emitted inline.
 */

void emitf(struct emit *e, const char *fmt, ...)
{
	va_list ap;
	char line[512];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		e->b.failed = true;
		return;
	}
	strbuf_add(&e->b, line, (size_t)n);
	if (line[0] == '\t' && line[1] != '.' && line[1] != '/')
		e->insns++;
}

int emit_err(struct emit *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gpubpf_insn_error(e->err, e->err_len, e->prog->section, e->pc, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

unsigned new_t(struct emit *e)
{
	if (++e->nt > e->max_t)
		e->max_t = e->nt;
	return e->nt - 1;
}

unsigned new_w(struct emit *e)
{
	if (++e->nw > e->max_w)
		e->max_w = e->nw;
	return e->nw - 1;
}

unsigned new_p(struct emit *e)
{
	if (++e->np > e->max_p)
		e->max_p = e->np;
	return e->np - 1;
}

void load_env(struct emit *e, uint32_t off, unsigned dst)
{
	emitf(e, "\tld.global.nc.u64 %%t%u, [%%env+%u];\n", dst, off);
}

void load_map_base(struct emit *e, int map, unsigned dst)
{
	load_env(e, GRT_BPF_ENV_OFF_MAP + 8 * (e->opts->map_slot_base + (uint32_t)map), dst);
}

/* --- stack slots and helper memory ----------------------------------------------------- */

static unsigned slot_of(int32_t fp_off)
{
	return (unsigned)((-fp_off - 1) / 8);
}

static unsigned byte_in_slot(int32_t fp_off)
{
	return (unsigned)(fp_off + 8 * ((-fp_off - 1) / 8 + 1));
}

static uint64_t low_mask(unsigned bytes)
{
	return bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
}

/* Bytes [off, off + n) of the register stack into %t<dst> (n <= 8; may span two slots). */
static void slot_load(struct emit *e, int32_t off, unsigned n, unsigned dst)
{
	unsigned s = slot_of(off), b = byte_in_slot(off), first = n < 8 - b ? n : 8 - b;

	e->slots_used |= 1ull << s;
	if (first == 8)
		emitf(e, "\tmov.b64 %%t%u, %%s%u;\n", dst, s);
	else
		emitf(e, "\tbfe.u64 %%t%u, %%s%u, %u, %u;\n", dst, s, 8 * b, 8 * first);
	if (n > first) {
		unsigned tmp = new_t(e), s2 = slot_of(off + (int32_t)first);

		e->slots_used |= 1ull << s2;
		emitf(e, "\tbfe.u64 %%t%u, %%s%u, 0, %u;\n", tmp, s2, 8 * (n - first));
		emitf(e, "\tshl.b64 %%t%u, %%t%u, %u;\n", tmp, tmp, 8 * first);
		emitf(e, "\tor.b64 %%t%u, %%t%u, %%t%u;\n", dst, dst, tmp);
	}
}

/* The low n bytes of operand `src` (a register name) into the register stack at off. */
static void slot_store(struct emit *e, int32_t off, unsigned n, const char *src)
{
	unsigned s = slot_of(off), b = byte_in_slot(off), first = n < 8 - b ? n : 8 - b;

	e->slots_used |= 1ull << s;
	if (first == 8)
		emitf(e, "\tmov.b64 %%s%u, %s;\n", s, src);
	else
		emitf(e, "\tbfi.b64 %%s%u, %s, %%s%u, %u, %u;\n", s, src, s, 8 * b, 8 * first);
	if (n > first) {
		unsigned tmp = new_t(e), s2 = slot_of(off + (int32_t)first);

		e->slots_used |= 1ull << s2;
		emitf(e, "\tshr.u64 %%t%u, %s, %u;\n", tmp, src, 8 * first);
		emitf(e, "\tbfi.b64 %%s%u, %%t%u, %%s%u, 0, %u;\n", s2, tmp, s2, 8 * (n - first));
	}
}

int helper_msrc(struct emit *e, unsigned argno, struct msrc *m)
{
	const struct gpubpf_ptr_info *p = &e->ver->info[e->pc].arg[argno - 1];

	memset(m, 0, sizeof(*m));
	if (p->bases == GPUBPF_BASE_STACK && e->promoted) {
		m->kind = MSRC_STACK;
		m->off = p->stack_off;
		return 0;
	}
	if (p->bases == GPUBPF_BASE_MAP && p->map >= 0 && e->obj->maps[p->map].rodata &&
	    p->off != GPUBPF_OFF_VARIES) {
		m->kind = MSRC_RODATA;
		m->map = p->map;
		m->off = p->off;
		return 0;
	}
	if (p->bases & GPUBPF_BASE_CTX)
		return emit_err(e, "arg%u: the context cannot be read by a helper", argno);
	m->kind = MSRC_ADDR;
	m->reg = argno;
	m->global = !(p->bases & GPUBPF_BASE_STACK);
	if (p->bases == GPUBPF_BASE_STACK)
		m->aligned8 = p->stack_off != GPUBPF_OFF_VARIES && !(p->stack_off % 8);
	else if (!(p->bases & GPUBPF_BASE_STACK))
		m->aligned8 = p->off != GPUBPF_OFF_VARIES && !(p->off % 8);
	return 0;
}

void load_bytes(struct emit *e, const struct msrc *m, int32_t at, unsigned n, unsigned dst)
{
	const char *sp = m->global ? ".global" : "";

	if (m->kind == MSRC_STACK) {
		slot_load(e, m->off + (int32_t)at, n, dst);
	} else if (m->kind == MSRC_RODATA) {
		const struct gpubpf_map *map = &e->obj->maps[m->map];
		uint64_t v = 0;

		for (unsigned i = 0; i < n && (uint32_t)(m->off + at) + i < map->value_size; i++)
			v |= (uint64_t)map->data[(uint32_t)(m->off + at) + i] << (8 * i);
		emitf(e, "\tmov.b64 %%t%u, 0x%llx;\n", dst, (unsigned long long)v);
	} else if (m->aligned8 && !(at % 8)) {
		/* an aligned word; bytes past n are in the same 8-byte granule */
		emitf(e, "\tld%s.u64 %%t%u, [%%r%u+%d];\n", sp, dst, m->reg, at);
		if (n < 8)
			emitf(e, "\tand.b64 %%t%u, %%t%u, 0x%llx;\n", dst, dst,
			      (unsigned long long)low_mask(n));
	} else {
		unsigned tmp = new_t(e);

		emitf(e, "\tld%s.u8 %%t%u, [%%r%u+%d];\n", sp, dst, m->reg, at);
		for (unsigned i = 1; i < n; i++) {
			emitf(e, "\tld%s.u8 %%t%u, [%%r%u+%d];\n", sp, tmp, m->reg,
			      at + (int32_t)i);
			emitf(e, "\tshl.b64 %%t%u, %%t%u, %u;\n", tmp, tmp, 8 * i);
			emitf(e, "\tor.b64 %%t%u, %%t%u, %%t%u;\n", dst, dst, tmp);
		}
	}
}

void store_bytes(struct emit *e, const struct msrc *m, int32_t at, unsigned n, unsigned src)
{
	const char *sp = m->global ? ".global" : "";
	char name[16];

	snprintf(name, sizeof(name), "%%t%u", src);
	if (m->kind == MSRC_STACK) {
		slot_store(e, m->off + (int32_t)at, n, name);
	} else if (m->aligned8 && !(at % 8) && n == 8) {
		emitf(e, "\tst%s.u64 [%%r%u+%d], %%t%u;\n", sp, m->reg, at, src);
	} else {
		unsigned tmp = new_t(e);

		for (unsigned i = 0; i < n; i++) {
			emitf(e, "\tshr.u64 %%t%u, %%t%u, %u;\n", tmp, src, 8 * i);
			emitf(e, "\tst%s.u8 [%%r%u+%d], %%t%u;\n", sp, m->reg, at + (int32_t)i,
			      tmp);
		}
	}
}

/* --- arithmetic ------------------------------------------------------------------------- */

/* The source operand of an ALU/JMP instruction as text: a register or an immediate. */
static void src_operand(const struct bpf_insn *insn, bool is64, bool is_signed, char *buf,
			size_t len)
{
	if (BPF_INSN_SRC(insn->code) == BPF_X)
		snprintf(buf, len, "%%r%u", insn->src_reg);
	else if (is_signed)
		snprintf(buf, len, "%lld",
			 is64 ? (long long)insn->imm : (long long)(int32_t)insn->imm);
	else if (is64)
		snprintf(buf, len, "0x%llx", (unsigned long long)(int64_t)insn->imm);
	else
		snprintf(buf, len, "0x%x", (uint32_t)insn->imm);
}

static void emit_byte_swap(struct emit *e, const struct bpf_insn *insn)
{
	unsigned d = insn->dst_reg, bits = (unsigned)insn->imm;
	bool to_le = BPF_INSN_CLASS(insn->code) == BPF_ALU && BPF_INSN_SRC(insn->code) == BPF_TO_LE;
	unsigned w0, w1;

	if (to_le) { /* little-endian: only the width changes */
		if (bits < 64)
			emitf(e, "\tand.b64 %%r%u, %%r%u, 0x%llx;\n", d, d,
			      (unsigned long long)low_mask(bits / 8));
		return;
	}
	w0 = new_w(e);
	w1 = new_w(e);
	if (bits == 64) {
		emitf(e, "\tmov.b64 {%%w%u, %%w%u}, %%r%u;\n", w0, w1, d);
		emitf(e, "\tprmt.b32 %%w%u, %%w%u, 0, 0x0123;\n", w0, w0);
		emitf(e, "\tprmt.b32 %%w%u, %%w%u, 0, 0x0123;\n", w1, w1);
		emitf(e, "\tmov.b64 %%r%u, {%%w%u, %%w%u};\n", d, w1, w0);
		return;
	}
	emitf(e, "\tcvt.u32.u64 %%w%u, %%r%u;\n", w0, d);
	emitf(e, "\tprmt.b32 %%w%u, %%w%u, 0, %s;\n", w0, w0, bits == 16 ? "0x4401" : "0x0123");
	emitf(e, "\tcvt.u64.u32 %%r%u, %%w%u;\n", d, w0);
}

/* BPF division and modulo: x / 0 = 0, x % 0 = x; signed: x / -1 = -x, x % -1 = 0. */
static void emit_div(struct emit *e, const char *sz, const char *d, const char *s, uint8_t op,
		     bool is_signed, bool src_is_reg)
{
	bool mod = op == BPF_MOD;
	const char *inst = mod ? "rem" : "div";

	if (!src_is_reg && !is_signed) {
		emitf(e, "\t%s.u%s %s, %s, %s;\n", inst, sz, d, d, s);
		return;
	}
	{
		unsigned pz = new_p(e), pm = new_p(e);

		emitf(e, "\tsetp.eq.b%s %%p%u, %s, 0;\n", sz, pz, s);
		if (is_signed) {
			emitf(e, "\tsetp.eq.s%s %%p%u, %s, -1;\n", sz, pm, s);
			if (mod)
				emitf(e, "\t@%%p%u mov.b%s %s, 0;\n", pm, sz, d);
			else
				emitf(e, "\t@%%p%u neg.s%s %s, %s;\n", pm, sz, d, d);
			emitf(e, "\tor.pred %%p%u, %%p%u, %%p%u;\n", pm, pm, pz);
			if (!mod)
				emitf(e, "\t@%%p%u mov.b%s %s, 0;\n", pz, sz, d);
			emitf(e, "\t@!%%p%u %s.s%s %s, %s, %s;\n", pm, inst, sz, d, d, s);
		} else {
			if (!mod)
				emitf(e, "\t@%%p%u mov.b%s %s, 0;\n", pz, sz, d);
			emitf(e, "\t@!%%p%u %s.u%s %s, %s, %s;\n", pz, inst, sz, d, d, s);
		}
	}
}

static void emit_alu_op(struct emit *e, uint8_t op, bool is_signed, bool src_is_reg, const char *sz,
			const char *d, const char *s)
{
	static const struct {
		uint8_t op;
		const char *fmt; /* d, d, s with the width */
	} simple[] = {
	    {BPF_ADD, "add.s"}, {BPF_SUB, "sub.s"}, {BPF_MUL, "mul.lo.s"},
	    {BPF_OR, "or.b"},	{BPF_AND, "and.b"}, {BPF_XOR, "xor.b"},
	};

	for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (simple[i].op == op) {
			emitf(e, "\t%s%s %s, %s, %s;\n", simple[i].fmt, sz, d, d, s);
			return;
		}
	switch (op) {
	case BPF_DIV:
	case BPF_MOD:
		emit_div(e, sz, d, s, op, is_signed, src_is_reg);
		return;
	case BPF_NEG:
		emitf(e, "\tneg.s%s %s, %s;\n", sz, d, d);
		return;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH: {
		const char *inst = op == BPF_LSH ? "shl.b" : op == BPF_RSH ? "shr.u" : "shr.s";

		if (!src_is_reg) {
			emitf(e, "\t%s%s %s, %s, %s;\n", inst, sz, d, d, s);
		} else { /* BPF masks the amount to the width; PTX clamps instead */
			unsigned w = new_w(e);

			if (sz[0] == '6')
				emitf(e, "\tcvt.u32.u64 %%w%u, %s;\n", w, s);
			else
				emitf(e, "\tmov.b32 %%w%u, %s;\n", w, s);
			emitf(e, "\tand.b32 %%w%u, %%w%u, %s;\n", w, w, sz[0] == '6' ? "63" : "31");
			emitf(e, "\t%s%s %s, %s, %%w%u;\n", inst, sz, d, d, w);
		}
		return;
	}
	}
}

static void emit_mov(struct emit *e, const struct bpf_insn *insn, bool is64)
{
	unsigned d = insn->dst_reg;

	if (BPF_INSN_SRC(insn->code) == BPF_K) {
		emitf(e, "\tmov.b64 %%r%u, 0x%llx;\n", d,
		      is64 ? (unsigned long long)(int64_t)insn->imm
			   : (unsigned long long)(uint32_t)insn->imm);
		return;
	}
	if (insn->off) { /* movsx: sign-extend the low off bits */
		emitf(e, "\tshl.b64 %%r%u, %%r%u, %d;\n", d, insn->src_reg, 64 - insn->off);
		emitf(e, "\tshr.s64 %%r%u, %%r%u, %d;\n", d, d, 64 - insn->off);
	} else if (d != insn->src_reg || !is64) {
		emitf(e, "\tmov.b64 %%r%u, %%r%u;\n", d, insn->src_reg);
	}
	if (!is64)
		emitf(e, "\tand.b64 %%r%u, %%r%u, 0xffffffff;\n", d, d);
}

static void emit_alu(struct emit *e, const struct bpf_insn *insn)
{
	bool is64 = BPF_INSN_CLASS(insn->code) == BPF_ALU64;
	uint8_t op = BPF_INSN_OP(insn->code);
	bool is_signed = (op == BPF_DIV || op == BPF_MOD) && insn->off == 1;
	bool src_is_reg = BPF_INSN_SRC(insn->code) == BPF_X;
	char d[16], s[32];

	if (op == BPF_END) {
		emit_byte_swap(e, insn);
		return;
	}
	if (op == BPF_MOV) {
		emit_mov(e, insn, is64);
		return;
	}
	if (is64) {
		snprintf(d, sizeof(d), "%%r%u", insn->dst_reg);
		src_operand(insn, true, is_signed, s, sizeof(s));
		emit_alu_op(e, op, is_signed, src_is_reg, "64", d, s);
		return;
	}
	{
		unsigned wd = new_w(e);

		emitf(e, "\tcvt.u32.u64 %%w%u, %%r%u;\n", wd, insn->dst_reg);
		snprintf(d, sizeof(d), "%%w%u", wd);
		if (src_is_reg && op != BPF_NEG) {
			unsigned ws = new_w(e);

			emitf(e, "\tcvt.u32.u64 %%w%u, %%r%u;\n", ws, insn->src_reg);
			snprintf(s, sizeof(s), "%%w%u", ws);
		} else {
			src_operand(insn, false, is_signed, s, sizeof(s));
		}
		emit_alu_op(e, op, is_signed, src_is_reg, "32", d, s);
		emitf(e, "\tcvt.u64.u32 %%r%u, %%w%u;\n", insn->dst_reg, wd);
	}
}

/* --- jumps ------------------------------------------------------------------------------ */

static void emit_cond_jump(struct emit *e, const struct bpf_insn *insn, size_t target)
{
	static const struct {
		uint8_t op;
		const char *cmp;
		char type; /* 'b' bits, 'u' unsigned, 's' signed */
	} ops[] = {
	    {BPF_JEQ, "eq", 'b'},  {BPF_JNE, "ne", 'b'},  {BPF_JGT, "gt", 'u'},
	    {BPF_JGE, "ge", 'u'},  {BPF_JLT, "lt", 'u'},  {BPF_JLE, "le", 'u'},
	    {BPF_JSGT, "gt", 's'}, {BPF_JSGE, "ge", 's'}, {BPF_JSLT, "lt", 's'},
	    {BPF_JSLE, "le", 's'}, {BPF_JSET, "ne", 'b'},
	};
	bool is64 = BPF_INSN_CLASS(insn->code) == BPF_JMP;
	uint8_t op = BPF_INSN_OP(insn->code);
	const char *sz = is64 ? "64" : "32";
	unsigned p = new_p(e);
	char d[16], s[32];
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]) && ops[i].op != op; i++)
		;
	if (is64) {
		snprintf(d, sizeof(d), "%%r%u", insn->dst_reg);
		src_operand(insn, true, ops[i].type == 's', s, sizeof(s));
	} else {
		unsigned wd = new_w(e);

		emitf(e, "\tcvt.u32.u64 %%w%u, %%r%u;\n", wd, insn->dst_reg);
		snprintf(d, sizeof(d), "%%w%u", wd);
		if (BPF_INSN_SRC(insn->code) == BPF_X) {
			unsigned ws = new_w(e);

			emitf(e, "\tcvt.u32.u64 %%w%u, %%r%u;\n", ws, insn->src_reg);
			snprintf(s, sizeof(s), "%%w%u", ws);
		} else {
			src_operand(insn, false, ops[i].type == 's', s, sizeof(s));
		}
	}
	if (op == BPF_JSET) {
		if (is64) {
			unsigned t = new_t(e);

			emitf(e, "\tand.b64 %%t%u, %s, %s;\n", t, d, s);
			emitf(e, "\tsetp.ne.b64 %%p%u, %%t%u, 0;\n", p, t);
		} else {
			unsigned w = new_w(e);

			emitf(e, "\tand.b32 %%w%u, %s, %s;\n", w, d, s);
			emitf(e, "\tsetp.ne.b32 %%p%u, %%w%u, 0;\n", p, w);
		}
	} else {
		emitf(e, "\tsetp.%s.%c%s %%p%u, %s, %s;\n", ops[i].cmp, ops[i].type, sz, p, d, s);
	}
	emitf(e, "\t@%%p%u bra $L%zu;\n", p, target);
}

/* --- memory ----------------------------------------------------------------------------- */

static void emit_ld_imm64(struct emit *e, const struct bpf_insn *insn)
{
	unsigned d = insn->dst_reg;

	if (insn->src_reg == BPF_PSEUDO_MAP_FD) {
		emitf(e, "\tmov.b64 %%r%u, 0;\n", d); /* maps are resolved statically */
		return;
	}
	if (insn->src_reg == BPF_PSEUDO_MAP_VALUE) {
		const struct gpubpf_map *m = &e->obj->maps[insn->imm];

		if (!(e->rodata_declared & (1ull << insn->imm))) {
			strbuf_printf(&e->decls, ".global .align 8 .b8 %s_ro%d[%u] = {",
				      e->opts->name, insn->imm, grt_bpf_stride(m->value_size));
			for (uint32_t i = 0; i < grt_bpf_stride(m->value_size); i++)
				strbuf_printf(&e->decls, "%s%u", i ? "," : "",
					      i < m->value_size ? m->data[i] : 0);
			strbuf_puts(&e->decls, "};\n");
			e->rodata_declared |= 1ull << insn->imm;
		}
		emitf(e, "\tmov.u64 %%r%u, %s_ro%d;\n", d, e->opts->name, insn->imm);
		emitf(e, "\tcvta.global.u64 %%r%u, %%r%u;\n", d, d);
		if (insn[1].imm)
			emitf(e, "\tadd.s64 %%r%u, %%r%u, %d;\n", d, d, insn[1].imm);
		return;
	}
	emitf(e, "\tmov.b64 %%r%u, 0x%llx;\n", d,
	      (unsigned long long)((uint64_t)(uint32_t)insn->imm | (uint64_t)(uint32_t)insn[1].imm
								       << 32));
}

/* A read of the context: the matching argument, shifted and masked. */
static int emit_ctx_read(struct emit *e, const struct bpf_insn *insn, int32_t off)
{
	unsigned size = bpf_size_bytes(insn->code), field, field_off, arg;
	bool sx = BPF_INSN_MODE(insn->code) == BPF_MEMSX;

	if (e->prog->attach == GRT_BPF_ATTACH_MEMCAPTURE) {
		static const unsigned offs[] = {0, 8, 12, 16, 20};

		for (field = GRT_BPF_MCTX_NR_FIELDS - 1; field > 0 && (int32_t)offs[field] > off;
		     field--)
			;
		field_off = offs[field];
	} else {
		field = off < 8 * GRT_BPF_CTX_PARAMS ? (unsigned)off / 8 : GRT_BPF_KCTX_KERNEL_ID;
		field_off = field * 8;
	}
	if (!(e->ver->ctx_fields & (1u << field)))
		return emit_err(e, "context field at offset %d was not seen by the verifier", off);
	arg = (unsigned)__builtin_popcount(e->ver->ctx_fields & ((1u << field) - 1));
	if ((unsigned)off == field_off && size == 8)
		emitf(e, "\tmov.b64 %%r%u, %%c%u;\n", insn->dst_reg, arg);
	else
		emitf(e, "\tbfe.%s64 %%r%u, %%c%u, %u, %u;\n", sx ? "s" : "u", insn->dst_reg, arg,
		      8 * ((unsigned)off - field_off), 8 * size);
	return 0;
}

/* An atomic on the stack: the stack is the thread's own, so plain operations do. */
static void emit_stack_atomic(struct emit *e, const struct bpf_insn *insn, const struct msrc *m,
			      int32_t at, unsigned size)
{
	int32_t op = insn->imm;
	unsigned old = new_t(e), val = new_t(e);
	static const char *const names[16] = {[BPF_ADD >> 4] = "add.s64",
					      [BPF_OR >> 4] = "or.b64",
					      [BPF_AND >> 4] = "and.b64",
					      [BPF_XOR >> 4] = "xor.b64"};

	load_bytes(e, m, at, size, old);
	if (op == BPF_CMPXCHG) {
		unsigned p = new_p(e), r0 = new_t(e);

		emitf(e, "\tand.b64 %%t%u, %%r0, 0x%llx;\n", r0,
		      (unsigned long long)low_mask(size));
		emitf(e, "\tsetp.eq.b64 %%p%u, %%t%u, %%t%u;\n", p, old, r0);
		emitf(e, "\tmov.b64 %%t%u, %%t%u;\n", val, old);
		emitf(e, "\t@%%p%u mov.b64 %%t%u, %%r%u;\n", p, val, insn->src_reg);
		store_bytes(e, m, at, size, val);
		emitf(e, "\tmov.b64 %%r0, %%t%u;\n", old);
		return;
	}
	if (op == BPF_XCHG)
		emitf(e, "\tmov.b64 %%t%u, %%r%u;\n", val, insn->src_reg);
	else
		emitf(e, "\t%s %%t%u, %%t%u, %%r%u;\n", names[(op & 0xf0) >> 4], val, old,
		      insn->src_reg);
	store_bytes(e, m, at, size, val);
	if (op & BPF_FETCH)
		emitf(e, "\tmov.b64 %%r%u, %%t%u;\n", insn->src_reg, old);
}

/*
 * add/or/and/xor of one constant, result unused: the lanes of the warp that
 * hit the same address (match.any) let their lowest lane apply the combined
 * operation once, so a counter every thread bumps takes one atomic per warp.
 */
static bool emit_warp_combined(struct emit *e, const struct bpf_insn *insn, unsigned size)
{
	const struct gpubpf_insn_info *info = &e->ver->info[e->pc];
	int32_t op = insn->imm;
	uint64_t c = info->src_value & (size == 8 ? ~0ull : 0xffffffffull);
	const char *sz = size == 8 ? "64" : "32";
	unsigned a, m, peers, lt, n, lead, odd, v;

	if (info->src_known != GPUBPF_SRC_CONST ||
	    (op != BPF_ADD && op != BPF_OR && op != BPF_AND && op != BPF_XOR))
		return false;
	a = new_t(e);
	m = new_w(e);
	peers = new_w(e);
	lt = new_w(e);
	n = new_w(e);
	lead = new_p(e);
	emitf(e, "\tadd.s64 %%t%u, %%r%u, %d;\n", a, insn->dst_reg, insn->off);
	emitf(e, "\tactivemask.b32 %%w%u;\n", m);
	emitf(e, "\tmatch.any.sync.b64 %%w%u, %%t%u, %%w%u;\n", peers, a, m);
	emitf(e, "\tmov.u32 %%w%u, %%lanemask_lt;\n", lt);
	emitf(e, "\tand.b32 %%w%u, %%w%u, %%w%u;\n", lt, lt, peers);
	emitf(e, "\tsetp.eq.u32 %%p%u, %%w%u, 0;\n", lead, lt);
	emitf(e, "\tpopc.b32 %%w%u, %%w%u;\n", n, peers);
	if (op == BPF_OR || op == BPF_AND) { /* idempotent: once is all of them */
		emitf(e, "\t@%%p%u red.global.%s.b%s [%%t%u], 0x%llx;\n", lead,
		      op == BPF_OR ? "or" : "and", sz, a, (unsigned long long)c);
		return true;
	}
	if (op == BPF_XOR) { /* c an odd number of times is c, an even number 0 */
		odd = new_p(e);
		v = new_w(e);
		emitf(e, "\tand.b32 %%w%u, %%w%u, 1;\n", v, n);
		emitf(e, "\tsetp.ne.u32 %%p%u, %%w%u, 0;\n", odd, v);
		emitf(e, "\tand.pred %%p%u, %%p%u, %%p%u;\n", lead, lead, odd);
		emitf(e, "\t@%%p%u red.global.xor.b%s [%%t%u], 0x%llx;\n", lead, sz, a,
		      (unsigned long long)c);
		return true;
	}
	if (size == 8) {
		v = new_t(e);
		emitf(e, "\tcvt.u64.u32 %%t%u, %%w%u;\n", v, n);
		emitf(e, "\tmul.lo.u64 %%t%u, %%t%u, 0x%llx;\n", v, v, (unsigned long long)c);
		emitf(e, "\t@%%p%u red.global.add.u64 [%%t%u], %%t%u;\n", lead, a, v);
	} else {
		v = new_w(e);
		emitf(e, "\tmul.lo.u32 %%w%u, %%w%u, 0x%llx;\n", v, n, (unsigned long long)c);
		emitf(e, "\t@%%p%u red.global.add.u32 [%%t%u], %%w%u;\n", lead, a, v);
	}
	return true;
}

static int emit_global_atomic(struct emit *e, const struct bpf_insn *insn, const char *addr,
			      unsigned size)
{
	int32_t op = insn->imm;
	bool fetch = op & BPF_FETCH;
	const char *sz = size == 8 ? "64" : "32";
	const char *kind = (op & ~BPF_FETCH) == BPF_ADD	  ? "add.u"
			   : (op & ~BPF_FETCH) == BPF_OR  ? "or.b"
			   : (op & ~BPF_FETCH) == BPF_AND ? "and.b"
			   : (op & ~BPF_FETCH) == BPF_XOR ? "xor.b"
			   : op == BPF_XCHG		  ? "exch.b"
							  : "cas.b";
	char src[16], cmp[16], dst[16];
	unsigned ws = 0, wc = 0, wd = 0;

	snprintf(src, sizeof(src), "%%r%u", insn->src_reg);
	snprintf(cmp, sizeof(cmp), "%%r0");
	if (size == 4) {
		ws = new_w(e);
		emitf(e, "\tcvt.u32.u64 %%w%u, %%r%u;\n", ws, insn->src_reg);
		snprintf(src, sizeof(src), "%%w%u", ws);
		if (op == BPF_CMPXCHG) {
			wc = new_w(e);
			emitf(e, "\tcvt.u32.u64 %%w%u, %%r0;\n", wc);
			snprintf(cmp, sizeof(cmp), "%%w%u", wc);
		}
	}
	if (!fetch) {
		if (!emit_warp_combined(e, insn, size))
			emitf(e, "\tred.global.%s%s [%s], %s;\n", kind, sz, addr, src);
		return 0;
	}
	if (size == 4) {
		wd = new_w(e);
		snprintf(dst, sizeof(dst), "%%w%u", wd);
	} else {
		snprintf(dst, sizeof(dst), "%%r%u", op == BPF_CMPXCHG ? 0 : insn->src_reg);
	}
	if (op == BPF_CMPXCHG)
		emitf(e, "\tatom.global.cas.b%s %s, [%s], %s, %s;\n", sz, dst, addr, cmp, src);
	else
		emitf(e, "\tatom.global.%s%s %s, [%s], %s;\n", kind, sz, dst, addr, src);
	if (size == 4)
		emitf(e, "\tcvt.u64.u32 %%r%u, %%w%u;\n", op == BPF_CMPXCHG ? 0 : insn->src_reg,
		      wd);
	return 0;
}

bool l2_hinted(const struct emit *e, const struct gpubpf_ptr_info *p)
{
	return (e->opts->variants & GPUBPF_VARIANT_L2_EVICT_LAST) && p->bases == GPUBPF_BASE_MAP &&
	       p->map >= 0 && e->obj->maps[p->map].type == GRT_BPF_MAP_PERGPUTD_ARRAY;
}

void emit_access(struct emit *e, bool hinted, const char *op, const char *type,
		 const char *operands)
{
	if (!hinted) {
		emitf(e, "\t%s.%s %s;\n", op, type, operands);
		return;
	}
	e->l2_policy = true;
	emitf(e, "\t%s.%s %s;" GPUBPF_SM80_MARK "%s.L2::cache_hint.%s %s, %%l2p;\n", op, type,
	      operands, op, type, operands);
}

static int emit_mem(struct emit *e, const struct bpf_insn *insn)
{
	const struct gpubpf_ptr_info *p = &e->ver->info[e->pc].mem;
	uint8_t cls = BPF_INSN_CLASS(insn->code);
	unsigned size = bpf_size_bytes(insn->code),
		 base = cls == BPF_LDX ? insn->src_reg : insn->dst_reg;
	bool sx = BPF_INSN_MODE(insn->code) == BPF_MEMSX;
	bool atomic = cls == BPF_STX && BPF_INSN_MODE(insn->code) == BPF_ATOMIC;
	const char *sp = p->bases & GPUBPF_BASE_STACK ? "" : ".global";
	char addr[32], val[32], type[8], ops[80];

	if (p->bases == GPUBPF_BASE_CTX)
		return emit_ctx_read(e, insn, p->off);
	if (p->bases & GPUBPF_BASE_CTX)
		return emit_err(e, "the context and other memory reach this access");
	if (p->bases == GPUBPF_BASE_STACK && e->promoted) {
		struct msrc m = {.kind = MSRC_STACK, .off = p->stack_off};
		unsigned t = new_t(e);

		if (atomic) {
			emit_stack_atomic(e, insn, &m, 0, size);
		} else if (cls == BPF_LDX) {
			load_bytes(e, &m, 0, size, t);
			if (sx)
				emitf(e, "\tbfe.s64 %%r%u, %%t%u, 0, %u;\n", insn->dst_reg, t,
				      8 * size);
			else
				emitf(e, "\tmov.b64 %%r%u, %%t%u;\n", insn->dst_reg, t);
		} else {
			if (cls == BPF_ST)
				emitf(e, "\tmov.b64 %%t%u, 0x%llx;\n", t,
				      (unsigned long long)(int64_t)insn->imm);
			else
				emitf(e, "\tmov.b64 %%t%u, %%r%u;\n", t, insn->src_reg);
			store_bytes(e, &m, 0, size, t);
		}
		return 0;
	}
	if (cls == BPF_LDX && p->bases == GPUBPF_BASE_MAP && p->map >= 0 &&
	    e->obj->maps[p->map].rodata && p->off != GPUBPF_OFF_VARIES && !sx) {
		struct msrc m = {.kind = MSRC_RODATA, .map = p->map, .off = p->off};
		unsigned t = new_t(e);

		load_bytes(e, &m, 0, size, t);
		emitf(e, "\tmov.b64 %%r%u, %%t%u;\n", insn->dst_reg, t);
		return 0;
	}
	snprintf(addr, sizeof(addr), "%%r%u+%d", base, insn->off);
	if (atomic) {
		if (p->bases == GPUBPF_BASE_STACK) { /* the .local stack: the thread's own */
			struct msrc m = {.kind = MSRC_ADDR, .reg = base};

			m.aligned8 = p->stack_off != GPUBPF_OFF_VARIES && !(p->stack_off % 8);
			emit_stack_atomic(e, insn, &m, insn->off, size);
			return 0;
		}
		if (p->bases & GPUBPF_BASE_STACK)
			return emit_err(e, "atomic on memory that is the stack on some paths");
		return emit_global_atomic(e, insn, addr, size);
	}
	if (cls == BPF_LDX) {
		snprintf(type, sizeof(type), "%c%u", sx ? 's' : 'u', 8 * size);
		snprintf(ops, sizeof(ops), "%%r%u, [%s]", insn->dst_reg, addr);
		emit_access(e, l2_hinted(e, p), *sp ? "ld.global" : "ld", type, ops);
		return 0;
	}
	if (cls == BPF_ST)
		snprintf(val, sizeof(val), "0x%llx",
			 (unsigned long long)((uint64_t)(int64_t)insn->imm & low_mask(size)));
	else
		snprintf(val, sizeof(val), "%%r%u", insn->src_reg);
	snprintf(type, sizeof(type), "u%u", 8 * size);
	snprintf(ops, sizeof(ops), "[%s], %s", addr, val);
	emit_access(e, l2_hinted(e, p), *sp ? "st.global" : "st", type, ops);
	return 0;
}

/* --- the program ------------------------------------------------------------------------ */

static bool *jump_targets(const struct gpubpf_prog *prog)
{
	bool *t = calloc(prog->nr_insns + 1, sizeof(*t));

	for (size_t pc = 0; t && pc < prog->nr_insns; pc++) {
		const struct bpf_insn *insn = &prog->insns[pc];
		uint8_t cls = BPF_INSN_CLASS(insn->code), op = BPF_INSN_OP(insn->code);
		int64_t target;

		if (bpf_is_ld_imm64(insn)) {
			pc++;
			continue;
		}
		if ((cls != BPF_JMP && cls != BPF_JMP32) || op == BPF_CALL || op == BPF_EXIT)
			continue;
		target =
		    (int64_t)pc + 1 + (cls == BPF_JMP32 && op == BPF_JA ? insn->imm : insn->off);
		if (target >= 0 && (size_t)target < prog->nr_insns)
			t[target] = true;
	}
	return t;
}

static int emit_insn(struct emit *e, const struct bpf_insn *insn)
{
	uint8_t cls = BPF_INSN_CLASS(insn->code), op = BPF_INSN_OP(insn->code);

	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		emit_alu(e, insn);
		return 0;
	case BPF_LD:
		emit_ld_imm64(e, insn);
		return 0;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		return emit_mem(e, insn);
	}
	if (op == BPF_JA) {
		emitf(e, "\tbra $L%zu;\n",
		      (size_t)((int64_t)e->pc + 1 + (cls == BPF_JMP32 ? insn->imm : insn->off)));
		return 0;
	}
	if (op == BPF_EXIT) {
		emitf(e, "\tbra $Lexit;\n");
		return 0;
	}
	if (op == BPF_CALL)
		return emit_call(e, insn);
	emit_cond_jump(e, insn, (size_t)((int64_t)e->pc + 1 + insn->off));
	return 0;
}

/* Declarations and set-up that precede the code, known only once the code is emitted. */
static void emit_prologue(struct emit *e, struct strbuf *out, uint32_t local_bytes)
{
	strbuf_printf(out, "\t.reg .b64 %%r<11>;\n");
	if (e->max_t)
		strbuf_printf(out, "\t.reg .b64 %%t<%u>;\n", e->max_t);
	if (e->max_w)
		strbuf_printf(out, "\t.reg .b32 %%w<%u>;\n", e->max_w);
	if (e->max_p)
		strbuf_printf(out, "\t.reg .pred %%p<%u>;\n", e->max_p);
	if (e->slots_used)
		strbuf_printf(out, "\t.reg .b64 %%s<%u>;\n", 64 - __builtin_clzll(e->slots_used));
	if (e->need_thread_id)
		strbuf_printf(out, "\t.reg .b64 %%gtid;\n\t.reg .b32 %%gw<8>;\n");
	if (e->early_read)
		strbuf_puts(out, "\t.reg .b64 %xw;\n");
	if (e->l2_policy) /* declared on every target, set only where it is used */
		strbuf_puts(out, "\t.reg .b64 %l2p;\n\t" GPUBPF_SM80_MARK
				 "createpolicy.fractional.L2::evict_last.b64 %l2p, 1.0;\n");
	if (local_bytes)
		strbuf_printf(out, "\t.local .align 8 .b8 stk[%u];\n", local_bytes);
	strbuf_puts(out, "\tmov.b64 %r1, 0;\n");
	for (unsigned s = 0; s < 64; s++)
		if (e->slots_used & (1ull << s))
			strbuf_printf(out, "\tmov.b64 %%s%u, 0;\n", s);
	if (local_bytes) {
		strbuf_printf(out, "\tmov.u64 %%r10, stk;\n\tcvta.local.u64 %%r10, %%r10;\n");
		strbuf_printf(out, "\tadd.s64 %%r10, %%r10, %u;\n", local_bytes);
		for (unsigned s = 0; s < 64; s++)
			if ((e->ver->stack_zeroed & (1ull << s)) && 8 * (s + 1) <= local_bytes)
				strbuf_printf(out, "\tst.u64 [%%r10+-%u], 0;\n", 8 * (s + 1));
	} else {
		strbuf_puts(out, "\tmov.b64 %r10, 0;\n");
	}
	if (e->need_thread_id) { /* block_linear * block_threads + thread_linear (gpu_abi.h) */
		strbuf_puts(out, "\tmov.u32 %gw0, %ctaid.z;\n"
				 "\tmov.u32 %gw1, %nctaid.y;\n"
				 "\tmul.wide.u32 %gtid, %gw0, %gw1;\n"
				 "\tmov.u32 %gw0, %ctaid.y;\n"
				 "\tcvt.u64.u32 %r0, %gw0;\n"
				 "\tadd.u64 %gtid, %gtid, %r0;\n"
				 "\tmov.u32 %gw0, %nctaid.x;\n"
				 "\tcvt.u64.u32 %r0, %gw0;\n"
				 "\tmul.lo.u64 %gtid, %gtid, %r0;\n"
				 "\tmov.u32 %gw0, %ctaid.x;\n"
				 "\tcvt.u64.u32 %r0, %gw0;\n"
				 "\tadd.u64 %gtid, %gtid, %r0;\n"
				 "\tmov.u32 %gw0, %ntid.x;\n"
				 "\tmov.u32 %gw1, %ntid.y;\n"
				 "\tmov.u32 %gw2, %ntid.z;\n"
				 "\tmul.lo.u32 %gw3, %gw0, %gw1;\n"
				 "\tmul.lo.u32 %gw3, %gw3, %gw2;\n"
				 "\tmov.u32 %gw4, %tid.z;\n"
				 "\tmov.u32 %gw5, %tid.y;\n"
				 "\tmad.lo.u32 %gw4, %gw4, %gw1, %gw5;\n"
				 "\tmov.u32 %gw5, %tid.x;\n"
				 "\tmad.lo.u32 %gw4, %gw4, %gw0, %gw5;\n"
				 "\tcvt.u64.u32 %r0, %gw3;\n"
				 "\tmul.lo.u64 %gtid, %gtid, %r0;\n"
				 "\tcvt.u64.u32 %r0, %gw4;\n"
				 "\tadd.u64 %gtid, %gtid, %r0;\n");
	}
}

int gpubpf_translate(const struct gpubpf_object *obj, const struct gpubpf_prog *prog,
		     const struct gpubpf_verified *ver, const struct gpubpf_translate_opts *opts,
		     struct gpubpf_translation *out, char *err, size_t err_len)
{
	struct emit e = {
	    .obj = obj, .prog = prog, .ver = ver, .opts = opts, .err = err, .err_len = err_len};
	struct strbuf body = {0}, early = {0};
	bool *targets = jump_targets(prog);
	uint32_t local_bytes = 0;
	int rc = 0, fused;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", opts->name);
	out->attach = prog->attach;
	out->ctx_fields = ver->ctx_fields;
	out->nr_args = (unsigned)__builtin_popcount(ver->ctx_fields);
	e.promoted = ver->stack_fixed;
	if (!e.promoted)
		local_bytes = (uint32_t)grt_bpf_stride((uint32_t)-ver->stack_low);
	if (!targets) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	for (e.pc = 0; e.pc < prog->nr_insns && !rc; e.pc++) {
		const struct bpf_insn *insn = &prog->insns[e.pc];

		if (targets[e.pc])
			emitf(&e, "$L%zu:\n", e.pc);
		e.nt = e.nw = e.np = 0;
		if (ver->info[e.pc].seen && (fused = emit_fused_add(&e, targets)))
			e.pc += fused - 1;
		else if (ver->info[e.pc].seen)
			rc = emit_insn(&e, insn);
		if (bpf_is_ld_imm64(insn))
			e.pc++;
	}
	emitf(&e, "$Lexit:\n");
	free(targets);
	if (!rc && e.early_read) { /* its own text: it goes after the prologue, before the code */
		struct strbuf code = e.b;

		e.b = (struct strbuf){0};
		e.nt = e.nw = e.np = 0;
		emit_ring_early_read(&e);
		early = e.b;
		e.b = code;
	}
	if (!rc) {
		emit_prologue(&e, &body, local_bytes);
		strbuf_add(&body, early.s ? early.s : "", early.len);
		strbuf_add(&body, e.b.s ? e.b.s : "", e.b.len);
		out->body = strbuf_take(&body, NULL);
		out->decls = e.decls.s ? strbuf_take(&e.decls, NULL) : strdup("");
		if (!out->body || !out->decls || e.b.failed) {
			snprintf(err, err_len, "out of memory");
			rc = -ENOMEM;
		}
	}
	out->ptx_insns = e.insns;
	out->stack_in_registers = e.promoted;
	out->stack_bytes = local_bytes;
	strbuf_free(&e.b);
	strbuf_free(&e.decls);
	strbuf_free(&body);
	strbuf_free(&early);
	return rc;
}

const char *gpubpf_ptx_version_for(const char *arch)
{
	static const struct {
		unsigned sm;
		const char *version;
	} table[] = {
	    {75, "6.3"}, {80, "7.0"},  {86, "7.1"},  {87, "7.4"},  {89, "7.8"},
	    {90, "7.8"}, {100, "8.6"}, {101, "8.6"}, {120, "8.7"},
	};
	unsigned sm;

	if (!arch || sscanf(arch, "sm_%u", &sm) != 1)
		return NULL;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].sm == sm)
			return table[i].version;
	return NULL;
}
