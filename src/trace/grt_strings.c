/* id -> text table built from string records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/u64_map.h"
#include "trace/grt_strings.h"

struct grt_strings {
	struct u64_map by_id;	/* id -> char * */
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
	u64_map_destroy(&t->by_id);
	free(t);
}

int grt_strings_set(struct grt_strings *t, uint32_t id, const char *text)
{
	char *copy = strdup(text);
	uint64_t old;

	if (!copy)
		return -ENOMEM;
	if (u64_map_get(&t->by_id, id, &old))
		free((char *)(uintptr_t)old);
	if (u64_map_put(&t->by_id, id, (uintptr_t)copy)) {
		u64_map_remove(&t->by_id, id, NULL);
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
