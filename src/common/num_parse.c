/* The one parser of numbers given on the command line: whole text, finite, range-checked. */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include "common/num_parse.h"

static int starts_like_number(const char *text)
{
	return (text[0] >= '0' && text[0] <= '9') || text[0] == '.' ||
	       (text[0] == '-' && ((text[1] >= '0' && text[1] <= '9') || text[1] == '.'));
}

int num_parse_double(const char *text, double min, double max, double *out)
{
	char *end;
	double v;

	/* strtod would take blanks, "inf", "nan" and hex floats */
	if (!starts_like_number(text) || (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')))
		return -EINVAL;
	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int num_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (text[0] < '0' || text[0] > '9')
		return text[0] == '-' && text[1] >= '0' && text[1] <= '9' ? -ERANGE : -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int num_parse_i64(const char *text, int64_t min, int64_t max, int64_t *out)
{
	bool negative = text[0] == '-';
	const char *digits = text + negative;
	unsigned long long magnitude, limit = negative ? (unsigned long long)INT64_MAX + 1 : INT64_MAX;
	int64_t v;
	char *end;

	if (digits[0] < '0' || digits[0] > '9')
		return -EINVAL;
	errno = 0;
	magnitude = strtoull(digits, &end, 10);
	if (*end)
		return -EINVAL;
	/* checked before the negation: nothing past INT64_MIN is negated or cast */
	if (errno == ERANGE || magnitude > limit)
		return -ERANGE;
	v = !negative ? (int64_t)magnitude
	    : magnitude == limit ? INT64_MIN
				 : -(int64_t)magnitude;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int num_parse_seconds(const char *text, double *out)
{
	double v;
	int err = num_parse_double(text, 0, NUM_MAX_SECONDS, &v);

	if (!err && v <= 0)
		err = -ERANGE;
	if (!err)
		*out = v;
	return err;
}
