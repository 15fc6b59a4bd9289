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

/*
 * The drops trace with two adjacent records of one CPU swapped, or one of
 * them written twice: nothing is missing, and the section says what it is.
 */
static int write_irregular(const char *path, bool duplicate)
{
	struct grt_record_header a, b;
	unsigned char *buf, *out;
	size_t len = 0, at = sizeof(struct grt_file_header), na = 0, nb = 0;
	bool found = false;
	int err = -1;

	if (scn_write_drops(path) || !(buf = scn_slurp(path, &len)))
		return -1;
	for (; at + sizeof(a) <= len; at += na) {
		memcpy(&a, buf + at, sizeof(a));
		na = sizeof(a) + a.payload_len;
		if (at + na + sizeof(b) > len)
			break;
		memcpy(&b, buf + at + na, sizeof(b));
		nb = sizeof(b) + b.payload_len;
		/* (a launch repeat record moved before the launch it repeats could not be read) */
		if (a.cpu == b.cpu && a.cpu && a.type != GRT_REC_CHECKSUM && b.type != GRT_REC_CHECKSUM &&
		    !(a.type == GRT_REC_CUDA_LAUNCH && b.type == GRT_REC_CUDA_LAUNCH_REPEAT)) {
			found = true;
			break;
		}
	}
	out = malloc(len + na);
	if (out && found) {
		memcpy(out, buf, at);
		if (duplicate) {
			memcpy(out + at, buf + at, na);
			memcpy(out + at + na, buf + at, len - at);
			err = scn_spit(path, out, len + na);
		} else {
			memcpy(out + at, buf + at + na, nb);
			memcpy(out + at + nb, buf + at, na);
			memcpy(out + at + na + nb, buf + at + na + nb, len - at - na - nb);
			err = scn_spit(path, out, len);
		}
	}
	free(out);
	free(buf);
	return err;
}

static void test_reordered_is_not_missing(void)
{
	const char *path = report_test_path("reordered");
	int rc;
	char *text;

	CHECK(write_irregular(path, false) == 0);
	text = report_capture(path, "drops", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 1); /* the checksum still finds the move */
	CHECK_LINE(text, "record sequence: nothing missing, but records out of order or duplicated");
	CHECK_LINE(text, "  cpu 1    missing 0, gaps 1, out of order 1, duplicated 0");
	free(text);
	CHECK(write_irregular(path, true) == 0);
	text = report_capture(path, "drops", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 1);
	CHECK_LINE(text, "  cpu 1    missing 0, gaps 0, out of order 0, duplicated 1");
	free(text);
}

int main(void)
{
	RUN_TEST(test_lost_per_source);
	RUN_TEST(test_sequence_gap);
	RUN_TEST(test_sequence_json);
	RUN_TEST(test_reordered_is_not_missing);
	report_test_cleanup();
	return TEST_EXIT_STATUS();
}
