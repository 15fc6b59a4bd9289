/* GPU eBPF programs as an instrumentation: pasted at JIT, maps per context, read back at syncs. */
#ifndef GRT_INJECT_BPF_PROBES_H
#define GRT_INJECT_BPF_PROBES_H

#include <stddef.h>
#include "inject/instrument.h"

struct inject_state;

/*
 * The recorder's programs, from its ring file (shm_ring_config): unpacked
 * into st->bpf. 0 when there are none or they were read; a negative errno
 * with why filled when the blob is bad (then no program runs).
 */
int bpf_probes_load(struct inject_state *st, char *why, size_t why_len);

/* Makes the programs one of the shared path's instrumentations. */
int bpf_probes_register(struct instr_state *is, char *why, size_t why_len);

#endif
