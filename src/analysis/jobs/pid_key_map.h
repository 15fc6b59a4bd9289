/* A hash map from (pid, 64-bit key) pairs to pointers: streams, events and jobs per process. */
#ifndef GRT_PID_KEY_MAP_H
#define GRT_PID_KEY_MAP_H

#include <stddef.h>
#include <stdint.h>

struct pid_key_slot {
	uint64_t key;
	void *value;		/* NULL: empty; tombstone: the map's own address */
	uint32_t pid;
};

struct pid_key_map {
	struct pid_key_slot *slots;
	size_t capacity;	/* power of two */
	size_t live;
	size_t occupied;	/* live + tombstones */
};

void pid_key_map_init(struct pid_key_map *m);
void pid_key_map_destroy(struct pid_key_map *m);
void *pid_key_map_get(const struct pid_key_map *m, uint32_t pid, uint64_t key);
/* Inserts or replaces (value must not be NULL). Returns 0 or -ENOMEM. */
int pid_key_map_put(struct pid_key_map *m, uint32_t pid, uint64_t key, void *value);
void pid_key_map_remove(struct pid_key_map *m, uint32_t pid, uint64_t key);
/* Iteration: for (size_t i = 0; (v = pid_key_map_iter(m, &i));) ... */
void *pid_key_map_iter(const struct pid_key_map *m, size_t *pos);

#endif
