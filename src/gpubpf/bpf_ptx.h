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
	unsigned variants;	/* GPUBPF_VARIANT_* bits (measured code forms), 0: default */
};

/*
 * Other code forms for the same semantics, chosen by GRTRACE_BPF_VARIANTS (a
 * comma list of their names) while their cost is measured on a GPU
 * (bench/gpu_bpf_variants.sh); none is on by default.
 *   ring_fast_drop   a warp whose SM's ring slot reads "exhausted" counts its
 *                    drops at once and leaves, skipping the reservation's shuffles
 *                    and ballot
 *   ring_warp_slots  drops counted in two slots per SM (by warp id parity),
 *                    halving the warps that add to one counter
 *   ring_early_read  the warp's slot's "exhausted" word of the program's first ring
 *                    read once at the program's start (the load overlaps the
 *                    program's own work) and used by each of its outputs to it
 *                    instead of a load there; a word read early may say "not
 *                    exhausted" where a later read would not, which only sends
 *                    the warp down the full path (head decides); "exhausted"
 *                    stays true until the host resets the ring between launches
 *   ring_entry_read  ring_early_read, and for an exit program the read moves to
 *                    the kernel's entry (bpf_attach.c), its latency hidden under
 *                    the kernel's own work; the warps of later waves then find
 *                    the ring exhausted at their exit without a load there
 *   l2_evict_last    a thread's own PERGPUTD_ARRAY value read, written and added
 *                    with an L2 evict_last policy, so the map stays in L2 while
 *                    the kernel streams its data (sm_80 and PTX 7.4 on; the plain
 *                    form elsewhere, see GPUBPF_SM80_MARK)
 */
enum {
	GPUBPF_VARIANT_RING_FAST_DROP = 1u << 0,
	GPUBPF_VARIANT_RING_WARP_SLOTS = 1u << 1,
	GPUBPF_VARIANT_L2_EVICT_LAST = 1u << 2,
	GPUBPF_VARIANT_RING_EARLY_READ = 1u << 3,
	GPUBPF_VARIANT_RING_ENTRY_READ = 1u << 4,
};
#define GPUBPF_VARIANTS_ENV "GRTRACE_BPF_VARIANTS"
/*
 * Without GRTRACE_BPF_VARIANTS: a warp that finds the ring exhausted counts
 * its drops with one atomic and leaves (2.43x -> 2.25x on the H100's ring
 * benchmark, every count exact). The others measured no clear gain.
 */
#define GPUBPF_VARIANTS_DEFAULT GPUBPF_VARIANT_RING_FAST_DROP

/*
 * Parses a GRTRACE_BPF_VARIANTS list into *out (NULL: the default forms;
 * "none": none); -EINVAL with one line in err on a bad name.
 */
int gpubpf_variants_parse(const char *list, unsigned *out, char *err, size_t err_len);

/*
 * A line of a body may carry two forms: "\t<plain>;" GPUBPF_SM80_MARK "<hinted>;".
 * The text forms below keep the hinted one when the target allows it (sm_80 on
 * and PTX ISA 7.4 on: cache policies), else the plain one (possibly empty).
 */
#define GPUBPF_SM80_MARK "\t// sm_80: "

/*
 * The early read of ring_early_read is a block of the body between these two
 * lines, reading %env and writing %xw (declared by the body). With
 * ring_entry_read the attach code runs it at the kernel's entry instead and
 * hands %xw to the exit program (gpubpf_translation_inline's early_word).
 */
#define GPUBPF_EARLY_OPEN "\t// grtrace early read {\n"
#define GPUBPF_EARLY_CLOSE "\t// grtrace early read }\n"

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

/*
 * The .func form: "<decls>.func NAME(.reg .b64 %env, ...) { <body> ret; }" (malloc'd);
 * hints: the target takes GPUBPF_SM80_MARK's hinted forms.
 */
char *gpubpf_translation_func(const struct gpubpf_translation *t, bool hints);

/*
 * The inline form: a { } block declaring %env and %c.., set from args[0] (the
 * environment's global address) and args[1..nr_args] (the context fields),
 * operands of the enclosing scope that must not be named like the body's own
 * registers (%r, %t, %w, %p, %s, %c, %env, %g..). Labels and the local
 * stack are scoped by the block, so the form may be pasted many times.
 */
char *gpubpf_translation_inline(const struct gpubpf_translation *t, const char *const *args,
				bool hints, const char *early_word);

/*
 * The early read of t as a block to run at a kernel's entry: it reads the
 * environment from env and leaves the word in the register named out, which
 * the exit program then gets as early_word. NULL when t has none to move
 * (not ring_entry_read, or no ring output) or out of memory.
 */
char *gpubpf_translation_early_read(const struct gpubpf_translation *t, const char *env,
				    const char *out);

/* Whether a module of target sm_<sm> and PTX ISA <major>.<minor> takes the hinted forms. */
bool gpubpf_hints_allowed(unsigned sm, unsigned major, unsigned minor);

/* The PTX ISA version a target needs at least, as "7.8" ("sm_90" -> 7.8); NULL if unknown. */
const char *gpubpf_ptx_version_for(const char *arch);

#endif
