/* Finds report sections registered in the grt_report_sections linker section. */
#include <string.h>
#include "analysis/report_section.h"

/* weak: a build with no section still links (the command then has nothing to show) */
extern const struct report_section *const __start_grt_report_sections[] __attribute__((weak));
extern const struct report_section *const __stop_grt_report_sections[] __attribute__((weak));

const struct report_section *report_section_next(const struct report_section *prev)
{
	const struct report_section *const *at = __start_grt_report_sections;

	if (!at)
		return NULL;
	if (prev) {
		while (at < __stop_grt_report_sections && *at != prev)
			at++;
		at++;
	}
	return at < __stop_grt_report_sections ? *at : NULL;
}

const struct report_section *report_section_find(const char *name)
{
	for (const struct report_section *s = report_section_next(NULL); s; s = report_section_next(s))
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}
