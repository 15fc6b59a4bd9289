/* The gate before a program runs on the GPU: every path bounded, every access proven safe. */
#ifndef GRT_GPUBPF_BPF_VERIFIER_H
#define GRT_GPUBPF_BPF_VERIFIER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpubpf/bpf_object.h"

/* Kinds of the base pointer of a memory access or helper argument (bits: a union over paths). */
enum gpubpf_base {
	GPUBPF_BASE_STACK = 1,
	GPUBPF_BASE_MAP = 2, /* a map value (rodata included) */
	GPUBPF_BASE_CTX = 4,
	GPUBPF_BASE_RING = 8, /* a ring reservation */
};

#define GPUBPF_OFF_VARIES INT32_MIN /* the offset differs between paths, or is not constant */

/* A pointer argument of a helper call, or the base of a memory access. */
struct gpubpf_ptr_info {
	uint8_t bases;	   /* enum gpubpf_base bits seen on every path */
	int16_t map;	   /* the map, when bases is GPUBPF_BASE_MAP on every path; -1 otherwise */
	int32_t stack_off; /* fp-relative offset when a stack pointer, else GPUBPF_OFF_VARIES */
	int32_t off; /* constant offset into the map value, context or reservation, else VARIES */
};

/* What the translator needs to know of one instruction, merged over every path reaching it. */
struct gpubpf_insn_info {
	bool seen;
	struct gpubpf_ptr_info
	    mem;     /* LDX/STX/ST/atomics: the accessed address (insn.off included) */
	int16_t map; /* LD_IMM64 map reference, or a call's map argument; -1: none */
	struct gpubpf_ptr_info arg[5]; /* helper calls: pointer arguments */
	uint32_t size;		       /* helper calls: the constant size argument */
	/* atomics: whether the operand is the same constant on every path (then src_value) */
	enum { GPUBPF_SRC_UNSEEN, GPUBPF_SRC_CONST, GPUBPF_SRC_VARIES } src_known;
	uint64_t src_value;
};

struct gpubpf_verified {
	struct gpubpf_insn_info *info; /* one per instruction */
	size_t nr_insns;
	/*
	 * Every stack access (instruction or helper argument) has one fixed offset
	 * on every path: the stack can live in registers, one per 8-byte slot.
	 */
	bool stack_fixed;
	int32_t stack_low;     /* lowest fp-relative byte used, 0 when the stack is not used */
	uint64_t stack_zeroed; /* slots (bit i = fp-8*(i+1)) a helper may read before a write */
	uint32_t ctx_fields; /* context fields read (enum grt_bpf_kernel_field / mem_field bits) */
	uint64_t explored;   /* instructions explored */
};

/*
 * Verifies program `prog` of `obj`. Returns 0 and fills *out, or -EINVAL with
 * one line in err: "<section> insn N: <reason>" (or "<section>: <reason>").
 * gpubpf_verified_free() in every case.
 */
int gpubpf_verify(const struct gpubpf_object *obj, const struct gpubpf_prog *prog,
		  struct gpubpf_verified *out, char *err, size_t err_len);
void gpubpf_verified_free(struct gpubpf_verified *v);

/* "<section> insn <pc>: <message>" into err: the one format of every refusal. Returns -EINVAL. */
int gpubpf_insn_error(char *err, size_t err_len, const char *section, size_t pc, const char *fmt,
		      va_list ap);

/* The size in bytes of the context of an attach kind. */
uint32_t gpubpf_ctx_size(enum grt_bpf_attach attach);

#endif
