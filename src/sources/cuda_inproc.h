/* The cuda source's in-process path: per-thread rings that libgrtrace-inject.so fills, drained. */
#ifndef GRT_CUDA_INPROC_H
#define GRT_CUDA_INPROC_H

#include <stdbool.h>
#include <stdint.h>
#include "inject/call_rings.h"

struct grt_session;
struct cuda_decoder;
struct cuda_inproc;

/* Stack ids of in-process stacks start here; the uprobe path's come from a BPF map, below. */
#define CUDA_INPROC_STACK_BASE 0x40000000u

/*
 * Creates the rings and names them (and the library, LD_PRELOAD) in the
 * launched command's environment. Calls become records through decoder.
 * 0, or a negative errno after grt_session_fail().
 */
int cuda_inproc_start(struct grt_session *s, struct cuda_decoder *decoder,
		      const struct call_rings_config *cfg, struct cuda_inproc **out);

/* Everything committed so far, into records. 0 or the sink's error. */
int cuda_inproc_drain(struct cuda_inproc *ip);

/* The frames of an in-process stack id; 0, or -ENOENT. */
int cuda_inproc_stack(struct cuda_inproc *ip, uint32_t stack_id, uint64_t *ips);

/* Whether pid has recorded through the rings (its calls are not the uprobes'). */
bool cuda_inproc_has_process(const struct cuda_inproc *ip, uint32_t pid);

/* The last drain, calls still inside the driver as no-return records, loss lines; frees ip. */
void cuda_inproc_stop(struct cuda_inproc *ip);

#endif
