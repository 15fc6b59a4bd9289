/* Open addressing with linear probing and tombstones over (pid, key) pairs. */
#include <errno.h>
#include <stdlib.h>
#include "analysis/jobs/pid_key_map.h"

/* a removed slot; distinct from every stored pointer */
static const char tombstone_mark;
#define TOMBSTONE(m) ((void *)&tombstone_mark)

static uint64_t mix(uint32_t pid, uint64_t key)
{
	uint64_t h = key ^ ((uint64_t)pid * 0x9E3779B97F4A7C15ull);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

void pid_key_map_init(struct pid_key_map *m)
{
	*m = (struct pid_key_map){ 0 };
}

void pid_key_map_destroy(struct pid_key_map *m)
{
	free(m->slots);
	pid_key_map_init(m);
}

static struct pid_key_slot *find(const struct pid_key_map *m, uint32_t pid, uint64_t key)
{
	size_t mask, i;

	if (!m->capacity)
		return NULL;
	mask = m->capacity - 1;
	for (i = mix(pid, key) & mask;; i = (i + 1) & mask) {
		struct pid_key_slot *s = &m->slots[i];

		if (!s->value)
			return NULL;
		if (s->value != TOMBSTONE(m) && s->key == key && s->pid == pid)
			return s;
	}
}

void *pid_key_map_get(const struct pid_key_map *m, uint32_t pid, uint64_t key)
{
	struct pid_key_slot *s = find(m, pid, key);

	return s ? s->value : NULL;
}

static void place(struct pid_key_map *m, uint32_t pid, uint64_t key, void *value)
{
	size_t mask = m->capacity - 1, i;

	for (i = mix(pid, key) & mask; m->slots[i].value && m->slots[i].value != TOMBSTONE(m);
	     i = (i + 1) & mask)
		;
	if (!m->slots[i].value)
		m->occupied++;
	m->slots[i] = (struct pid_key_slot){ .key = key, .value = value, .pid = pid };
	m->live++;
}

static int grow(struct pid_key_map *m)
{
	struct pid_key_map old = *m;
	/* double when half full of live entries; otherwise only sweep the tombstones out */
	size_t cap = !m->capacity ? 64 : m->live * 4 > m->capacity ? m->capacity * 2 : m->capacity;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	m->capacity = cap;
	m->live = 0;
	m->occupied = 0;
	for (size_t i = 0; i < old.capacity; i++)
		if (old.slots[i].value && old.slots[i].value != TOMBSTONE(&old))
			place(m, old.slots[i].pid, old.slots[i].key, old.slots[i].value);
	free(old.slots);
	return 0;
}

int pid_key_map_put(struct pid_key_map *m, uint32_t pid, uint64_t key, void *value)
{
	struct pid_key_slot *s = find(m, pid, key);

	if (s) {
		s->value = value;
		return 0;
	}
	/* at most half full: probes stay short for the misses device records cause */
	if ((m->occupied + 1) * 2 > m->capacity && grow(m))
		return -ENOMEM;
	place(m, pid, key, value);
	return 0;
}

/*
 * Removal shifts the following entries back into the hole (no tombstones),
 * so maps with heavy insert/remove traffic, like open jobs, keep short probes.
 */
void pid_key_map_remove(struct pid_key_map *m, uint32_t pid, uint64_t key)
{
	struct pid_key_slot *s = find(m, pid, key);
	size_t mask, hole, j;

	if (!s)
		return;
	mask = m->capacity - 1;
	hole = (size_t)(s - m->slots);
	for (j = (hole + 1) & mask; m->slots[j].value; j = (j + 1) & mask) {
		size_t ideal = mix(m->slots[j].pid, m->slots[j].key) & mask;

		/* move j into the hole unless its ideal slot lies cyclically in (hole, j] */
		if (((j - ideal) & mask) >= ((j - hole) & mask)) {
			m->slots[hole] = m->slots[j];
			hole = j;
		}
	}
	m->slots[hole] = (struct pid_key_slot){ 0 };
	m->live--;
	m->occupied--;
}

void *pid_key_map_iter(const struct pid_key_map *m, size_t *pos)
{
	while (*pos < m->capacity) {
		struct pid_key_slot *s = &m->slots[(*pos)++];

		if (s->value && s->value != TOMBSTONE(m))
			return s->value;
	}
	return NULL;
}
