/* Choosing the name prefix of the registers, labels and parameter the probes add. */
#ifndef GRT_PTX_NAMES_H
#define GRT_PTX_NAMES_H

#include <stddef.h>
#include "ptx_module.h"

#define PTX_PREFIX_MAX 24

/*
 * Writes into prefix[PTX_PREFIX_MAX] the first of "grt_p_", "grt_p1_",
 * "grt_p2_", ... that occurs inside no identifier or directive of the module
 * (so %<prefix>r0, $<prefix>exit, <prefix>buf cannot collide with anything,
 * including ranges like %grt_p_<4>). Returns 0, or -EEXIST when a thousand
 * tries all collide.
 */
int ptx_choose_prefix(const struct ptx_module *m, char *prefix);

/* True when the token is a probe buffer parameter this rewriter adds (grt_p_buf, grt_p7_buf). */
bool ptx_is_probe_param(const struct ptx_module *m, size_t tok);

/*
 * True when the name is one of the address slots ptx_module_vars.h adds for
 * the module's variables (grt_p_var_X, grt_p3_var_X).
 */
bool ptx_is_var_slot(const char *name, size_t len);

#endif
