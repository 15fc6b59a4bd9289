/* The trace's string table: lookups, and texts that stay readable when a damaged trace repeats an id. */
#include "test_util.h"
#include "trace/grt_strings.h"

static void test_set_and_get(void)
{
	struct grt_strings *t = grt_strings_new();

	CHECK_EQ_U64(grt_strings_set(t, 1, "cuLaunchKernel"), 0);
	CHECK_EQ_U64(grt_strings_set(t, 7, ""), 0);
	CHECK_STR(grt_strings_get(t, 1), "cuLaunchKernel");
	CHECK_STR(grt_strings_get(t, 7), "");
	CHECK(grt_strings_get(t, 0) == NULL);
	CHECK(grt_strings_get(t, 2) == NULL);
	grt_strings_free(t);
}

/*
 * A repeated id replaces the text, but what was handed out before stays
 * readable until the table goes: exporters keep these pointers, one of them
 * on another thread (ASan checks the reads).
 */
static void test_repeated_id_keeps_old_text(void)
{
	struct grt_strings *t = grt_strings_new();
	const char *first, *second;

	CHECK_EQ_U64(grt_strings_set(t, 3, "gemm"), 0);
	first = grt_strings_get(t, 3);
	CHECK_EQ_U64(grt_strings_set(t, 3, "conv"), 0);
	second = grt_strings_get(t, 3);
	CHECK_STR(second, "conv");
	CHECK_STR(first, "gemm");
	CHECK(first != second);
	/* the same text again changes nothing */
	CHECK_EQ_U64(grt_strings_set(t, 3, "conv"), 0);
	CHECK(grt_strings_get(t, 3) == second);
	for (int i = 0; i < 100; i++)
		CHECK_EQ_U64(grt_strings_set(t, 3, i % 2 ? "a" : "b"), 0);
	CHECK_STR(first, "gemm");
	CHECK_STR(second, "conv");
	grt_strings_free(t);
}

int main(void)
{
	RUN_TEST(test_set_and_get);
	RUN_TEST(test_repeated_id_keeps_old_text);
	return TEST_EXIT_STATUS();
}
