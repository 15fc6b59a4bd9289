/* Probe buffers carved from device-memory arenas: formatted once, taken and returned by list. */
#include <stdlib.h>
#include "inject/device_arena.h"
#include "inject/inject.h"
#include "inject/own_thread.h"
#include "inject/probe_buffer.h"

#define ARENA_BYTES (16u << 20) /* the first arena of a class; later ones double */
#define ARENA_MAX_BYTES (256ull << 20)

static uint64_t slot_bytes(unsigned cls)
{
	uint64_t octave = (uint64_t)POOL_MIN_SLOT_BYTES << (cls / POOL_CLASS_STEPS);

	return octave + octave / POOL_CLASS_STEPS * (cls % POOL_CLASS_STEPS);
}

/* The smallest class that holds bytes (the largest when none does): its octave, then its step. */
static unsigned size_class(uint64_t bytes)
{
	unsigned c = 0;

	while (c + POOL_CLASS_STEPS < POOL_SIZE_CLASSES && slot_bytes(c + POOL_CLASS_STEPS) < bytes)
		c += POOL_CLASS_STEPS;
	while (c + 1 < POOL_SIZE_CLASSES && slot_bytes(c) < bytes)
		c++;
	return c;
}

/*
 * Slots come from arenas of one size class: one allocation, one memset and
 * three strided 32-bit memsets write every slot's head (magic, mode,
 * capacity), all on our stream, once: the probes never write the head and
 * tag their spans, so a slot is reused without being cleaned. The launch
 * path then only takes a slot off a list; the collection thread tops the
 * lists up ahead of need (pool_top_up).
 * Arenas double per class up to ARENA_MAX_BYTES or a quarter of the budget;
 * the last one takes what is left of the budget, in whole slots. (It used to
 * go one slot at a time near the budget: every such slot was an allocation,
 * memsets and a stream synchronize made while a launch waited, and its
 * arena's quarter in reserve was no slot at all, so the pool never asked to
 * be collected again.)
 */
static uint64_t arena_bytes(const struct probe_pool *p, unsigned cls)
{
	uint64_t slot = slot_bytes(cls), bytes = ARENA_BYTES;
	uint64_t cap = p->budget / 4 < ARENA_MAX_BYTES ? p->budget / 4 : ARENA_MAX_BYTES;
	uint64_t left = p->used < p->budget ? p->budget - p->used : 0;

	/* doubling per class, a quarter of the budget at most: several classes must fit */
	for (unsigned i = 0; i < p->arenas[cls] && bytes * 2 <= cap; i++)
		bytes *= 2;
	if (bytes > cap)
		bytes = cap;
	if (bytes < slot)
		bytes = slot;
	if (bytes > left)
		bytes = left;
	return bytes / slot * slot;
}

/*
 * The reserve below which a class asks for more: a quarter of every slot it
 * has, so that the collection starts while three quarters are in flight.
 */
static void set_low_water(struct probe_pool *p, unsigned cls, uint64_t bytes)
{
	p->slots[cls] += (unsigned)(bytes / slot_bytes(cls));
	p->low_water[cls] = p->slots[cls] / 4 ? p->slots[cls] / 4 : 1;
}

/* Allocates and formats an arena (no lock needed); returns its slots as a list, or NULL. */
static struct pool_slot *arena_alloc(struct probe_pool *p, struct pool_ctx *pc, unsigned cls,
				     uint64_t bytes)
{
	struct inject_driver *d = &p->st->drv;
	uint64_t slot = slot_bytes(cls), n = bytes / slot;
	uint64_t capacity = (slot - grt_probe_spans_off(p->mode)) / sizeof(struct grt_probe_span);
	struct pool_slot *list = NULL;
	CUdeviceptr base = 0;

	if (d->cuMemAlloc_v2(&base, bytes))
		return NULL;
	/* the tag rides in the parameter's top bits: the buffer must sit below them */
	if ((base + bytes - 1) & ~GRT_PROBE_ADDR_MASK ||
	    d->cuMemsetD8Async(base, 0, bytes, pc->stream) ||
	    d->cuMemsetD2D32Async(base, slot, GRT_PROBE_MAGIC, 1, n, pc->stream) ||
	    d->cuMemsetD2D32Async(base + 4, slot, (unsigned)p->mode, 1, n, pc->stream) ||
	    d->cuMemsetD2D32Async(base + 8, slot, (unsigned)capacity, 1, n, pc->stream) ||
	    d->cuStreamSynchronize(pc->stream)) {
		d->cuMemFree_v2(base);
		return NULL;
	}
	/* one array, never freed (the arena is not either): the launch path walks the slots in
	 * memory order. Built from the top so that slots come off the list in ascending, adjacent
	 * order. */
	struct pool_slot *arr = calloc(n, sizeof(*arr));

	if (!arr) {
		d->cuMemFree_v2(base);
		return NULL;
	}
	for (uint64_t i = n; i-- > 0;) {
		struct pool_slot *sl = &arr[i];

		sl->dptr = base + i * slot;
		sl->arena = base;
		sl->size = slot;
		sl->capacity = capacity;
		sl->ctx = pc->ctx;
		sl->size_class = cls;
		sl->next = list;
		list = sl;
	}
	return list;
}

