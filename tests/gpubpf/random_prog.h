/* Random eBPF programs: arithmetic for the kernel oracle, and programs using memory and helpers. */
#ifndef GRT_TESTS_RANDOM_PROG_H
#define GRT_TESTS_RANDOM_PROG_H

#include <stdint.h>
#include "gpubpf/gpubpf_test.h"
#include "trace_gen.h"

/* The tests' one seeded generator (trace_gen.h). */
#define rprog_rng gen_rng
#define rprog_next gen_next
#define rprog_below gen_below

/* Values where arithmetic has edges: zero, one, signs, widths, carries. */
static inline uint64_t rprog_value(struct rprog_rng *r)
{
	static const uint64_t edges[] = {0,
					 1,
					 2,
					 3,
					 7,
					 31,
					 32,
					 63,
					 64,
					 0xff,
					 0x8000,
					 0xffff,
					 0x7fffffff,
					 0x80000000,
					 0xffffffff,
					 0x100000000ull,
					 0x7fffffffffffffffull,
					 0x8000000000000000ull,
					 ~0ull,
					 ~0ull - 1,
					 0x123456789abcdef0ull};

	return rprog_below(r, 3) ? edges[rprog_below(r, sizeof(edges) / sizeof(edges[0]))]
				 : rprog_next(r);
}

static const uint8_t rprog_alu_ops[] = {BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR,
					BPF_AND, BPF_LSH, BPF_RSH, BPF_NEG, BPF_MOD,
					BPF_XOR, BPF_MOV, BPF_ARSH};
static const uint8_t rprog_jmp_ops[] = {BPF_JEQ,  BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT,
					BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE};

/* One arithmetic instruction on r6..r9 (with v4: sign-extending moves, signed division, bswap). */
static inline struct bpf_insn rprog_alu_insn(struct rprog_rng *r, bool v4)
{
	uint8_t cls = rprog_below(r, 2) ? BPF_ALU64 : BPF_ALU;
	uint8_t op = rprog_alu_ops[rprog_below(r, sizeof(rprog_alu_ops))];
	unsigned dst = 6 + rprog_below(r, 4), src = 6 + rprog_below(r, 4),
		 bits = cls == BPF_ALU64 ? 64 : 32;
	int32_t imm = (int32_t)rprog_value(r);
	uint32_t pick = rprog_below(r, 10);

	if (pick == 0) { /* byte swap */
		static const int widths[] = {16, 32, 64};
		bool bswap = v4 && rprog_below(r, 3) == 0;

		return I((bswap ? BPF_ALU64 : BPF_ALU) | BPF_END |
			     (bswap		  ? BPF_TO_LE
			      : rprog_below(r, 2) ? BPF_TO_BE
						  : BPF_TO_LE),
			 dst, 0, 0, widths[rprog_below(r, 3)]);
	}
	if (v4 && pick == 1) { /* movsx */
		static const int16_t offs[] = {8, 16, 32};
		int16_t off = offs[rprog_below(r, cls == BPF_ALU64 ? 3 : 2)];

		return I(cls | BPF_MOV | BPF_X, dst, src, off, 0);
	}
	if (v4 && pick == 2) { /* signed division and modulo */
		op = rprog_below(r, 2) ? BPF_DIV : BPF_MOD;
		if (rprog_below(r, 2))
			return I(cls | op | BPF_X, dst, src, 1, 0);
		return I(cls | op | BPF_K, dst, 0, 1, imm ? imm : -1);
	}
	if (op == BPF_NEG)
		return I(cls | BPF_NEG | BPF_K, dst, 0, 0, 0);
	if (rprog_below(r, 2))
		return I(cls | op | BPF_X, dst, src, 0, 0);
	if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
		imm = (int32_t)rprog_below(r, bits);
	if ((op == BPF_DIV || op == BPF_MOD) && !imm)
		imm = 3;
	return I(cls | op | BPF_K, dst, 0, 0, imm);
}

/*
 * A pure arithmetic program: r6..r9 from constants, count instructions or
 * jumps over one, ending with the registers folded into a 32-bit r0 (what a
 * socket filter's test run returns). Returns the number of instructions.
 */
