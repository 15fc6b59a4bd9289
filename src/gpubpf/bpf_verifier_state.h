/* The verifier's abstract machine state, shared by its driver and its instruction checks. */
#ifndef GRT_GPUBPF_BPF_VERIFIER_STATE_H
#define GRT_GPUBPF_BPF_VERIFIER_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include "gpubpf/bpf_object.h"
#include "gpubpf/bpf_scalar.h"
#include "gpubpf/bpf_verifier.h"

enum reg_kind {
	REG_NOT_INIT,
	REG_SCALAR,
	REG_CTX,
	REG_STACK,	       /* off: fp-relative */
	REG_MAP,	       /* &map (map) */
	REG_MAP_VALUE,	       /* map, off + v (variable part) */
	REG_MAP_VALUE_OR_NULL, /* the same, until a null check (id) */
	REG_RING_MEM,	       /* a reservation of mem_size bytes (ref) */
	REG_RING_MEM_OR_NULL,
};

struct reg {
	uint8_t kind;
	int16_t map;
	int32_t off;
	uint32_t id;	     /* OR_NULL: registers sharing it become non-NULL together */
	uint32_t ref;	     /* ring reservation this pointer belongs to */
	uint32_t mem_size;   /* ring reservation's size */
	struct bpf_scalar v; /* scalar: its value; pointer: the variable part of its offset */
};

#define STACK_SLOTS (BPF_STACK_SIZE / 8)
#define MAX_REFS 8

enum byte_kind {
	BYTE_INVALID, /* never written */
	BYTE_MISC,    /* data */
	BYTE_SPILL,   /* part of an 8-byte register spill */
};

struct slot {
	uint8_t bytes[8]; /* enum byte_kind of fp-8*(i+1) + 0..7 */
	struct reg spill;
};

struct vstate {
	struct reg r[BPF_MAX_REG];
	struct slot s[STACK_SLOTS];
	uint32_t refs[MAX_REFS];     /* ring reservations held */
	uint32_t ref_insn[MAX_REFS]; /* where each was made */
	uint8_t nr_refs;
};

struct verifier {
	const struct gpubpf_object *obj;
	const struct gpubpf_prog *prog;
	const struct bpf_insn *insns;
	size_t n;
	struct gpubpf_verified *out;
	char *err;
	size_t err_len;
	size_t pc;	  /* the instruction being checked */
	uint32_t next_id; /* for OR_NULL ids and references */
};

/* Fails with "<section> insn <pc>: <message>"; returns -EINVAL. */
int verr(struct verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Checks of one instruction (bpf_verifier_ops.c); 0 or -EINVAL. */
int check_alu(struct verifier *v, struct vstate *st, const struct bpf_insn *insn);
int check_load_imm64(struct verifier *v, struct vstate *st, const struct bpf_insn *insn);
int check_mem_insn(struct verifier *v, struct vstate *st, const struct bpf_insn *insn);
int check_call(struct verifier *v, struct vstate *st, const struct bpf_insn *insn);

/* A readable register (initialized, not r10 misuse); -EINVAL otherwise. */
int check_reg_read(struct verifier *v, const struct vstate *st, unsigned r);
/* Marks a register as a scalar with the given value. */
void set_scalar(struct reg *r, struct bpf_scalar s);
const char *reg_kind_name(uint8_t kind);

#endif
