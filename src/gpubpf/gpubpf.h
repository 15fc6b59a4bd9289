/* An object made ready for the GPU: loaded, every program verified and translated. */
#ifndef GRT_GPUBPF_GPUBPF_H
#define GRT_GPUBPF_GPUBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpubpf/bpf_object.h"
#include "gpubpf/bpf_ptx.h"
#include "gpubpf/bpf_verifier.h"

struct gpubpf_program {
	const struct gpubpf_prog *prog; /* in the bundle's object */
	struct gpubpf_verified ver;
	struct gpubpf_translation ptx;
	uint16_t id; /* the program's number in the session (ring records carry it) */
};

struct gpubpf_bundle {
	struct gpubpf_object obj;
	struct gpubpf_program *progs;
	size_t nr_progs;
	uint32_t map_slot_base; /* env.map[] slot of the object's map 0 */
};

struct gpubpf_bundle_opts {
	uint32_t map_slot_base; /* slots used by objects loaded before this one */
	uint16_t first_prog_id;
	const char *name_prefix; /* function names: <prefix><id>; NULL: "__grt_bpf" */
};

/*
 * Loads, verifies and translates every program of an object (a file, or
 * bytes). Returns 0, or a negative errno with one line in err naming the
 * object, the program (section), the instruction and the reason.
 * gpubpf_bundle_free() in every case.
 */
int gpubpf_bundle_load(const char *path, const struct gpubpf_bundle_opts *opts,
		       struct gpubpf_bundle *b, char *err, size_t err_len);
int gpubpf_bundle_load_mem(const void *buf, size_t len, const char *name,
			   const struct gpubpf_bundle_opts *opts, struct gpubpf_bundle *b,
			   char *err, size_t err_len);
void gpubpf_bundle_free(struct gpubpf_bundle *b);

#define GPUBPF_MAX_OBJECTS 8 /* --bpf objects in one session */

/*
 * The objects of one session (record/snoop --bpf), each loaded after the one
 * before: distinct map slots and program ids. 0, or the first refusal (one
 * line in err) with every bundle freed.
 */
int gpubpf_bundles_load(const char *const *paths, size_t n, struct gpubpf_bundle *out, char *err,
			size_t err_len);
void gpubpf_bundles_free(struct gpubpf_bundle *b, size_t n);

/*
 * A complete PTX module for arch ("sm_90"): header, the programs' data and
 * .func forms and, with `harness`, one .entry per program running its inline
 * form (named <function>_check, taking the environment and the context fields
 * as .u64 parameters) so that ptxas compiles what a kernel would contain.
 * NULL when out of memory or the arch is unknown.
 */
char *gpubpf_bundle_module(const struct gpubpf_bundle *b, const char *arch, bool harness);

struct gpubpf_attach_result;

/* Instruments a PTX module with every program of the bundle (bpf_attach.h); kernels numbered from
 * 0. */
int gpubpf_attach_bundle(const char *ptx, size_t len, const struct gpubpf_bundle *b,
			 struct gpubpf_attach_result *res);

#endif
