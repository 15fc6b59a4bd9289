/* An open-addressing hash map from 64-bit keys to 64-bit values (handles, ids, pointers). */
#ifndef GRT_U64_MAP_H
#define GRT_U64_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64_map_slot {
	uint64_t key;
	uint64_t value;
};

struct u64_map {
	struct u64_map_slot *slots;	/* key and value in one cache line: one miss per probe */
	uint8_t *used;		/* 0 empty, 1 live */
	size_t capacity;	/* power of two */
	size_t live;
	size_t occupied;	/* slots in use: live (removal leaves no tombstones) */
};

void u64_map_init(struct u64_map *m);
/* The slot a key probes first among capacity slots (a power of two): tests build collisions. */
size_t u64_map_home(uint64_t key, size_t capacity);
void u64_map_destroy(struct u64_map *m);
/* Inserts or replaces. Returns 0 or -ENOMEM. */
int u64_map_put(struct u64_map *m, uint64_t key, uint64_t value);
/* True and *value set when key is present. value may be NULL. */
bool u64_map_get(const struct u64_map *m, uint64_t key, uint64_t *value);
/* Removes key; true when it was present (its value in *value when non-NULL). */
bool u64_map_remove(struct u64_map *m, uint64_t key, uint64_t *value);
size_t u64_map_size(const struct u64_map *m);

/* Iteration: for (size_t i = 0; u64_map_iter(m, &i, &k, &v);) ... */
bool u64_map_iter(const struct u64_map *m, size_t *pos, uint64_t *key, uint64_t *value);

#endif
