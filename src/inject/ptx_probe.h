/* The PTX the probes add: register declarations, the entry probe, the shared exit path. */
#ifndef GRT_PTX_PROBE_H
#define GRT_PTX_PROBE_H

#include <stdbool.h>
#include "probe_buffer.h"
#include "ptx_strbuf.h"

struct probe_style {
	const char *prefix; /* from ptx_choose_prefix(): names are %<prefix>r0, $<prefix>exit */
	enum grt_probe_mode mode;
};

/* The parameter the launcher fills: ",\n\t.param .u64 <prefix>buf" without the comma. */
void probe_emit_param(struct strbuf *b, const struct probe_style *s);
/* Registers the probes use, declared at the top of the kernel body. */
void probe_emit_decls(struct strbuf *b, const struct probe_style *s);
/* Runs once per thread before the kernel's first instruction. */
void probe_emit_entry(struct strbuf *b, const struct probe_style *s);
/* The instruction that replaces every `ret`/`exit` (after its guard, if any). */
void probe_emit_exit_branch(struct strbuf *b, const struct probe_style *s);
/* The exit path at the end of the body: label, probe, `ret`. */
void probe_emit_exit(struct strbuf *b, const struct probe_style *s);

#endif