static inline size_t rprog_alu(struct rprog_rng *r, struct bpf_insn *out, unsigned count, bool v4)
{
	size_t n = 0;

	for (unsigned reg = 6; reg <= 9; reg++) {
		uint64_t v = rprog_value(r);

		out[n++] = I(BPF_LD | BPF_IMM | BPF_DW, reg, 0, 0, (int32_t)(uint32_t)v);
		out[n++] = I(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
	}
	for (unsigned i = 0; i < count; i++) {
		if (rprog_below(r, 5) == 0) {
			uint8_t cls = rprog_below(r, 2) ? BPF_JMP : BPF_JMP32;
			uint8_t op = rprog_jmp_ops[rprog_below(r, sizeof(rprog_jmp_ops))];
			unsigned dst = 6 + rprog_below(r, 4), src = 6 + rprog_below(r, 4);

			out[n++] = rprog_below(r, 2)
				       ? I(cls | op | BPF_X, dst, src, 1, 0)
				       : I(cls | op | BPF_K, dst, 0, 1, (int32_t)rprog_value(r));
		}
		out[n++] = rprog_alu_insn(r, v4);
	}
	out[n++] = MOV64_REG(0, 6);
	out[n++] = ALU64_REG(BPF_XOR, 0, 7);
	out[n++] = ALU64_REG(BPF_ADD, 0, 8);
	out[n++] = ALU64_REG(BPF_XOR, 0, 9);
	out[n++] = MOV64_REG(1, 0);
	out[n++] = ALU64_IMM(BPF_RSH, 1, 32);
	out[n++] = ALU64_REG(BPF_XOR, 0, 1);
	out[n++] = ALU32_REG(BPF_MOV, 0, 0);
	out[n++] = EXIT();
	return n;
}

/*
 * A program touching everything the translator handles: the context, the
 * stack, a GPU array value (loads, stores, atomics), helpers (time, indices,
 * SM, pid, ktime, ring output, hash update and lookup), jumps. Maps expected:
 * 0 a GPU array with 64-byte values, 1 a GPU ring of 32-byte values, 2 a
 * hash with 8-byte keys and values. Most results verify; those that do not
 * exercise the verifier.
 */
static inline size_t rprog_full(struct rprog_rng *r, struct bpf_insn *out, unsigned count)
{
	size_t n = 0;
	unsigned stack_slots = 8; /* fp-8 .. fp-64 written first */

	out[n++] = MOV64_REG(6, 1);
	for (unsigned s = 1; s <= stack_slots; s++)
		out[n++] = ST(BPF_DW, 10, -8 * (int16_t)s, (int32_t)rprog_value(r));
	out[n++] = ST(BPF_W, 10, -4, (int32_t)rprog_below(r, 4));
	out[n++] = MOV64_REG(2, 10);
	out[n++] = ALU64_IMM(BPF_ADD, 2, -4);
	out[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 0);
	out[n++] = I(0, 0, 0, 0, 0);
	out[n++] = CALL(1);
	out[n++] = JMP_IMM(BPF_JNE, 0, 0, 2);
	out[n++] = MOV64_IMM(0, 0);
	out[n++] = EXIT();
	out[n++] = MOV64_REG(7, 0);
	out[n++] = LDX(BPF_DW, 8, 6, (int16_t)(8 * rprog_below(r, 16)));
	out[n++] = MOV64_IMM(9, (int32_t)rprog_value(r));
	for (unsigned i = 0; i < count; i++) {
		uint32_t kind = rprog_below(r, 12);
		int16_t voff = (int16_t)(8 * rprog_below(r, 8));
		int16_t soff = (int16_t)(-8 * (int)(1 + rprog_below(r, stack_slots)));
		static const uint8_t sizes[] = {BPF_B, BPF_H, BPF_W, BPF_DW};
		uint8_t sz = sizes[rprog_below(r, 4)];

		switch (kind) {
		case 0: /* arithmetic on r8, r9 */
		case 1: {
			struct bpf_insn a = rprog_alu_insn(r, false);

			a.dst_reg = 8 + (a.dst_reg & 1);
			if (BPF_INSN_SRC(a.code) == BPF_X)
				a.src_reg = 8 + (a.src_reg & 1);
			out[n++] = a;
			break;
		}
		case 2: /* stack store of a register, then a load back at another size */
			out[n++] = STX(BPF_DW, 10, 8 + rprog_below(r, 2), soff);
			out[n++] = LDX(sz, 9, 10,
				       (int16_t)(soff + (int16_t)(8 - bpf_size_bytes(sz)) *
							    (int16_t)rprog_below(r, 2)));
			break;
		case 3: /* map value load and store */
			out[n++] =
			    LDX(sz, 8, 7, (int16_t)(voff + (int16_t)(8 - bpf_size_bytes(sz))));
			out[n++] = STX(sz, 7, 9, voff);
			break;
		case 4: { /* atomics */
			static const int32_t ops[] = {BPF_ADD,
						      BPF_OR,
						      BPF_AND,
						      BPF_XOR,
						      BPF_ADD | BPF_FETCH,
						      BPF_OR | BPF_FETCH,
						      BPF_AND | BPF_FETCH,
						      BPF_XOR | BPF_FETCH,
						      BPF_XCHG,
						      BPF_CMPXCHG};
			int32_t op = ops[rprog_below(r, 10)];

			if (op == BPF_CMPXCHG)
				out[n++] = MOV64_REG(0, 8);
			out[n++] = ATOMIC(rprog_below(r, 2) ? BPF_DW : BPF_W, op, 7, 9, voff);
			break;
		}
		case 5: /* a forward branch over the next instruction */
			out[n++] =
			    rprog_below(r, 2)
				? JMP_REG(rprog_jmp_ops[rprog_below(r, sizeof(rprog_jmp_ops))], 8,
					  9, 1)
				: JMP32_IMM(rprog_jmp_ops[rprog_below(r, sizeof(rprog_jmp_ops))], 9,
					    (int32_t)rprog_value(r), 1);
			out[n++] = ALU64_IMM(BPF_ADD, 8, 1);
			break;
		case 6: { /* helpers without arguments */
			static const int32_t fns[] = {502, 509, 510, 511, 14, 5, 8, 506};

			out[n++] = CALL(fns[rprog_below(r, 8)]);
			out[n++] = ALU64_REG(BPF_ADD, 9, 0);
			break;
		}
		case 7: /* indices into the stack */
			out[n++] = MOV64_REG(1, 10);
			out[n++] = ALU64_IMM(BPF_ADD, 1, soff);
			out[n++] = MOV64_REG(2, 10);
			out[n++] =
			    ALU64_IMM(BPF_ADD, 2, -8 * (int)(1 + rprog_below(r, stack_slots)));
			out[n++] = MOV64_REG(3, 7);
			out[n++] = ALU64_IMM(BPF_ADD, 3, voff);
			out[n++] = CALL(503 + 2 * (int32_t)rprog_below(r, 2));
			break;
		case 8: /* an event from the stack */
			out[n++] = MOV64_REG(1, 6);
			out[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 2, BPF_PSEUDO_MAP_FD, 0, 1);
			out[n++] = I(0, 0, 0, 0, 0);
			out[n++] = MOV64_IMM(3, 0);
			out[n++] = MOV64_REG(4, 10);
			out[n++] = ALU64_IMM(BPF_ADD, 4, -32);
			out[n++] = MOV64_IMM(5, 8 * (int32_t)(1 + rprog_below(r, 4)));
			out[n++] = CALL(25);
			break;
		case 9: /* a hash update keyed and valued from the stack */
			out[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 2);
			out[n++] = I(0, 0, 0, 0, 0);
			out[n++] = MOV64_REG(2, 10);
			out[n++] = ALU64_IMM(BPF_ADD, 2, soff);
			out[n++] = MOV64_REG(3, 10);
			out[n++] = ALU64_IMM(BPF_ADD, 3, -8);
			out[n++] = MOV64_IMM(4, (int32_t)rprog_below(r, 3));
			out[n++] = CALL(2);
			break;
		case 10: /* a hash lookup, used when found */
			out[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 2);
			out[n++] = I(0, 0, 0, 0, 0);
			out[n++] = MOV64_REG(2, 10);
			out[n++] = ALU64_IMM(BPF_ADD, 2, soff);
			out[n++] = CALL(1);
			out[n++] = JMP_IMM(BPF_JEQ, 0, 0, 1);
			out[n++] = LDX(BPF_DW, 9, 0, 0);
			break;
		default: /* a context field */
			out[n++] = LDX(
			    sz, 9, 6, (int16_t)(8 * rprog_below(r, 16) + (8 - bpf_size_bytes(sz))));
			break;
		}
	}
	out[n++] = MOV64_REG(0, 8);
	out[n++] = EXIT();
	return n;
}

#endif
