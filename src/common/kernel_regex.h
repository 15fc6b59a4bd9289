/* Kernel-name filters (--gpu-kernels): POSIX extended regexes whose compiled size is bounded. */
#ifndef GRT_KERNEL_REGEX_H
#define GRT_KERNEL_REGEX_H

#include <regex.h>
#include <stddef.h>

/* Longest pattern taken, and the most any part may be repeated in the compiled form. */
#define KERNEL_REGEX_MAX_LEN 1024
#define KERNEL_REGEX_MAX_EXPANSION 4096

/*
 * regcomp(REG_EXTENDED | REG_NOSUB) of a pattern a user typed, after
 * refusing what glibc's compiler expands exponentially: repetition stacked
 * on repetition ("a++", "(a{99}){99}"). 0, or -EINVAL with one line in why
 * (nothing to free then).
 */
int kernel_regex_compile(regex_t *re, const char *pattern, char *why, size_t why_len);

#endif
