/*
 * User stacks kept by their frames: the same frames get the same id, whatever
 * thread or process they came from, and no two stacks ever share an id. Both
 * CUDA recording paths send a call's frames beside it (the BPF ring and the
 * in-process rings alike) and name them here.
 */
#ifndef GRT_STACK_STORE_H
#define GRT_STACK_STORE_H

#include <stdint.h>
#include "common/u64_map.h"
#include "trace/records_core.h"

struct stack_store {
	uint32_t base;			   /* the first id */
	uint64_t (*stacks)[GRT_MAX_STACK_DEPTH]; /* by id - base, zero past their depth */
	uint32_t count, cap;
	struct u64_map ids;		   /* crc of the frames and depth -> index */
};

void stack_store_init(struct stack_store *s, uint32_t base);
void stack_store_destroy(struct stack_store *s);
/* The id of depth (1..GRT_MAX_STACK_DEPTH) frames; -1 when out of memory. */
int32_t stack_store_id(struct stack_store *s, const uint64_t *ips, uint32_t depth);
/* Copies a stack's GRT_MAX_STACK_DEPTH frames into ips: 0, or -ENOENT for an id not given out. */
int stack_store_get(const struct stack_store *s, uint32_t id, uint64_t *ips);

#endif
