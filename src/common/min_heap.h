/* A binary min-heap over a plain array of structs ordered by a uint64_t field in each. */
#ifndef GRT_MIN_HEAP_H
#define GRT_MIN_HEAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * The heap is heap[0..len) of elem-byte structs whose key is the uint64_t at key_off; the caller
 * owns the array and its growth. Equal keys keep no particular order.
 */

/* Restores order after the caller stored a new element at heap[len - 1]. */
void grt_min_heap_up(void *heap, uint32_t len, size_t elem, size_t key_off);
/* Copies the smallest element to *top and removes it; *len must be non-zero. */
void grt_min_heap_pop(void *heap, uint32_t *len, size_t elem, size_t key_off, void *top);

#endif