/* Puts an arena's slots on the free list. Under the lock. */
static void arena_publish(struct probe_pool *p, unsigned cls, struct pool_slot *list)
{
	struct pool_slot *last = list;
	unsigned n = 1;

	if (!list)
		return;
	for (; last->next; last = last->next)
		n++;
	last->next = p->free_slots[cls];
	p->free_slots[cls] = list;
	p->nfree[cls] += n;
}

struct arena_job {
	struct probe_pool *p;
	struct pool_ctx *pc;
	unsigned cls;
	uint64_t bytes;
	struct pool_slot *list;
};

static void arena_job(void *arg)
{
	struct arena_job *j = arg;

	j->list = arena_alloc(j->p, j->pc, j->cls, j->bytes);
}

/*
 * A new arena for the launch path (out of slots): under the lock, as rarely
 * as possible, made on the library's worker thread (its allocation and
 * memsets are grtrace's, not the application's).
 */
static int arena_new(struct probe_pool *p, struct pool_ctx *pc, unsigned cls)
{
	struct arena_job j = {p, pc, cls, arena_bytes(p, cls), NULL};
	uint64_t bytes = j.bytes;
	struct pool_slot *list;

	if (!bytes)
		return -1;
	own_thread_run(pc->ctx, arena_job, &j);
	list = j.list;
	if (!list)
		return -1;
	p->used += bytes;
	p->arenas[cls]++;
	arena_publish(p, cls, list);
	set_low_water(p, cls, bytes);
	return 0;
}

void pool_top_up(struct probe_pool *p)
{
	for (unsigned cls = 0; cls < POOL_SIZE_CLASSES; cls++) {
		struct pool_ctx *pc = p->class_ctx[cls];
		struct pool_slot *list;
		uint64_t bytes;
		CUcontext popped;

		if (!pc || p->nfree[cls] >= p->low_water[cls] || !(bytes = arena_bytes(p, cls)))
			continue;
		p->used += bytes; /* reserved while the lock is dropped */
		p->arenas[cls]++;
		p->growing[cls] = true;
		pthread_mutex_unlock(p->lock);
		list = NULL;
		if (!p->st->drv.cuCtxPushCurrent_v2(pc->ctx)) {
			list = arena_alloc(p, pc, cls, bytes);
			p->st->drv.cuCtxPopCurrent_v2(&popped);
		}
		pthread_mutex_lock(p->lock);
		p->growing[cls] = false;
		pthread_cond_broadcast(&p->grown);
		if (!list) {
			p->used -= bytes;
			continue;
		}
		arena_publish(p, cls, list);
		set_low_water(p, cls, bytes);
	}
}

/* A free slot of class cls or the next two in pc's context, off its list; NULL when none. */
static struct pool_slot *slot_take(struct probe_pool *p, struct pool_ctx *pc, unsigned cls)
{
	for (unsigned c = cls; c < POOL_SIZE_CLASSES && c <= cls + 2; c++) {
		for (struct pool_slot **at = &p->free_slots[c]; *at; at = &(*at)->next) {
			struct pool_slot *sl = *at;

			if (sl->ctx != pc->ctx)
				continue;
			*at = sl->next;
			sl->next = NULL;
			p->nfree[c]--;
			p->class_ctx[c] = pc;
			return sl;
		}
	}
	return NULL;
}

struct pool_slot *pool_slot_get(struct probe_pool *p, struct pool_ctx *pc, uint64_t bytes)
{
	unsigned cls = size_class(bytes);
	struct pool_slot *sl;
	bool tried = false;

	if (slot_bytes(cls) < bytes)
		return NULL; /* larger than the largest class */
	p->class_ctx[cls] = pc;
	while (!(sl = slot_take(p, pc, cls))) {
		/* an arena the collection thread is making holds the budget: it comes in one
		 * allocation's time, as one made here would (the budget spent: no driver call) */
		if (p->growing[cls]) {
			pthread_cond_wait(&p->grown, p->lock);
			continue;
		}
		if (tried || arena_new(p, pc, cls))
			break;
		tried = true;
	}
	return sl;
}

void pool_slot_put(struct probe_pool *p, struct pool_slot *s)
{
	s->next = p->free_slots[s->size_class];
	p->free_slots[s->size_class] = s;
	p->nfree[s->size_class]++;
}

bool pool_exhausted(const struct probe_pool *p)
{
	for (unsigned cls = 0; cls < POOL_SIZE_CLASSES; cls++)
		if (p->class_ctx[cls] && p->nfree[cls] < p->low_water[cls] && !arena_bytes(p, cls))
			return true;
	return false;
}
