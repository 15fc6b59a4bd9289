/* The id -> text table a trace's string records build up, shared by the reader and live views. */
#ifndef GRT_STRINGS_H
#define GRT_STRINGS_H

#include <stdint.h>

struct grt_strings;

struct grt_strings *grt_strings_new(void);
void grt_strings_free(struct grt_strings *t);
/*
 * Stores a copy of text under id; a repeated id replaces it, but the text it
 * replaces stays readable until grt_strings_free(): every pointer
 * grt_strings_get() returned lives as long as the table (a damaged trace may
 * repeat ids; readers keep pointers, some on other threads). Returns 0 or
 * -ENOMEM.
 */
int grt_strings_set(struct grt_strings *t, uint32_t id, const char *text);
/* The text of id, or NULL when id is 0 or unknown. */
const char *grt_strings_get(const struct grt_strings *t, uint32_t id);

#endif
