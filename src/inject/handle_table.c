/* Driver handles to the library's state: insert-only tables the launch path reads without a lock. */
#include <errno.h>
#include <stdlib.h>
#include "inject/handle_table.h"

int handle_table_init(struct handle_table *t, uint32_t slots)
{
	t->keys = calloc(slots, sizeof(*t->keys));
	t->vals = calloc(slots, sizeof(*t->vals));
	t->mask = slots - 1;
	t->used = 0;
	return t->keys && t->vals ? 0 : -ENOMEM;
}

int handle_table_put(struct handle_table *t, uint64_t key, void *val)
{
	for (uint32_t i = handle_hash(key) & t->mask;; i = (i + 1) & t->mask) {
		uint64_t k = atomic_load_explicit(&t->keys[i], memory_order_relaxed);

		if (k == key) {
			atomic_store_explicit(&t->vals[i], val, memory_order_release);
			return 0;
		}
		if (k)
			continue;
		if ((t->used + 1) * 4 > (t->mask + 1) * 3)
			return -ENOSPC;
		atomic_store_explicit(&t->vals[i], val, memory_order_relaxed);
		atomic_store_explicit(&t->keys[i], key, memory_order_release);
		t->used++;
		return 0;
	}
}

void handle_table_clear_if(struct handle_table *t, bool (*drop)(const void *val, uint64_t arg),
			   uint64_t arg)
{
	for (uint32_t i = 0; t->vals && i <= t->mask; i++) {
		void *v = atomic_load(&t->vals[i]);

		if (v && drop(v, arg))
			atomic_store(&t->vals[i], NULL);
	}
}
