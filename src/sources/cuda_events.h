/* Turns cuda_event ring-buffer events into .grt records: names, stacks, mappings, per-class fields.
 */
#ifndef GRT_CUDA_EVENTS_H
#define GRT_CUDA_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "sources/cuda.h"

struct grt_session;
struct cuda_decoder;

/*
 * Reads the frames of a user stack id into ips (CUDA_STACK_DEPTH entries,
 * unused ones 0). Returns 0, or a negative errno when the id is unknown.
 */
typedef int (*cuda_stack_lookup_fn)(void *ctx, uint32_t stack_id, uint64_t *ips);

struct cuda_decoder *cuda_decoder_new(struct grt_session *s, cuda_stack_lookup_fn lookup,
				      void *lookup_ctx);
void cuda_decoder_free(struct cuda_decoder *d);

/*
 * Emits the record(s) for one event of len bytes: the call's record, and
 * before it the string, stack and mapping records it refers to that were not
 * written yet. Malformed events are counted and skipped. Returns 0 or a
 * negative errno from the sink.
 */
int cuda_decoder_event(struct cuda_decoder *d, const struct cuda_event *ev, size_t len);

/* Events that were too short or named an unknown api. */
uint64_t cuda_decoder_malformed(const struct cuda_decoder *d);
/* Calls made by grtrace's own threads in the target, left out of the trace. */
uint64_t cuda_decoder_own_calls(const struct cuda_decoder *d);

#endif
