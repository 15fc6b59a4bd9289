/* The --jobs report section end to end through report_run, and the --threshold list parser. */
#include <stdio.h>
#include "analysis/report.h"
#include "common/log.h"
#include "jobs_trace.h"
#include "test_util.h"

#define PID 400
#define TID 401

static void make_trace(struct tw *t)
{
	tw_open(t, SRC_HOST_AND_GPU);
	for (uint64_t i = 0; i < 5; i++) {
		uint64_t ts = 1000000 + i * 1000000;

		tw_launch(t, PID, TID, ts, ts + 5000, 0x10, "k,\"quoted\"");
		tw_gpu_kernel(t, PID, TID, ts, ts + 10000, ts + 20000, 0x10, 0, "k,\"quoted\"", 0);
	}
	tw_launch(t, PID, TID, 9000000, 0, 0x10, "k,\"quoted\""); /* never returned */
	tw_ctx_sync(t, PID, TID, 8000000, 8100000);
	tw_close(t);
}

/* Runs the report with the jobs section into a string (caller frees). */
static char *report(const char *path, const char *format, const char *thresholds, int *rc)
{
	const struct report_section *jobs = report_section_find("jobs");
	struct report_options opt = { .sections = &jobs, .nsections = 1, .top_n = 5,
				      .thresholds = thresholds };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	opt.json = !strcmp(format, "json");
	opt.csv = !strcmp(format, "csv");
	opt.csv_table = opt.csv ? "jobs" : NULL;
	*rc = report_run(path, &opt, out);
	fclose(out);
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_section_registered(void)
{
	const struct report_section *s = report_section_find("jobs");

	CHECK(s != NULL);
	CHECK(s && !s->default_on);
}

static void test_text_report(void)
{
	struct tw t;
	int rc;
	char *out;

	make_trace(&t);
	out = report(t.path, "text", NULL, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(strstr(out, "== jobs ==\nverdict: ") != NULL);
	/* it misses its submit, its device timing and its completion: counted once, under the first */
	CHECK(strstr(out, "jobs: 6 (5 complete, 1 incomplete, by first missing step: 1 no submit)\n") !=
	      NULL);
	CHECK(strstr(out, "idle gaps (device 0):") != NULL);
	CHECK(strstr(out, "host-bound 3.94 ms, sync-bound 0 ns, uvm-bound 0 ns, other 20.0 us") != NULL);
	CHECK(strstr(out, "worst jobs (by submit + queue + exec;") != NULL);
	free(out);
	unlink(t.path);
}

static void test_json_report(void)
{
	struct tw t;
	int rc;
	char *out;

	make_trace(&t);
	out = report(t.path, "json", NULL, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(strstr(out, "\"jobs\":{\"verdict\":{\"cause\":\"host-bound\"") != NULL);
	CHECK(strstr(out, "\"idle_host_bound_ns\":3940000") != NULL);
	CHECK(strstr(out, "\"name\":\"k,\\\"quoted\\\"\"") != NULL);
	CHECK(strstr(out, "\"missing\":[\"no-submit\",\"no-device-timing\",\"no-complete\"]") != NULL);
	CHECK(strstr(out, "\"tail_checked\":true") != NULL);
	free(out);
	unlink(t.path);
}

static void test_csv_report(void)
{
	struct tw t;
	int rc;
	char *out;

	make_trace(&t);
	out = report(t.path, "csv", NULL, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(!strncmp(out, "job,group,batch,pid,tid,device,kind,name,", 41));
	/* --table jobs: one table, the header and one row per job, no second table after it */
	CHECK(strstr(out, "\n\n") == NULL);
	CHECK_EQ_U64(count_lines(out), 1 + 6);
	CHECK(strstr(out, ",\"k,\"\"quoted\"\"\",") != NULL);
	free(out);
	unlink(t.path);
}

/* Launches without any device timing: the verdict says it cannot judge, not "nothing stands out". */
static void test_verdict_without_device_timing(void)
{
	struct tw t;
	int rc;
	char *out;

	tw_open(&t, SRC_HOST_ONLY);
	for (uint64_t i = 0; i < 4; i++)
		tw_launch(&t, PID, TID, 1000000 + i * 1000000, 1005000 + i * 1000000, 0x10, "k");
	tw_ctx_sync(&t, PID, TID, 8000000, 8100000);
	tw_close(&t);
	out = report(t.path, "text", NULL, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(strstr(out, "verdict: cannot judge without device timing: none of the 4 jobs has its "
			  "GPU start and end (record with -s gpu), and no host-side cause stands out\n") !=
	      NULL);
	CHECK(strstr(out, "no blocking cause stands out") == NULL);
	free(out);
	out = report(t.path, "json", NULL, &rc);
	CHECK(strstr(out, "\"cause\":\"no-device-timing\"") != NULL);
	free(out);
	unlink(t.path);
}

static void test_bad_threshold_is_usage_error(void)
{
	struct tw t;
	int rc;
	char *out;

	make_trace(&t);
	out = report(t.path, "text", "queue-wait=50%,5parsecs", &rc);
	CHECK_EQ_U64(rc, GRT_EXIT_USAGE);
	free(out);
	out = report(t.path, "text", "queue-wait=10%,1us,leak_min_bytes=100", &rc);
	CHECK_EQ_U64(rc, 0);
	free(out);
	unlink(t.path);
}

/* A template-heavy kernel name longer than a CSV line buffer comes out whole. */
static void test_long_kernel_name(void)
{
	struct tw t;
	char name[5001], *out, quoted[5100];
	int rc;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	name[10] = '"';
	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 2000, 0x10, name);
	tw_gpu_kernel(&t, PID, TID, 1000, 3000, 4000, 0x10, 0, name, 0);
	tw_ctx_sync(&t, PID, TID, 2500, 5000);
	tw_close(&t);
	out = report(t.path, "csv", NULL, &rc);
	CHECK_EQ_U64(rc, 0);
	snprintf(quoted, sizeof(quoted), ",\"%.10s\"\"%s\",", name, name + 11);
	CHECK(strstr(out, quoted) != NULL);
	CHECK(strstr(out, ",kernel,\"xxxxxxxxxx\"\"xxx") != NULL);
	free(out);
	out = report(t.path, "json", NULL, &rc);
	CHECK(strstr(out, "\"name\":\"xxxxxxxxxx\\\"xxxx") != NULL);
	free(out);
	unlink(t.path);
}

struct parse_case {
	const char *list;
	int ok;
	const char *error_part;
};

static void test_threshold_list(void)
{
	static const struct parse_case cases[] = {
		{ "queue-wait=50%,500us,host-submit-slow=30%,200us", 1, NULL },
		{ "exec-long-tail=2.5x,20", 1, NULL },
		{ "late-window=1.5ms,batch-gap=0ns,max-open-jobs=100", 1, NULL },
		{ "queue-wait=500us", 1, NULL },
		{ "queue-wiat=50%", 0, "unknown threshold 'queue-wiat'" },
		{ "queue-wait=50", 0, "bad value '50' for queue-wait" },
		{ "queue-wait=150%", 0, "bad value '150%'" },
		{ "queue-wait=50%,60%", 0, "two values of one kind" },
		{ "50%", 0, "before any KEY=" },
		{ "exec-long-tail=0x", 0, "bad value '0x'" },
		{ "preempted=-1us", 0, "bad value '-1us'" },
		{ "leak_min_bytes=5,10us", 0, "follows a key the jobs section does not know" },
		{ "", 0, "empty threshold list" },
	};
	struct job_thresholds t;
	char err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		job_thresholds_default(&t);
		err[0] = 0;
		rc = threshold_list_parse(&t, cases[i].list, err, sizeof(err));
		if ((rc == 0) != cases[i].ok || (cases[i].error_part && !strstr(err, cases[i].error_part)))
			printf("  case '%s': rc %d err '%s'\n", cases[i].list, rc, err);
		CHECK((rc == 0) == cases[i].ok);
		CHECK(!cases[i].error_part || strstr(err, cases[i].error_part));
	}
	job_thresholds_default(&t);
	CHECK_EQ_U64(threshold_list_parse(&t, "queue-wait=12.5%,2ms,exec-long-tail=2.5x,20", err,
					  sizeof(err)), 0);
	CHECK_EQ_U64(t.queue_share_ppm, 125000);
	CHECK_EQ_U64(t.queue_min_ns, 2000000);
	CHECK_EQ_U64(t.tail_factor_milli, 2500);
	CHECK_EQ_U64(t.tail_min_jobs, 20);
	CHECK_EQ_U64(t.submit_share_ppm, 300000); /* untouched */
	/* a failed parse leaves the thresholds as they were */
	CHECK(threshold_list_parse(&t, "queue-wait=1%,bogus", err, sizeof(err)) != 0);
	CHECK_EQ_U64(t.queue_share_ppm, 125000);
}

int main(void)
{
	RUN_TEST(test_section_registered);
	RUN_TEST(test_text_report);
	RUN_TEST(test_json_report);
	RUN_TEST(test_csv_report);
	RUN_TEST(test_verdict_without_device_timing);
	RUN_TEST(test_bad_threshold_is_usage_error);
	RUN_TEST(test_long_kernel_name);
	RUN_TEST(test_threshold_list);
	return TEST_EXIT_STATUS();
}
