/* Shared counters kept per SM: array maps whose values every program only adds to. */
#ifndef GRT_GPUBPF_BPF_STRIPE_H
#define GRT_GPUBPF_BPF_STRIPE_H

#include <stddef.h>
#include "gpubpf/gpubpf.h"

/* The most device memory a map's per-SM copies may take; a larger map stays one copy. */
#define GPUBPF_STRIPE_MAX_BYTES (16u << 20)

/*
 * Sets stripe_width (4 or 8) on each ARRAY/GPU_ARRAY map of b's object that
 * the verified programs reach only through atomic adds whose result is unused,
 * all of one width: such a map is kept as one copy per SM (as PERCPU_ARRAY
 * is), and its readers on the host add the copies up. A counter that every
 * thread of a grid bumps then queues at one address per SM, not one per GPU
 * (bench/gpubpf/memcount.bpf.c: 16x the vector add's time with one copy). The
 * sum is the value one copy would hold: additions commute, and nothing on the
 * device reads the value.
 */
void gpubpf_stripe_counters(struct gpubpf_bundle *b);

#endif
