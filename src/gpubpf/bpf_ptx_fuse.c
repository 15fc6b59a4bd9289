/* A load, add and store of a thread's own map value, translated as one fire-and-forget add. */
#include <stdbool.h>
#include <stdio.h>
#include "gpubpf/bpf_insn.h"
#include "gpubpf/bpf_ptx_emit.h"
#include "gpubpf/gpu_abi.h"

/*
 * Whether register `reg` is dead from instruction `pc` on, along the straight
 * line that follows: written before it is read, or the program exits without
 * reading it. Any jump, or a call that may read it as an argument, answers
 * "not known dead".
 */
static bool dead_from(const struct gpubpf_prog *prog, size_t pc, unsigned reg)
{
	for (; pc < prog->nr_insns; pc++) {
		const struct bpf_insn *in = &prog->insns[pc];
		uint8_t cls = BPF_INSN_CLASS(in->code), op = BPF_INSN_OP(in->code);
		bool src_x = BPF_INSN_SRC(in->code) == BPF_X;

		switch (cls) {
		case BPF_ALU:
		case BPF_ALU64:
			if (src_x && in->src_reg == reg && op != BPF_END)
				return false;
			if (in->dst_reg == reg)
				return op == BPF_MOV;
			continue;
		case BPF_LD:
			if (bpf_is_ld_imm64(in)) {
				if (in->dst_reg == reg)
					return true;
				pc++;
				continue;
			}
			return false;
		case BPF_LDX:
			if (in->src_reg == reg)
				return false;
			if (in->dst_reg == reg)
				return true;
			continue;
		case BPF_ST:
			if (in->dst_reg == reg)
				return false;
			continue;
		case BPF_STX:
			if (in->dst_reg == reg || in->src_reg == reg ||
			    (BPF_INSN_MODE(in->code) == BPF_ATOMIC && reg == 0))
				return false;
			continue;
		}
		if (op == BPF_EXIT)
			return reg != 0;
		if (op == BPF_CALL) /* reads r1..r5 as arguments, sets r0, keeps r6..r9 */
			return reg == 0 ? true : reg >= 6;
		return false; /* a jump: the value may be read on either side */
	}
	return false;
}

/*
 * `*v += x` on a PERGPUTD_ARRAY value is clang's load, add, store: the slot is
 * the thread's own, so `red.global.add` gives the same value without the load,
 * and the warp does not wait for the load's round trip to L2 before it
 * leaves the kernel. Fused only when the three instructions follow one another
 * with no jump into the middle, address the same value through the same
 * register, and the added register is dead after the store.
 */
int emit_fused_add(struct emit *e, const bool *jump_targets)
{
	const struct gpubpf_prog *prog = e->prog;
	const struct bpf_insn *ld = &prog->insns[e->pc], *add, *st;
	const struct gpubpf_ptr_info *p = &e->ver->info[e->pc].mem;
	unsigned size, reg;
	char type[8], ops[80];
	bool wide;

	if (e->pc + 2 >= prog->nr_insns || jump_targets[e->pc + 1] || jump_targets[e->pc + 2])
		return 0;
	add = ld + 1;
	st = ld + 2;
	if (BPF_INSN_CLASS(ld->code) != BPF_LDX || BPF_INSN_MODE(ld->code) != BPF_MEM ||
	    p->bases != GPUBPF_BASE_MAP || p->map < 0 ||
	    e->obj->maps[p->map].type != GRT_BPF_MAP_PERGPUTD_ARRAY)
		return 0;
	size = bpf_size_bytes(ld->code);
	reg = ld->dst_reg;
	wide = BPF_INSN_CLASS(add->code) == BPF_ALU64;
	if ((size != 4 && size != 8) || reg == ld->src_reg ||
	    (BPF_INSN_CLASS(add->code) != BPF_ALU && !wide) || BPF_INSN_OP(add->code) != BPF_ADD ||
	    add->dst_reg != reg || (size == 8 && !wide) ||
	    (BPF_INSN_SRC(add->code) == BPF_X && add->src_reg == reg))
		return 0;
	if (BPF_INSN_CLASS(st->code) != BPF_STX || BPF_INSN_MODE(st->code) != BPF_MEM ||
	    bpf_size_bytes(st->code) != size || st->dst_reg != ld->src_reg || st->off != ld->off ||
	    st->src_reg != reg || !e->ver->info[e->pc + 2].seen || !dead_from(prog, e->pc + 3, reg))
		return 0;
	snprintf(type, sizeof(type), "u%u", 8 * size);
	if (BPF_INSN_SRC(add->code) == BPF_K) {
		snprintf(ops, sizeof(ops), "[%%r%u+%d], 0x%llx", ld->src_reg, ld->off,
			 (unsigned long long)((uint64_t)(int64_t)add->imm &
					      (size == 8 ? ~0ull : 0xffffffffull)));
	} else if (size == 8) {
		snprintf(ops, sizeof(ops), "[%%r%u+%d], %%r%u", ld->src_reg, ld->off, add->src_reg);
	} else {
		unsigned w = new_w(e);

		emitf(e, "\tcvt.u32.u64 %%w%u, %%r%u;\n", w, add->src_reg);
		snprintf(ops, sizeof(ops), "[%%r%u+%d], %%w%u", ld->src_reg, ld->off, w);
	}
	emit_access(e, l2_hinted(e, p), "red.global.add", type, ops);
	return 3;
}
