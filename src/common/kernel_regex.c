/* Kernel-name filters: refuses regexes whose compiled form would explode, then regcomp. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/kernel_regex.h"

#define MAX_DEPTH 64

/*
 * glibc compiles "x{n}" by copying x's tree n times and "x+" as "xx*", so
 * each repetition of something already repeated multiplies the tree: 90
 * stacked '+' took over 2 GB. The expansion of an atom is how many copies a
 * repetition makes of it (its bound, 2 for '*', '+' and '?'), times the
 * expansion of what it contains; the pattern is refused when any atom's
 * exceeds KERNEL_REGEX_MAX_EXPANSION.
 */
static unsigned long repeat_factor(const char **p)
{
	const char *s = *p;
	unsigned long lo = 0, hi;
	char *end;

	if (*s != '{')
		return 2;
	lo = strtoul(s + 1, &end, 10);
	hi = lo;
	if (*end == ',')
		hi = end[1] == '}' ? 2 : strtoul(end + 1, &end, 10); /* "{n,}" is x{n} x* */
	if (*end == ',' && end[1] == '}')
		end++;
	if (*end != '}')
		return 0; /* not a bound: regcomp will say what is wrong */
	*p = end;
	return (lo > hi ? lo : hi) + 1;
}

/* Index just past a bracket expression starting at s[0] == '['. */
static size_t skip_bracket(const char *s)
{
	size_t i = 1;

	if (s[i] == '^')
		i++;
	if (s[i] == ']')
		i++;
	while (s[i] && s[i] != ']')
		i++;
	return s[i] ? i + 1 : i;
}

static int check_expansion(const char *pattern, char *why, size_t why_len)
{
	/* per open group: the largest expansion inside it so far */
	unsigned long inside[MAX_DEPTH + 1] = {1};
	unsigned long last = 0; /* expansion of the last atom, 0 when none can be repeated */
	int depth = 0;

	for (const char *s = pattern; *s; s++) {
		unsigned long f;

		switch (*s) {
		case '(':
			if (depth == MAX_DEPTH)
				goto too_deep;
			inside[++depth] = 1;
			last = 0;
			continue;
		case ')':
			if (depth == 0) {
				last = 1;
				continue;
			}
			last = inside[depth--];
			break;
		case '*':
		case '+':
		case '?':
		case '{':
			f = repeat_factor(&s);
			if (!last || !f)
				continue;
			last *= f;
			if (last > KERNEL_REGEX_MAX_EXPANSION) {
				snprintf(why, why_len,
					 "repetition stacked on repetition (the compiled form would "
					 "copy a part over %d times)",
					 KERNEL_REGEX_MAX_EXPANSION);
				return -EINVAL;
			}
			break;
		case '[':
			s += skip_bracket(s) - 1;
			last = 1;
			break;
		case '\\':
			if (s[1])
				s++;
			last = 1;
			break;
		case '|':
		case '^':
		case '$':
			last = 0;
			continue;
		default:
			last = 1;
			break;
		}
		if (last > inside[depth])
			inside[depth] = last;
	}
	return 0;
too_deep:
	snprintf(why, why_len, "groups nested more than %d deep", MAX_DEPTH);
	return -EINVAL;
}

int kernel_regex_compile(regex_t *re, const char *pattern, char *why, size_t why_len)
{
	char what[128];
	int rc;

	if (strlen(pattern) > KERNEL_REGEX_MAX_LEN) {
		snprintf(why, why_len, "longer than %d characters", KERNEL_REGEX_MAX_LEN);
		return -EINVAL;
	}
	if (check_expansion(pattern, why, why_len))
		return -EINVAL;
	rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, re, what, sizeof(what));
		snprintf(why, why_len, "%s", what);
		return -EINVAL;
	}
	return 0;
}
