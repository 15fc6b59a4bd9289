/* Tests of the copies report section: bytes per direction, synchronous bandwidth, memsets. */
#include "report_check.h"
#include "report_scenarios.h"

static void test_copy_directions(void)
{
	const char *path = report_test_path("copies");
	int rc;
	char *text;

	CHECK(scn_write_copies(path) == 0);
	text = report_capture(path, "copies", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	/* 3 x 1 MiB in 1 ms each: 3145728 bytes / 3 ms = 1.048576 GB/s */
	CHECK_LINE(text, "  HtoD            3      3145728        3     1.049    1000.000        0       0");
	CHECK_LINE(text, "  DtoH            2         8192        0         -           -        2       0");
	/* a failed copy moved nothing */
	CHECK_LINE(text, "  DtoD            1            0        0         -           -        0       1");
	/* 1 MiB in 500 us: 2.097152 GB/s */
	CHECK_LINE(text, "  memset          2      1050624        1     2.097     500.000        1       0");
	CHECK(!strstr(text, "HtoH"));
	free(text);
}

static void test_copy_json(void)
{
	const char *path = report_test_path("copies_json");
	int rc;
	char *text;

	CHECK(scn_write_copies(path) == 0);
	text = report_capture(path, "copies", 0, NULL, true, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_HAS(text, "{\"direction\":\"HtoD\",\"calls\":3,\"errors\":0,\"bytes\":3145728,"
			"\"sync_calls\":3,\"sync_bytes\":3145728,\"async_calls\":0,\"async_bytes\":0,"
			"\"timed_bytes\":3145728,\"sync_gbytes_per_s\":1.04858,\"sync_ns\":{\"count\":3,"
			"\"total\":3000000,");
	CHECK_HAS(text, "\"memsets\":{\"calls\":2,\"errors\":0,\"bytes\":1050624,");
	free(text);
}

static void test_no_copies(void)
{
	const char *path = report_test_path("no_copies");
	int rc;
	char *text;

	CHECK(scn_write_drops(path) == 0);
	text = report_capture(path, "copies", 0, NULL, false, &rc);
	CHECK_LINE(text, "no memcpy or memset calls in this trace");
	free(text);
}

int main(void)
{
	RUN_TEST(test_copy_directions);
	RUN_TEST(test_copy_json);
	RUN_TEST(test_no_copies);
	report_test_cleanup();
	return TEST_EXIT_STATUS();
}
