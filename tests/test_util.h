/* A minimal test harness: each TEST is a function, CHECK records failures, main runs them all. */
#ifndef GRT_TEST_UTIL_H
#define GRT_TEST_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_failures_in_case;
static int test_cases_passed, test_cases_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);         \
			test_failures_in_case++;                                                   \
		}                                                                                  \
	} while (0)

/* CHECK with a printf-style detail of what was found */
#define CHECK_MSG(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  check failed: ");                                                \
			printf(__VA_ARGS__);                                                       \
			printf(" (%s:%d)\n", __FILE__, __LINE__);                                  \
			test_failures_in_case++;                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b);                                   \
		if (_a != _b) {                                                                    \
			printf("  check failed: %s == %s (%" PRIu64 " != %" PRIu64 ") (%s:%d)\n", #a, \
			       #b, _a, _b, __FILE__, __LINE__);                                    \
			test_failures_in_case++;                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || !_b || strcmp(_a, _b)) {                                                \
			printf("  check failed: %s == \"%s\" (got \"%s\") (%s:%d)\n", #a,           \
			       _b ? _b : "(null)", _a ? _a : "(null)", __FILE__, __LINE__);         \
			test_failures_in_case++;                                                   \
		}                                                                                  \
	} while (0)

#define RUN_TEST(fn)                                                                               \
	do {                                                                                       \
		test_failures_in_case = 0;                                                         \
		fn();                                                                              \
		if (test_failures_in_case) {                                                       \
			printf("FAIL - %s\n", #fn);                                                \
			test_cases_failed++;                                                       \
		} else {                                                                           \
			printf("ok - %s\n", #fn);                                                  \
			test_cases_passed++;                                                       \
		}                                                                                  \
	} while (0)

/* The exit status of a test program: non-zero when any case failed. */
#define TEST_EXIT_STATUS() (test_cases_failed ? 1 : 0)

#endif
