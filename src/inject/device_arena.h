/* Probe buffers: device-memory slots carved from arenas, in size classes, per context. */
#ifndef GRT_INJECT_DEVICE_ARENA_H
#define GRT_INJECT_DEVICE_ARENA_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "inject/cuda_decls.h"

/*
 * Slot sizes: 16 KiB << 0..23, each doubling in four steps (16, 20, 24, 28,
 * 32, 40 KiB...): a launch's buffer wastes at most a fifth of its slot. With
 * one class per power of two a 4,096-block launch (72.3 KiB) took 128 KiB,
 * and a pool held 44% fewer launches in flight than its budget allows.
 */
#define POOL_CLASS_STEPS 4
#define POOL_SIZE_CLASSES (24 * POOL_CLASS_STEPS)
#define POOL_MIN_SLOT_BYTES (16u << 10) /* block mode's device totals fit */

struct inject_state;

/* Where a pool's slots live: the context, and the stream their arena is formatted on. */
struct pool_ctx {
	CUcontext ctx;
	CUstream stream; /* ours: non-blocking, never ordered with the application's */
};

struct pool_slot {
	struct pool_slot *next;
	CUdeviceptr dptr;
	CUdeviceptr arena; /* the allocation it was carved from: one copy never spans two */
	uint64_t size;
	uint64_t capacity; /* spans after the head */
	CUcontext ctx;
	unsigned size_class;
	uint16_t tag; /* of the slot's latest launch: spans with another tag are stale */
};

struct probe_pool {
	struct inject_state *st;
	int mode;	 /* the probe buffers' layout (probe_buffer.h) */
	uint64_t budget; /* bytes of device memory the pool may take */
	uint64_t used;	 /* taken so far (arenas, and memory others count against it) */
	struct pool_slot *free_slots[POOL_SIZE_CLASSES];
	unsigned nfree[POOL_SIZE_CLASSES];
	unsigned low_water[POOL_SIZE_CLASSES]; /* below this many free: top up, or collect */
	unsigned slots[POOL_SIZE_CLASSES];     /* slots made per class, free or not */
	struct pool_ctx *class_ctx[POOL_SIZE_CLASSES]; /* where the class was last used */
	unsigned arenas[POOL_SIZE_CLASSES]; /* arenas made per class: each is larger than the last */
	bool growing[POOL_SIZE_CLASSES];    /* pool_top_up is making one (its bytes are reserved) */
	pthread_mutex_t *lock;		    /* the owner's: guards the pool; dropped while a top-up works */
	pthread_cond_t grown;		    /* a top-up ended */
};

/*
 * A free slot of at least bytes in pc's context, making an arena when the
 * class has none (with pc's context current). NULL when over the budget or
 * larger than the largest class. Under the owner's lock.
 */
struct pool_slot *pool_slot_get(struct probe_pool *p, struct pool_ctx *pc, uint64_t bytes);
/* Back on the free list. Under the owner's lock. */
void pool_slot_put(struct probe_pool *p, struct pool_slot *s);
/* Whether the class of s just crossed its low-water mark (the collection should run). */
static inline bool pool_class_low(const struct probe_pool *p, const struct pool_slot *s)
{
	return p->nfree[s->size_class] + 1 == p->low_water[s->size_class];
}
/*
 * Look-ahead, off the launch path: a class the application uses that runs
 * low gets its next arena now. Under p->lock, which is dropped while the
 * driver works.
 */
void pool_top_up(struct probe_pool *p);
/* Whether a class runs low and the budget allows no more arenas: only a collection helps. */
bool pool_exhausted(const struct probe_pool *p);

#endif
