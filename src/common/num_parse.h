/* The one parser of numbers given on the command line: seconds, counts, sizes, thresholds. */
#ifndef GRT_NUM_PARSE_H
#define GRT_NUM_PARSE_H

#include <stdint.h>

/*
 * Every parser takes the whole text (no trailing garbage, no blanks), refuses
 * NaN and infinities, and checks the range before any conversion, so a huge
 * value never wraps or hits an undefined cast. Returns 0, -EINVAL for text
 * that is not a number, -ERANGE for a number outside [min, max].
 */
int num_parse_double(const char *text, double min, double max, double *out);
/* A decimal integer (no sign, no fraction). */
int num_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* A decimal integer with an optional leading '-' (no '+', no fraction). */
int num_parse_i64(const char *text, int64_t min, int64_t max, int64_t *out);

/* Longest --duration / --idle-timeout: a year, far below where seconds * 1e9 overflows. */
#define NUM_MAX_SECONDS (365.0 * 24 * 3600)
/* A positive number of seconds up to NUM_MAX_SECONDS. */
int num_parse_seconds(const char *text, double *out);

#endif
