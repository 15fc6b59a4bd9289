/* grtrace's own work in the target (calibration, probe collection) stays out of every section unless --own. */
#include "analysis/own_work.h"
#include "jobs_trace.h"
#include "report_check.h"
#include "test_util.h"

#define PID 700
#define TID 701
#define CALIB_TID 751	/* a grtrace-* thread of the injected library */
#define CUPTI_TID 752
#define STREAM 0x9000
#define USER_LAUNCHES 5

/*
 * Three calibration kernels and a probe collection copy, flagged own on the
 * host (their calls came from a grtrace-* thread) and on the device, beside
 * five launches of the program. flagged = false writes them as traces from
 * before the own flags did: the calibration kernels launched from the
 * program's own thread, known only by their __grt_ name.
 */
static void write_trace(struct tw *t, bool flagged)
{
	uint32_t calib_tid = flagged ? CALIB_TID : TID;
	uint16_t call_flag = flagged ? GRT_CUDA_F_OWN : 0;
	uint32_t dev_flag = flagged ? GRT_GPU_F_OWN : 0;

	tw_open(t, SRC_HOST_AND_GPU);
	for (uint64_t c = 0; c < 3; c++) {
		uint64_t at = 10000 + c * 10000;

		tw_launch_api(t, PID, calib_tid, at, at + 1000, 0, "__grt_calib", GRT_CUDA_LAUNCH_KERNEL,
			      call_flag);
		tw_gpu_kernel_id(t, PID, CUPTI_TID, (struct tw_call_id){ calib_tid, at - 50, at + 1050,
									 dev_flag },
				 at + 2000, at + 3000, 0, 0, flagged ? "__grt_calib" : "__grt_calib", 0);
		tw_sync_flagged(t, PID, calib_tid, at + 1100, at + 3500, GRT_SYNC_STREAM, call_flag);
	}
	if (flagged) {
		struct grt_cuda_memcpy_rec m = { .call = tw_call(GRT_CUDA_MEMCPY_DTOH_ASYNC_V2, 41000, 0),
						 .bytes = 4096, .stream = 0x1234,
						 .kind = GRT_COPY_DTOH, .is_async = 1, .dims = 1 };

		m.call.flags |= GRT_CUDA_F_OWN;
		tw_rec(t, GRT_REC_CUDA_MEMCPY, PID, CALIB_TID, 40000, &m, sizeof(m));
	}
	for (uint64_t i = 0; i < USER_LAUNCHES; i++) {
		uint64_t at = 100000 + i * 10000;

		tw_launch(t, PID, TID, at, at + 1000, STREAM, "user_kernel");
		tw_gpu_kernel_id(t, PID, CUPTI_TID, (struct tw_call_id){ TID, at - 50, at + 1050, 0 },
				 at + 2000, at + 3000, STREAM, 0, "user_kernel", 0);
	}
	tw_ctx_sync(t, PID, TID, 200000, 210000);
	tw_close(t);
}

static void check_left_out(const char *path, bool flagged)
{
	char *text;
	int rc;

	text = report_capture(path, "kernels,api,jobs", 20, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(!strstr(text, "__grt_calib"));
	CHECK_HAS(text, "user_kernel");
	CHECK_HAS(text, "jobs: 5 (5 complete, 0 incomplete)\n");
	CHECK_HAS(text, flagged ? "  own work: 10 records of grtrace's own work in the target (calibration, "
				  "probe collection) left out; --own shows them\n"
				: "  own work: 6 records of grtrace's own work in the target (calibration, "
				  "probe collection) left out; --own shows them\n");
	free(text);
	text = report_capture(path, "kernels,api,jobs", 20, NULL, true, &rc);
	CHECK_HAS(text, "\"kernels\":[{\"name\":\"user_kernel\",\"resolved\":true,\"launches\":5,");
	CHECK_HAS(text, "\"api\":\"cuLaunchKernel\",\"calls\":5,");
	CHECK_HAS(text, "\"totals\":{\"jobs\":5,");
	free(text);
}

static void check_shown(const char *path, unsigned own_jobs)
{
	char totals[64];

	char *text;
	int rc;

	text = report_capture_with(path, "kernels,api,jobs", (struct report_options){ .top_n = 20,
										     .json = true,
										     .show_own = true },
				   &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_HAS(text, "{\"name\":\"__grt_calib\",\"resolved\":true,\"launches\":3,");
	CHECK_HAS(text, "\"api\":\"cuLaunchKernel\",\"calls\":8,");
	snprintf(totals, sizeof(totals), "\"totals\":{\"jobs\":%u,", USER_LAUNCHES + own_jobs);
	CHECK_HAS(text, totals);
	CHECK_HAS(text, "\"own_shown\":true");
	free(text);
}

static void test_own_work_left_out_unless_asked(void)
{
	struct tw t;

	write_trace(&t, true);
	check_left_out(t.path, true);
	check_shown(t.path, 4); /* the calibration kernels and the collection copy */
	unlink(t.path);
}

/* Older traces have no own flags: grtrace's kernels are told by their __grt_ names. */
static void test_own_kernels_of_older_traces(void)
{
	struct tw t;

	write_trace(&t, false);
	check_left_out(t.path, false);
	check_shown(t.path, 3);
	unlink(t.path);
}

/* A launch without a name is own when its function handle was named __grt_ before. */
static void test_own_function_handle(void)
{
	struct own_work o;
	struct grt_cuda_func_name_rec f = { .handle = 0xca11b };
	struct grt_cuda_launch_rec l = { .function = 0xca11b };
	struct grt_record rec = { .hdr = { .type = GRT_REC_CUDA_FUNC_NAME, .pid = PID,
					   .payload_len = sizeof(f) },
				  .payload = &f };
	struct grt_strings *strings = grt_strings_new();

	CHECK(strings != NULL);
	if (!strings)
		return;
	grt_strings_set(strings, 7, "__grt_calib");
	f.name_str = 7;
	own_work_init(&o);
	CHECK(own_work_record(&o, &rec, strings));
	rec = (struct grt_record){ .hdr = { .type = GRT_REC_CUDA_LAUNCH, .pid = PID,
					    .payload_len = sizeof(l) },
				   .payload = &l };
	CHECK(own_work_record(&o, &rec, strings));
	rec.hdr.pid = PID + 1; /* the same handle value in another process is not */
	CHECK(!own_work_record(&o, &rec, strings));
	CHECK_EQ_U64(o.records, 2);
	own_work_destroy(&o);
	grt_strings_free(strings);
}

int main(void)
{
	RUN_TEST(test_own_work_left_out_unless_asked);
	RUN_TEST(test_own_kernels_of_older_traces);
	RUN_TEST(test_own_function_handle);
	return TEST_EXIT_STATUS();
}
