/* Kernel-name filters: ordinary regexes compile and match, exploding ones are refused. */
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <string.h>
#include "common/kernel_regex.h"
#include "test_util.h"

static bool compiles(const char *pattern)
{
	char why[160] = "";
	regex_t re;

	if (kernel_regex_compile(&re, pattern, why, sizeof(why)))
		return false;
	regfree(&re);
	return true;
}

static void test_ordinary_patterns(void)
{
	char why[160];
	regex_t re;

	CHECK_EQ_U64(kernel_regex_compile(&re, "^_Z[0-9]+vec(tor)?_?add.*$", why, sizeof(why)), 0);
	CHECK(!regexec(&re, "_Z10vector_addPfS_S_i", 0, NULL, 0));
	CHECK(regexec(&re, "gemm", 0, NULL, 0));
	regfree(&re);
	CHECK(compiles("a{1000}"));
	CHECK(compiles("(ab|cd)+x*"));
	CHECK(compiles("[+*?]+"));	/* operators inside brackets are characters */
	CHECK(compiles("a\\+\\+\\+\\+\\+\\+\\+\\+\\+\\+\\+\\+\\+\\+")); /* escaped: literal '+' */
	CHECK(compiles("((((((((((a+)+)+)+)+)+)+)+)+)+)"));	  /* 2^11: still small */
}

/* The fuzzer's find: 90 stacked '+' made glibc's regcomp take over 2 GB. */
static void test_stacked_repetition_refused(void)
{
	char pattern[128] = "x", why[160] = "";
	regex_t re;

	memset(pattern + 1, '+', 90);
	CHECK_EQ_U64(kernel_regex_compile(&re, pattern, why, sizeof(why)), (uint64_t)-EINVAL);
	CHECK(strstr(why, "repetition stacked on repetition"));
	CHECK(!compiles("(a{99}){99}"));
	CHECK(!compiles("((a{20}){20}){20}"));
	CHECK(!compiles("a{5000}"));
}

static void test_other_refusals(void)
{
	char pattern[KERNEL_REGEX_MAX_LEN + 2], why[160] = "";
	regex_t re;

	memset(pattern, 'a', sizeof(pattern) - 1);
	pattern[sizeof(pattern) - 1] = '\0';
	CHECK_EQ_U64(kernel_regex_compile(&re, pattern, why, sizeof(why)), (uint64_t)-EINVAL);
	CHECK(strstr(why, "longer than 1024"));
	CHECK_EQ_U64(kernel_regex_compile(&re, "a(b", why, sizeof(why)), (uint64_t)-EINVAL);
	CHECK(strstr(why, "parenthes") || strstr(why, "Unmatched"));
}

int main(void)
{
	RUN_TEST(test_ordinary_patterns);
	RUN_TEST(test_stacked_repetition_refused);
	RUN_TEST(test_other_refusals);
	return TEST_EXIT_STATUS();
}
