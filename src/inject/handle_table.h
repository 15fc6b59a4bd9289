/* Driver handles (modules, functions, kernels) to the library's state, read without a lock. */
#ifndef GRT_INJECT_HANDLE_TABLE_H
#define GRT_INJECT_HANDLE_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Insert-only open addressing: the launch path looks a handle up without a
 * lock (a key is published after its value); inserts are serialized by the
 * caller's lock. A removed handle keeps its key with a NULL value, so a
 * reused handle value simply gets a new value.
 */
struct handle_table {
	_Atomic uint64_t *keys;
	void *_Atomic *vals;
	uint32_t mask;
	uint32_t used;
};

/* slots: a power of two. 0 or -ENOMEM. */
int handle_table_init(struct handle_table *t, uint32_t slots);

static inline uint32_t handle_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (uint32_t)key;
}

static inline void *handle_table_get(const struct handle_table *t, uint64_t key)
{
	if (!t->keys || !key)
		return NULL;
	for (uint32_t i = handle_hash(key) & t->mask, n = 0; n <= t->mask;
	     i = (i + 1) & t->mask, n++) {
		uint64_t k = atomic_load_explicit(&t->keys[i], memory_order_acquire);

		if (k == key)
			return atomic_load_explicit(&t->vals[i], memory_order_acquire);
		if (!k)
			return NULL;
	}
	return NULL;
}

/* Under the owner's lock. -ENOSPC when full (kept at most 3/4 full so lookups stay short). */
int handle_table_put(struct handle_table *t, uint64_t key, void *val);

/* Under the owner's lock: every value v with drop(v, arg) becomes NULL (its key stays). */
void handle_table_clear_if(struct handle_table *t, bool (*drop)(const void *val, uint64_t arg),
			   uint64_t arg);

#endif
