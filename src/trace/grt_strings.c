/* id -> text table built from string records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/grow_array.h"
#include "common/u64_map.h"
#include "trace/grt_strings.h"

struct grt_strings {
	struct u64_map by_id;	/* id -> char * */
	char **replaced;	/* texts a repeated id replaced, kept until the table goes */
	uint32_t n_replaced;
	uint32_t cap_replaced;
};

struct grt_strings *grt_strings_new(void)
{
	struct grt_strings *t = calloc(1, sizeof(*t));

	if (t)
		u64_map_init(&t->by_id);
	return t;
}

void grt_strings_free(struct grt_strings *t)
{
	uint64_t text;

	if (!t)
		return;
	for (size_t i = 0; u64_map_iter(&t->by_id, &i, NULL, &text);)
		free((char *)(uintptr_t)text);
	for (uint32_t i = 0; i < t->n_replaced; i++)
		free(t->replaced[i]);
	free(t->replaced);
	u64_map_destroy(&t->by_id);
	free(t);
}

/* A replaced text stays readable: pointers handed out live as long as the table. */
static int keep_replaced(struct grt_strings *t, char *text)
{
	if (grt_grow_array((void **)&t->replaced, &t->cap_replaced, sizeof(*t->replaced),
			   t->n_replaced + 1))
		return -ENOMEM;
	t->replaced[t->n_replaced++] = text;
	return 0;
}

int grt_strings_set(struct grt_strings *t, uint32_t id, const char *text)
{
	char *copy;
	uint64_t old;

	if (u64_map_get(&t->by_id, id, &old)) {
		if (!strcmp((const char *)(uintptr_t)old, text))
			return 0;
		if (keep_replaced(t, (char *)(uintptr_t)old))
			return -ENOMEM;
		u64_map_remove(&t->by_id, id, NULL);
	}
	copy = strdup(text);
	if (!copy || u64_map_put(&t->by_id, id, (uintptr_t)copy)) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

const char *grt_strings_get(const struct grt_strings *t, uint32_t id)
{
	uint64_t text;

	if (!t || !id || !u64_map_get(&t->by_id, id, &text))
		return NULL;
	return (const char *)(uintptr_t)text;
}
