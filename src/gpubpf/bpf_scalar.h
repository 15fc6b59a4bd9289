/* What the verifier knows of an integer: known bits (tnum) and unsigned/signed bounds. */
#ifndef GRT_GPUBPF_BPF_SCALAR_H
#define GRT_GPUBPF_BPF_SCALAR_H

#include <stdbool.h>
#include <stdint.h>

/* A bit is known when its mask bit is 0; then it equals the value's bit. */
struct tnum {
	uint64_t value;
	uint64_t mask;
};

struct bpf_scalar {
	struct tnum t;
	uint64_t umin, umax;
	int64_t smin, smax;
};

struct bpf_scalar scalar_const(uint64_t v);
struct bpf_scalar scalar_unknown(void);
/* Any value of `bytes` bytes, zero-extended. */
struct bpf_scalar scalar_of_size(unsigned bytes);
bool scalar_is_const(const struct bpf_scalar *s);

/*
 * BPF's arithmetic on two values: op BPF_ADD..BPF_ARSH as in the opcode;
 * 32-bit operations truncate their operands and zero-extend the result;
 * division by zero gives 0, modulo by zero the dividend; shift amounts are
 * masked to the width. The verifier folds constants with it, the reference
 * interpreter executes with it, and the kernel's own runs check both.
 */
uint64_t bpf_alu_eval(uint8_t op, uint64_t a, uint64_t b, bool is64, bool is_signed);

/*
 * Applies the ALU operation `op` (BPF_ADD ... BPF_ARSH, as in the opcode) to
 * dst with src; is64 false for ALU32 (operands truncated, result
 * zero-extended). Sound: the result holds every value the operation can give.
 */
void scalar_alu(struct bpf_scalar *dst, const struct bpf_scalar *src, uint8_t op, bool is64);
/* Zero-extends the low `bytes` bytes (a narrower load or a byte swap's width). */
void scalar_truncate(struct bpf_scalar *s, unsigned bytes);

/*
 * For a conditional jump `dst OP src` (op BPF_JEQ...BPF_JSLE, BPF_JSET): 1 when
 * it is always taken, 0 when never, -1 when it depends. is64 false for JMP32.
 */
int scalar_branch(const struct bpf_scalar *dst, const struct bpf_scalar *src, uint8_t op,
		  bool is64);
/* Narrows dst and src to the values for which `dst OP src` is `taken`. */
void scalar_refine(struct bpf_scalar *dst, struct bpf_scalar *src, uint8_t op, bool is64,
		   bool taken);

/* True when no value is left (refining made a branch impossible). */
bool scalar_empty(const struct bpf_scalar *s);
/* True when every value of b is a value of a (a subsumes b). */
bool scalar_within(const struct bpf_scalar *a, const struct bpf_scalar *b);

#endif
