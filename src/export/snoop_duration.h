/* The one way snoop's text lines show how long something took: microseconds, "12.3 us". */
#ifndef GRT_EXPORT_SNOOP_DURATION_H
#define GRT_EXPORT_SNOOP_DURATION_H

#include <stdint.h>
#include <stdio.h>

/* prints sep, then the duration */
static inline void snoop_print_duration(FILE *out, const char *sep, uint64_t ns)
{
	fprintf(out, "%s%.1f us", sep, (double)ns / 1e3);
}

#endif
