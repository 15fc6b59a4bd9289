/* Tests of the kernels and api report sections, and of partial reports over broken traces. */
#include "report_check.h"
#include "report_scenarios.h"

static void test_kernel_rows(void)
{
	const char *path = report_test_path("kernels");
	int rc;
	char *text;

	CHECK(scn_write_kernels(path) == 0);
	text = report_capture(path, "kernels", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "3 kernels, 12 launches (API time = cuLaunchKernel entry to return)");
	/* 7 timed launches of 10..70 us: mean = p50 = 40, p99 = 70; the 8th never returned */
	CHECK_LINE(text, "        8      0      280.000     40.000     40.000     70.000  "
			 "4x1x1 / 256x1x1                  2   vecAdd");
	CHECK_LINE(text, "          ^ 1 of these never returned (not in the times)");
	/* two launches named only after the fact, one failing launch */
	CHECK_LINE(text, "        3      1       21.000      7.000      7.000      9.000  "
			 "1x1x1 / 32x1x1                   1   saxpy");
	CHECK_LINE(text, "        1      0        1.000      1.000      1.000      1.000  "
			 "2x1x1 / 64x1x1                   1   func@0xdead0");
	free(text);
}

static void test_kernel_top(void)
{
	const char *path = report_test_path("kernels_top");
	int rc;
	char *text;

	CHECK(scn_write_kernels(path) == 0);
	text = report_capture(path, "kernels", 1, NULL, false, &rc);
	CHECK_HAS(text, "vecAdd");
	CHECK(!strstr(text, "saxpy"));
	CHECK_LINE(text, "... 2 more kernels (--top 0 shows all)");
	free(text);
}

static void test_api_per_process(void)
{
	const char *path = report_test_path("api");
	int rc;
	char *text;

	CHECK(scn_write_kernels(path) == 0);
	text = report_capture(path, "api", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "pid 100 (vecadd): calls 13, errors 1, 0.304 ms in the driver API");
	/* 11 timed launches: 1,5,7,9,10,20,...,70 us -> p50 (rank 6) = 20 */
	CHECK_LINE(text, "         12      1      302.000     27.455     20.000     70.000  "
			 "cuLaunchKernel (last error 700)");
	CHECK_LINE(text, "          1      0        2.000      2.000      2.000      2.000  "
			 "cuModuleGetFunction");
	CHECK_LINE(text, "  calls that never returned: 1 (their time is not counted)");
	CHECK_LINE(text, "pid 200 (leaky): calls 2, errors 0, 0.008 ms in the driver API");
	CHECK_LINE(text, "          1      0        5.000      5.000      5.000      5.000  cuMemAlloc_v2");
	free(text);
}

/* --launch-returns 4: the times and errors are those of the sampled launches, and say so. */
static void test_sampled_returns(void)
{
	const char *path = report_test_path("sampled");
	int rc;
	char *text;

	CHECK(scn_write_sampled_returns(path, 4) == 0);
	text = report_capture(path, "kernels,api", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "1 kernels, 8 launches (API time = cuLaunchKernel entry to return, sampled "
			 "1 in 4 per thread: 2 launches)");
	CHECK_LINE(text, "        8      1       60.000     30.000     30.000     30.000  "
			 "4x1x1 / 256x1x1                  1   vecAdd");
	CHECK(!strstr(text, "never returned"));
	CHECK_LINE(text, "          8      1       60.000     30.000     30.000     30.000  "
			 "cuLaunchKernel (last error 700)");
	CHECK_LINE(text, "  launches whose return was not sampled (--launch-returns): 6 (their time "
			 "and errors are not counted)");
	free(text);
	text = report_capture(path, "kernels,api", 0, NULL, true, &rc);
	CHECK_HAS(text, "\"launch_returns\":4,");
	CHECK_HAS(text, "\"launches\":8,\"errors\":1,\"unfinished\":0,\"unsampled\":6,"
			"\"api_ns\":{\"count\":2,\"total\":60000,");
	CHECK_HAS(text, "\"calls\":8,\"errors\":1,\"last_error\":700,\"unfinished\":0,"
			"\"unsampled\":6,\"api_ns\":{\"count\":2,");
	free(text);
	/* --launch-returns 0: nothing timed, and nothing passed off as a success */
	CHECK(scn_write_sampled_returns(path, 0) == 0);
	text = report_capture(path, "kernels", 0, NULL, false, &rc);
	CHECK_LINE(text, "1 kernels, 8 launches (API time not recorded: --launch-returns 0)");
	CHECK_LINE(text, "        8      0        0.000      0.000      0.000      0.000  "
			 "4x1x1 / 256x1x1                  1   vecAdd");
	free(text);
	text = report_capture(path, "kernels", 0, NULL, true, &rc);
	CHECK_HAS(text, "\"launch_returns\":0,");
	CHECK_HAS(text, "\"unsampled\":8,\"api_ns\":{\"count\":0,");
	free(text);
	/* a trace without the settings record (older recordings) says nothing about sampling */
	CHECK(scn_write_kernels(path) == 0);
	text = report_capture(path, "kernels", 0, NULL, true, &rc);
	CHECK_HAS(text, "\"launch_returns\":null,");
	free(text);
}

