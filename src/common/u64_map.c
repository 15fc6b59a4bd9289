/* Open-addressing u64 -> u64 hash map with linear probing and backward-shift deletion. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/u64_map.h"

enum { SLOT_EMPTY = 0, SLOT_LIVE = 1 };

size_t u64_map_home(uint64_t key, size_t capacity)
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
	free(m->slots);
	free(m->used);
	u64_map_init(m);
}

static int resize(struct u64_map *m, size_t capacity)
{
	struct u64_map bigger = {
		.slots = malloc(capacity * sizeof(struct u64_map_slot)),
		.used = calloc(capacity, 1),
		.capacity = capacity,
	};

	if (!bigger.slots || !bigger.used) {
		u64_map_destroy(&bigger);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->capacity; i++)
		if (m->used[i] == SLOT_LIVE)
			u64_map_put(&bigger, m->slots[i].key, m->slots[i].value);
	u64_map_destroy(m);
	*m = bigger;
	return 0;
}

static bool find(const struct u64_map *m, uint64_t key, size_t *slot)
{
	if (!m->capacity)
		return false;
	/* the table is never full, so an empty slot ends every probe */
	for (size_t i = u64_map_home(key, m->capacity);; i = (i + 1) & (m->capacity - 1)) {
		if (m->used[i] == SLOT_EMPTY)
			return false;
		if (m->slots[i].key == key) {
			*slot = i;
			return true;
		}
	}
}

int u64_map_put(struct u64_map *m, uint64_t key, uint64_t value)
{
	size_t slot;

	if (find(m, key, &slot)) {
		m->slots[slot].value = value;
		return 0;
	}
	if ((m->occupied + 1) * 4 >= m->capacity * 3) {
		size_t want = m->capacity ? m->capacity : 16;

		while ((m->live + 1) * 2 >= want)
			want *= 2;
		if (resize(m, want))
			return -ENOMEM;
	}
	slot = u64_map_home(key, m->capacity);
	while (m->used[slot] == SLOT_LIVE)
		slot = (slot + 1) & (m->capacity - 1);
	if (m->used[slot] == SLOT_EMPTY)
		m->occupied++;
	m->used[slot] = SLOT_LIVE;
	m->slots[slot].key = key;
	m->slots[slot].value = value;
	m->live++;
	return 0;
}

bool u64_map_get(const struct u64_map *m, uint64_t key, uint64_t *value)
{
	size_t slot;

	if (!find(m, key, &slot))
		return false;
	if (value)
		*value = m->slots[slot].value;
	return true;
}

/*
 * Removal moves later entries of the probe run back into the hole instead of
 * leaving a tombstone: maps that churn (a bounded window of recent keys) keep
 * short probes, and a miss stops at the first empty slot.
 */
bool u64_map_remove(struct u64_map *m, uint64_t key, uint64_t *value)
{
	size_t mask = m->capacity - 1, hole, j;

	if (!find(m, key, &hole))
		return false;
	if (value)
		*value = m->slots[hole].value;
	for (j = (hole + 1) & mask; m->used[j] != SLOT_EMPTY; j = (j + 1) & mask) {
		size_t home = u64_map_home(m->slots[j].key, m->capacity);

		/* the entry at j may move to the hole unless its home lies in (hole, j] */
		if (((j - home) & mask) < ((j - hole) & mask))
			continue;
		m->slots[hole] = m->slots[j];
		hole = j;
	}
	m->used[hole] = SLOT_EMPTY;
	m->live--;
	m->occupied--;
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
			*key = m->slots[*pos].key;
		if (value)
			*value = m->slots[*pos].value;
		(*pos)++;
		return true;
	}
	return false;
}
