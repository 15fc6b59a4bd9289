/* Redirecting a module's variables to the application's instances, through address slots. */
#ifndef GRT_PTX_MODULE_VARS_H
#define GRT_PTX_MODULE_VARS_H

#include <stddef.h>
#include <stdint.h>
#include "ptx_module.h"
#include "ptx_rewrite.h"

/*
 * A rewritten copy of a module is loaded as a module of its own, with its
 * own instances of the module's .global and .const variables, never written
 * by cudaMemcpyToSymbol or by the application's other kernels. So before the
 * probes are added, every use of a variable in the module's functions is
 * made to go through an address slot (<p> a name prefix free in the module):
 *
 *   .global .align 4 .u32 hits;          .visible .const .align 8 .u64 <p>var_hits;
 *   ...                              ->  ...
 *   atom.global.add.u32 %r1, [hits], 1;  ld.const.u64 %<p>va0, [<p>var_hits];
 *                                        cvta.to.global.u64 %<p>va0, %<p>va0;
 *                                        atom.global.add.u32 %r1, [%<p>va0], 1;
 *
 * and the host writes into <p>var_hits the address cuModuleGetGlobal gives
 * for `hits` in the application's module (module_vars.c). The slot holds a
 * generic address (what cuModuleGetGlobal gives), converted to the global
 * one the variable's name stood for. `[X+8]` keeps its offset; `mov.u64 %rd,
 * X+8;` adds it to the register first.
 *
 * A .const variable's device address is a global one, so in every function
 * redirected this way each .const state space becomes .global: ld.const ->
 * ld.global, cvta[.to].const -> cvta[.to].global, isspacep.const ->
 * isspacep.global. Plain ld.global, not ld.global.nc: the application writes
 * the symbol between launches (through its stream), and plain loads need no
 * argument about when the non-coherent cache is invalidated. This holds
 * because, once redirected, every .const address a function handles comes
 * from a variable: kernel parameters live in .param, a space of their own.
 *
 * A function that names a variable that cannot be redirected (struct
 * ptx_var.unsupported) is left as it is, and ptx_module_var_refusal() keeps
 * refusing the kernels that may run it. A variable's declaration stays where
 * something left as it is still names it (such a function, an initializer, a
 * debug section); the slot is then declared after it.
 */
struct ptx_vars_out {
	char *ptx; /* the redirected module; NULL when there was nothing to redirect */
	size_t len;
	struct ptx_var_slot *slots;
	size_t nr_slots;
	uint32_t **reach; /* per .entry, in module order: the slots its code may read */
	uint32_t *nr_reach;
	size_t nr_entries;
};

/* Redirects the variables of scanned module m into out. 0 or -ENOMEM. */
int ptx_vars_redirect(const struct ptx_module *m, struct ptx_vars_out *out);
void ptx_vars_out_free(struct ptx_vars_out *out);

/*
 * For the rewriters: scans `len` bytes of PTX into m after redirecting its
 * variables (m is then a scan of out->ptx, which must outlive it). Returns
 * what ptx_module_scan() returns, with m->error set. Free m with
 * ptx_module_free() and out with ptx_vars_out_free() in every case.
 */
int ptx_scan_redirected(const char *ptx, size_t len, struct ptx_module *m,
			struct ptx_vars_out *out);

/* Moves the slots into res, and each kernel's reach into res->kernels (module order). */
void ptx_vars_hand_over(struct ptx_vars_out *out, struct ptx_rewrite_result *res);

#endif
