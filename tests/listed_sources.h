/* GRT_SOURCE_IDS as a table: the ids and names the tests of names and the source registry check. */
#ifndef GRT_TEST_LISTED_SOURCES_H
#define GRT_TEST_LISTED_SOURCES_H

#include <stdint.h>
#include "trace/grt_format.h"

static const struct listed_source {
	uint32_t id;
	const char *name;
} listed_sources[] = {
#define LISTED_SOURCE(upper, name, id) {id, #name},
	GRT_SOURCE_IDS(LISTED_SOURCE)
#undef LISTED_SOURCE
};

#define LISTED_SOURCES (sizeof(listed_sources) / sizeof(listed_sources[0]))

#endif
