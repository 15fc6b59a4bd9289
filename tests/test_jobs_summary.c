/* Summaries that tell the truth: tag time as wall time (not summed over overlapping jobs), worst jobs by what slowed them. */
#include "jobs_trace.h"
#include "report_check.h"
#include "test_util.h"

#define PID 800
#define TID 801
#define STREAM 0xa000
#define MS 1000000ull
#define US 1000ull

/*
 * A 53 ms program: one 50 ms kernel, then 200 short kernels submitted right
 * behind it, all queued until it ends. Each queued ~50 ms: summed over the
 * jobs that is 10.1 s, but queued work was there during 52 ms of wall time.
 */
static void write_queue_storm(struct tw *t)
{
	uint64_t at = 1 * MS;

	tw_open(t, SRC_HOST_AND_GPU);
	tw_launch(t, PID, TID, at, at + 5 * US, STREAM, "big");
	tw_gpu_kernel_id(t, PID, TID, (struct tw_call_id){ TID, at - 100, at + 5 * US + 100, 0 },
			 at + 10 * US, at + 50 * MS, STREAM, 0, "big", 0);
	for (uint64_t i = 0; i < 200; i++) {
		uint64_t enter = at + 10 * US + i * 5 * US;
		uint64_t start = at + 50 * MS + i * 10 * US;

		tw_launch(t, PID, TID, enter, enter + 4 * US, STREAM, "small");
		tw_gpu_kernel_id(t, PID, TID, (struct tw_call_id){ TID, enter - 100, enter + 4 * US + 100, 0 },
				 start, start + 10 * US, STREAM, 0, "small", 0);
	}
	tw_ctx_sync(t, PID, TID, at + 1100 * US, at + 53 * MS);
	tw_close(t);
}

static void test_tag_time_is_wall_time(void)
{
	struct tw t;
	char *text;
	int rc;

	write_queue_storm(&t);
	text = report_capture(t.path, "jobs", 5, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	/* 201 jobs from the first entry (1 ms) to the sync's return (54 ms) */
	CHECK_HAS(text, "tags (wall: time with at least one such job, of the 53.00 ms span; summed: over "
			"jobs, overlaps counted again):\n");
	/* from the first small kernel's SUBMIT (1.014 ms) to the last one's START (52.99 ms) */
	CHECK_HAS(text, "  tag                    jobs   jobs%      wall_us   span%    summed_us\n");
	CHECK_HAS(text, "\nkernels (by GPU time):\n"
			"  kernel                                       jobs    gpu%      exec_us     p50_us     p90_us     p99_us total_p90_us\n");
	CHECK_LINE(text, "  queue-wait              200   99.5%      51976.0   98.1%   10096700.0");
	CHECK_HAS(text, "dominant cause queue-wait: 200 jobs spent most of their time queued behind "
			"earlier work, queued work during 51.98 ms of the 53.00 ms span (98%; 10.10 s summed "
			"over jobs)");
	free(text);
	text = report_capture(t.path, "jobs", 5, NULL, true, &rc);
	CHECK_HAS(text, "\"queue-wait\":{\"jobs\":200,\"job_share\":0.995025,\"tag_ns\":10096700000,"
			"\"wall_ns\":51976000,\"span_share\":0.980679");
	free(text);
	unlink(t.path);
}

/*
 * Nine 5 us kernels the host notices only at its final sync, 110 ms later,
 * and one 3 ms kernel synced at once: the 3 ms one is what was slow; the
 * others only waited to be noticed, shown in their own column.
 */
static void test_worst_jobs_by_what_slowed_them(void)
{
	struct tw t;
	struct jobs_run r;
	char *text, *worst;
	int rc;

	tw_open(&t, SRC_HOST_AND_GPU);
	for (uint64_t i = 0; i < 9; i++) {
		uint64_t at = 1 * MS + i * 100 * US;

		tw_launch(&t, PID, TID, at, at + 4 * US, STREAM, "tiny");
		tw_gpu_kernel_id(&t, PID, TID, (struct tw_call_id){ TID, at - 100, at + 4 * US + 100, 0 },
				 at + 10 * US, at + 15 * US, STREAM, 0, "tiny", 0);
	}
	tw_launch(&t, PID, TID, 2 * MS, 2 * MS + 4 * US, STREAM + 1, "slow");
	tw_gpu_kernel_id(&t, PID, TID, (struct tw_call_id){ TID, 2 * MS - 100, 2 * MS + 4 * US + 100, 0 },
			 2 * MS + 10 * US, 5 * MS + 10 * US, STREAM + 1, 0, "slow", 0);
	tw_sync(&t, PID, TID, 2 * MS + 5 * US, 5 * MS + 20 * US, GRT_SYNC_STREAM, STREAM + 1, 0, 0);
	tw_ctx_sync(&t, PID, TID, 100 * MS, 111 * MS);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.summary.n_worst, 10);
	CHECK_STR(r.summary.worst[0].name, "slow");
	CHECK_EQ_U64(job_slow_ns(&r.summary.worst[0]), 3 * MS + 10 * US);
	text = report_capture(t.path, "jobs", 3, NULL, false, &rc);
	worst = strstr(text, "worst jobs (by submit + queue + exec; 'noticed' is END to the host's "
			     "COMPLETE):\n");
	CHECK(worst != NULL);
	CHECK_HAS(text, "       job kernel                            tid    slow_us  submit_us   queue_us "
			"   exec_us gpu_wait_us noticed_us   total_us  tags\n"
			"        10 slow                              801     3010.0        4.0        6.0 "
			"    3000.0         0.0       10.0     3020.0");
	free(text);
	jobs_run_done(&r, &t);
}

int main(void)
{
	RUN_TEST(test_tag_time_is_wall_time);
	RUN_TEST(test_worst_jobs_by_what_slowed_them);
	return TEST_EXIT_STATUS();
}
