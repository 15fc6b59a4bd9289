/* Growing a heap-allocated array by doubling, shared by the analysis passes that keep lists. */
#ifndef GRT_GROW_ARRAY_H
#define GRT_GROW_ARRAY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Makes *arr (of *cap elements of elem bytes) hold at least need elements, doubling from 16.
 * Returns 0 or -ENOMEM (then *arr and *cap are unchanged).
 */
int grt_grow_array(void **arr, uint32_t *cap, size_t elem, uint32_t need);

#endif
