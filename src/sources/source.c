/* Finds sources registered in the grt_sources linker section. */
#include <string.h>
#include "sources/source.h"

extern const struct grt_source *const __start_grt_sources[];
extern const struct grt_source *const __stop_grt_sources[];

const struct grt_source *grt_source_next(const struct grt_source *prev)
{
	const struct grt_source *const *at = __start_grt_sources;

	if (prev) {
		while (at < __stop_grt_sources && *at != prev)
			at++;
		at++;
	}
	return at < __stop_grt_sources ? *at : NULL;
}

const struct grt_source *grt_source_find(const char *name)
{
	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s))
		if (!s->implicit && !strcmp(s->name, name))
			return s;
	return NULL;
}

const struct grt_source_option *grt_source_option_find(const char *name, const struct grt_source **owner)
{
	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s))
		for (const struct grt_source_option *o = s->options; o && o->name; o++)
			if (!strcmp(o->name, name)) {
				if (owner)
					*owner = s;
				return o;
			}
	return NULL;
}
