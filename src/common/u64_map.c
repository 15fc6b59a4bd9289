/* Open-addressing u64 -> u64 hash map with linear probing and tombstones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/u64_map.h"

enum { SLOT_EMPTY = 0, SLOT_LIVE = 1, SLOT_DELETED = 2 };

static size_t slot_of(uint64_t key, size_t capacity)
{
	/* splitmix64 finaliser: handles and addresses share low bits, so mix well */
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebULL;
	key ^= key >> 31;
	return key & (capacity - 1);
}

void u64_map_init(struct u64_map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64_map_destroy(struct u64_map *m)
{
	free(m->keys);
	free(m->values);
	free(m->used);
	u64_map_init(m);
}

static int resize(struct u64_map *m, size_t capacity)
{
	struct u64_map bigger = {
		.keys = malloc(capacity * sizeof(uint64_t)),
		.values = malloc(capacity * sizeof(uint64_t)),
		.used = calloc(capacity, 1),
		.capacity = capacity,
	};

	if (!bigger.keys || !bigger.values || !bigger.used) {
		u64_map_destroy(&bigger);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->capacity; i++)
		if (m->used[i] == SLOT_LIVE)
			u64_map_put(&bigger, m->keys[i], m->values[i]);
	u64_map_destroy(m);
	*m = bigger;
	return 0;
}

static bool find(const struct u64_map *m, uint64_t key, size_t *slot)
{
	if (!m->capacity)
		return false;
	for (size_t i = slot_of(key, m->capacity), n = 0; n < m->capacity;
	     i = (i + 1) & (m->capacity - 1), n++) {
		if (m->used[i] == SLOT_EMPTY)
			return false;
		if (m->used[i] == SLOT_LIVE && m->keys[i] == key) {
			*slot = i;
			return true;
		}
	}
	return false;
}

int u64_map_put(struct u64_map *m, uint64_t key, uint64_t value)
{
	size_t slot;

	if (find(m, key, &slot)) {
		m->values[slot] = value;
		return 0;
	}
	if ((m->occupied + 1) * 4 >= m->capacity * 3) {
		size_t want = m->capacity ? m->capacity : 16;

		while ((m->live + 1) * 2 >= want)
			want *= 2;
		if (resize(m, want))
			return -ENOMEM;
	}
	slot = slot_of(key, m->capacity);
	while (m->used[slot] == SLOT_LIVE)
		slot = (slot + 1) & (m->capacity - 1);
	if (m->used[slot] == SLOT_EMPTY)
		m->occupied++;
	m->used[slot] = SLOT_LIVE;
	m->keys[slot] = key;
	m->values[slot] = value;
	m->live++;
	return 0;
}

bool u64_map_get(const struct u64_map *m, uint64_t key, uint64_t *value)
{
	size_t slot;

	if (!find(m, key, &slot))
		return false;
	if (value)
		*value = m->values[slot];
	return true;
}

bool u64_map_remove(struct u64_map *m, uint64_t key, uint64_t *value)
{
	size_t slot;

	if (!find(m, key, &slot))
		return false;
	if (value)
		*value = m->values[slot];
	m->used[slot] = SLOT_DELETED;
	m->live--;
	return true;
}

size_t u64_map_size(const struct u64_map *m)
{
	return m->live;
}

bool u64_map_iter(const struct u64_map *m, size_t *pos, uint64_t *key, uint64_t *value)
{
	for (; *pos < m->capacity; (*pos)++) {
		if (m->used[*pos] != SLOT_LIVE)
			continue;
		if (key)
			*key = m->keys[*pos];
		if (value)
			*value = m->values[*pos];
		(*pos)++;
		return true;
	}
	return false;
}
