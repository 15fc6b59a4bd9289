/* Tests of the drops report section: lost events per source and per-CPU sequence gaps. */
#include "report_check.h"
#include "report_scenarios.h"

static void test_lost_per_source(void)
{
	const char *path = report_test_path("drops");
	int rc;
	char *text;

	CHECK(scn_write_drops(path) == 0);
	text = report_capture(path, "drops", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "lost events: 8 (in 3 drop records)");
	CHECK_LINE(text, "  cuda                        5");
	CHECK_LINE(text, "  uvm                         3");
	/* the trailer agrees with the drop records: no warning */
	CHECK(!strstr(text, "WARNING"));
	CHECK_LINE(text, "record sequence: contiguous (CPUs seen: 2)");
	free(text);
}

static void test_sequence_gap(void)
{
	const char *path = report_test_path("seq_gap");
	int rc;
	char *text;

	CHECK(scn_write_seq_gap(path) == 0);
	text = report_capture(path, "drops", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 1); /* a record deleted: the report is printed, the damage fails it */
	CHECK_LINE(text, "record sequence: records missing from the trace file: 1");
	CHECK_LINE(text, "  cpu 1    missing 1, gaps 1, out of order 0, duplicated 0");
	CHECK_LINE(text, "WARNING: the trailer says 11 records were written before it, 10 were read");
	free(text);
}

static void test_sequence_json(void)
{
	const char *path = report_test_path("seq_gap_json");
	int rc;
	char *text;

	CHECK(scn_write_seq_gap(path) == 0);
	text = report_capture(path, "drops", 0, NULL, true, &rc);
	CHECK_HAS(text, "\"drops\":{\"lost\":8,\"drop_records\":3,\"trailer_lost\":8,"
			"\"sources\":[{\"source\":\"cuda\",\"lost\":5},{\"source\":\"uvm\",\"lost\":3}],"
			"\"sequence_missing\":1,");
	CHECK_HAS(text, "{\"cpu\":1,\"records\":5,\"gaps\":1,\"missing\":1,\"out_of_order\":0,\"duplicated\":0}");
	free(text);
}

int main(void)
{
	RUN_TEST(test_lost_per_source);
	RUN_TEST(test_sequence_gap);
	RUN_TEST(test_sequence_json);
	report_test_cleanup();
	return TEST_EXIT_STATUS();
}
