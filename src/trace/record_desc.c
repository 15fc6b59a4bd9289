/* Finds record descriptions registered in the grt_record_descs linker section. */
#include <stddef.h>
#include <string.h>
#include "trace/record_desc.h"

/* The linker defines these bounds for any section named like a C identifier. */
extern const struct grt_record_desc *const __start_grt_record_descs[];
extern const struct grt_record_desc *const __stop_grt_record_descs[];

/* Types are small numbers; index them once so reading stays O(1) per record. */
static const struct grt_record_desc *by_type[GRT_REC_TYPE_MAX];
static int indexed;

static void index_descs(void)
{
	for (const struct grt_record_desc *const *d = __start_grt_record_descs;
	     d < __stop_grt_record_descs; d++)
		if ((*d)->type < GRT_REC_TYPE_MAX)
			by_type[(*d)->type] = *d;
	indexed = 1;
}

const struct grt_record_desc *grt_record_desc_find(uint16_t type)
{
	if (!indexed)
		index_descs();
	return type < GRT_REC_TYPE_MAX ? by_type[type] : NULL;
}

const struct grt_record_desc *grt_record_desc_by_name(const char *name)
{
	for (const struct grt_record_desc *const *d = __start_grt_record_descs;
	     d < __stop_grt_record_descs; d++)
		if (!strcmp((*d)->name, name))
			return *d;
	return NULL;
}
