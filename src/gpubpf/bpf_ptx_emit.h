/* The translator's emitter state, shared by its instruction and helper parts. */
#ifndef GRT_GPUBPF_BPF_PTX_EMIT_H
#define GRT_GPUBPF_BPF_PTX_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include "gpubpf/bpf_ptx.h"
#include "inject/ptx_strbuf.h"

/*
 * Register naming inside a body: %r0..%r10 the eBPF registers, %s0..%s63 the
 * stack slots when the stack lives in registers (slot i is fp-8*(i+1)), %t
 * (.b64), %w (.b32) and %p (.pred) scratch, numbered per instruction from 0.
 * Labels: $L<pc> for jump targets, $H<n>_<what> inside helpers, $Lexit.
 */
struct emit {
	struct strbuf b;
	struct strbuf decls;
	const struct gpubpf_object *obj;
	const struct gpubpf_prog *prog;
	const struct gpubpf_verified *ver;
	const struct gpubpf_translate_opts *opts;
	size_t pc;
	bool promoted;	     /* stack in %s registers */
	unsigned nt, nw, np; /* scratch used by the current instruction */
	unsigned max_t, max_w, max_p;
	unsigned helper_seq; /* numbers helper-local labels */
	uint64_t slots_used;
	uint64_t rodata_declared; /* maps whose read-only data has a .global */
	bool need_thread_id;	  /* %gtid holds the thread's linear id in the grid */
	bool l2_policy;		  /* %l2p holds an L2 evict_last cache policy */
	bool early_read;	  /* %xw holds map early_ring's "exhausted" word, read early */
	int early_ring;
	size_t insns;
	char *err;
	size_t err_len;
};

/* Appends formatted PTX; one instruction per call by convention ("\t...;\n"). */
void emitf(struct emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Fails with "<section> insn <pc>: <message>"; returns -EINVAL. */
int emit_err(struct emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

unsigned new_t(struct emit *e);
unsigned new_w(struct emit *e);
unsigned new_p(struct emit *e);

/* Where helper memory is: the stack at a fixed offset, or an address in a register. */
struct msrc {
	enum { MSRC_STACK, MSRC_ADDR, MSRC_RODATA } kind;
	int32_t off;   /* MSRC_STACK: fp-relative; MSRC_RODATA: offset into the data */
	unsigned reg;  /* MSRC_ADDR: the eBPF register holding the address */
	bool global;   /* MSRC_ADDR: a global address (ld.global), else generic */
	bool aligned8; /* MSRC_ADDR: the address is 8-byte aligned */
	int16_t map;   /* MSRC_RODATA */
};

/* The memory helper argument `argno` (1..5) points to, from the verifier's facts. */
int helper_msrc(struct emit *e, unsigned argno, struct msrc *m);
/* Loads bytes [at, at + n) of m (n <= 8) into %t<dst>, zero-extended. */
void load_bytes(struct emit *e, const struct msrc *m, int32_t at, unsigned n, unsigned dst);
/* Stores the low n bytes of %t<src> (n <= 8) at bytes [at, at + n) of m. */
void store_bytes(struct emit *e, const struct msrc *m, int32_t at, unsigned n, unsigned src);

/* Loads env field at byte offset off into %t<dst> (read-only: ld.global.nc). */
void load_env(struct emit *e, uint32_t off, unsigned dst);
/* The storage address of the program's map `map` into %t<dst>. */
void load_map_base(struct emit *e, int map, unsigned dst);

/* Whether an access through p gets the L2 evict_last form (GPUBPF_VARIANT_L2_EVICT_LAST). */
bool l2_hinted(const struct emit *e, const struct gpubpf_ptr_info *p);
/*
 * "\t<op>.<type> <operands>;": with hinted, the cache-policy form beside it
 * (GPUBPF_SM80_MARK), "<op>.L2::cache_hint.<type> <operands>, %l2p;".
 */
void emit_access(struct emit *e, bool hinted, const char *op, const char *type,
		 const char *operands);

/* Helper calls (bpf_ptx_helpers.c). */
int emit_call(struct emit *e, const struct bpf_insn *insn);
/* The read of %xw at the program's start when early_read (GPUBPF_VARIANT_RING_EARLY_READ). */
void emit_ring_early_read(struct emit *e);

/*
 * At e->pc: a load, add and store of a thread's own PERGPUTD_ARRAY value
 * translated as one `red.global.add` (bpf_ptx_fuse.c). Returns how many
 * instructions it covered (3), or 0 when the pattern does not hold.
 */
int emit_fused_add(struct emit *e, const bool *jump_targets);

#endif