static void test_header_block(void)
{
	const char *path = report_test_path("header");
	int rc;
	char *text;

	CHECK(scn_write_kernels(path) == 0);
	text = report_capture(path, "drops", 0, NULL, false, &rc);
	CHECK_LINE(text, "  host:     testhost  kernel 6.18.0-test  driver 580.159.04  CUDA 13.0");
	CHECK_LINE(text, "  command:  ./vecadd 1024");
	CHECK_HAS(text, "duration 2.000000 s");
	CHECK_LINE(text, "  sources:  cuda");
	CHECK_LINE(text, "  ended:    target-exit (trailer present), 22 records");
	CHECK(!strstr(text, "WARNING"));
	free(text);
}

static void test_no_trailer(void)
{
	const char *path = report_test_path("no_trailer");
	int rc;
	char *text;

	CHECK(scn_write_no_trailer(path) == 0);
	text = report_capture(path, "kernels", 0, NULL, false, &rc);
	/* a cut-short recording is reported, with everything it holds, and is not an error */
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "  ended:    no trailer, 21 records");
	CHECK_LINE(text, "WARNING: the trace has no trailer: the recording was cut short; this report "
			 "covers the 21 records before the cut");
	CHECK_HAS(text, "40.000     40.000     70.000");
	free(text);
}

static void test_truncated(void)
{
	const char *path = report_test_path("truncated");
	int rc;
	char *text;

	CHECK(scn_write_truncated(path) == 0);
	text = report_capture(path, "kernels,drops", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 1);
	CHECK_HAS(text, "WARNING: reading stopped early (truncated record at offset");
	/* the four launches before the cut: 40, 10, 70, 30 us */
	CHECK_LINE(text, "        4      0      150.000     37.500     30.000     70.000  "
			 "4x1x1 / 256x1x1                  1   vecAdd");
	/* the sections after the break still print */
	CHECK_HAS(text, "== drops ==");
	free(text);
}

static void test_bad_magic(void)
{
	const char *path = report_test_path("bad_magic");
	int rc;
	char *text;

	CHECK(scn_write_bad_magic(path) == 0);
	text = report_capture(path, "kernels", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 1);
	CHECK_HAS(text, "WARNING: reading stopped early (bad record magic 0x55 at offset");
	CHECK_LINE(text, "        5      0      170.000     34.000     30.000     70.000  "
			 "4x1x1 / 256x1x1                  1   vecAdd");
	free(text);
}

static void test_unreadable(void)
{
	int rc;
	char *text = report_capture("/nonexistent/trace.grt", NULL, 0, NULL, false, &rc);

	CHECK_EQ_U64(rc, 1);
	CHECK_STR(text, "");
	free(text);
}

int main(void)
{
	RUN_TEST(test_kernel_rows);
	RUN_TEST(test_kernel_top);
	RUN_TEST(test_api_per_process);
	RUN_TEST(test_sampled_returns);
	RUN_TEST(test_header_block);
	RUN_TEST(test_no_trailer);
	RUN_TEST(test_truncated);
	RUN_TEST(test_bad_magic);
	RUN_TEST(test_unreadable);
	report_test_cleanup();
	return TEST_EXIT_STATUS();
}
