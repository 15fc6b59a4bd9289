/* Translating a verified eBPF program into the PTX body of a device function (gpu_abi.h). */
#ifndef GRT_GPUBPF_BPF_PTX_H
#define GRT_GPUBPF_BPF_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpubpf/bpf_object.h"
#include "gpubpf/bpf_verifier.h"

struct gpubpf_translate_opts {
	const char *name;	/* the function's name; module-scope data gets it as a prefix */
	uint32_t map_slot_base; /* env.map[] slot of the object's map 0 */
	uint16_t prog_id;	/* written into ring records (grt_bpf_ring_rec.prog) */
};

struct gpubpf_translation {
	char name[GPUBPF_NAME_MAX];
	enum grt_bpf_attach attach;
	uint32_t ctx_fields; /* the %c arguments, one per bit, in bit order */
	unsigned nr_args;
	char *decls; /* module-scope declarations (read-only data), "" when none */
	/*
	 * The body: its register declarations, then the code, ending with the
	 * label $Lexit. It reads %env and %c0..%c<nr_args-1>, which the caller
	 * declares: as .func parameters, or as registers of an enclosing block.
	 */
	char *body;
	size_t ptx_insns;	 /* PTX instructions in the body */
	bool stack_in_registers; /* the eBPF stack lives in registers */
	uint32_t stack_bytes;	 /* local memory of the stack otherwise */
};

/*
 * Translates program prog of obj, verified as ver. Returns 0, or a negative
 * errno with one line in err ("<section> insn N: ...": the few programs the
 * verifier accepts but the translator cannot express). Free with
 * gpubpf_translation_free() in every case.
 */
int gpubpf_translate(const struct gpubpf_object *obj, const struct gpubpf_prog *prog,
		     const struct gpubpf_verified *ver, const struct gpubpf_translate_opts *opts,
		     struct gpubpf_translation *out, char *err, size_t err_len);
void gpubpf_translation_free(struct gpubpf_translation *t);

/* The .func form: "<decls>.func NAME(.reg .b64 %env, ...) { <body> ret; }" (malloc'd). */
char *gpubpf_translation_func(const struct gpubpf_translation *t);

/*
 * The inline form: a { } block declaring %env and %c.., set from args[0] (the
 * environment's global address) and args[1..nr_args] (the context fields),
 * operands of the enclosing scope that must not be named like the body's own
 * registers (%r, %t, %w, %p, %s, %c, %env, %g..). Labels and the local
 * stack are scoped by the block, so the form may be pasted many times.
 */
char *gpubpf_translation_inline(const struct gpubpf_translation *t, const char *const *args);

/* The PTX ISA version a target needs at least, as "7.8" ("sm_90" -> 7.8); NULL if unknown. */
const char *gpubpf_ptx_version_for(const char *arch);

#endif
