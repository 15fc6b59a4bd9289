/* User stacks named by their frames (stack_store.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/crc32c.h"
#include "sources/stack_store.h"

void stack_store_init(struct stack_store *s, uint32_t base)
{
	memset(s, 0, sizeof(*s));
	s->base = base;
	u64_map_init(&s->ids);
}

void stack_store_destroy(struct stack_store *s)
{
	u64_map_destroy(&s->ids);
	free(s->stacks);
	s->stacks = NULL;
	s->count = s->cap = 0;
}

int32_t stack_store_id(struct stack_store *s, const uint64_t *ips, uint32_t depth)
{
	uint64_t frames[GRT_MAX_STACK_DEPTH] = {0}, key, index;

	if (!depth || depth > GRT_MAX_STACK_DEPTH)
		return -1;
	memcpy(frames, ips, depth * sizeof(*ips));
	key = (uint64_t)crc32c_update(0, frames, depth * sizeof(*ips)) << 8 | depth;
	if (u64_map_get(&s->ids, key, &index) && !memcmp(s->stacks[index], frames, sizeof(frames)))
		return (int32_t)(s->base + index);
	if (s->count >= INT32_MAX - s->base)
		return -1;
	if (s->count == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 256;
		void *bigger = realloc(s->stacks, cap * sizeof(*s->stacks));

		if (!bigger)
			return -1;
		s->stacks = bigger;
		s->cap = cap;
	}
	memcpy(s->stacks[s->count], frames, sizeof(frames));
	/* a crc collision keeps the first stack's entry: the second is simply not shared */
	if (!u64_map_get(&s->ids, key, NULL) && u64_map_put(&s->ids, key, s->count))
		return -1;
	return (int32_t)(s->base + s->count++);
}

int stack_store_get(const struct stack_store *s, uint32_t id, uint64_t *ips)
{
	if (id < s->base || id - s->base >= s->count)
		return -ENOENT;
	memcpy(ips, s->stacks[id - s->base], sizeof(s->stacks[0]));
	return 0;
}
