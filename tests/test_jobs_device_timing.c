/* Whether device timing was recorded is said per trace and per process, never from one part's status. */
#include <errno.h>
#include "jobs_trace.h"
#include "report_check.h"
#include "test_util.h"

#define PID 500
#define TID 501
#define CALIB_TID 551	/* grtrace-calib: the injected library's own thread */
#define CUPTI_TID 552
#define STREAM 0x7000
#define LAUNCHES 501
#define UNTIMED 250	/* the one launch CUPTI and the probes missed */

/*
 * As recorded on the H100 with -s cuda,gpu: CUPTI could not use the hardware
 * event system (a negative status of one part of the injected library), the
 * library's three calibration kernels were timed by the block probes only
 * (no device id), and 500 of 501 kernels of the program have their CUPTI and
 * probe records.
 */
static void write_h100_shaped(struct tw *t)
{
	tw_open(t, SRC_HOST_AND_GPU);
	tw_gpu_status(t, PID, CUPTI_TID, 500000, -ENOTSUP,
		      "CUPTI kernel timestamps by instrumenting each launch (hardware event system: "
		      "CUPTI_ERROR_NOT_SUPPORTED)");
	for (uint64_t c = 0; c < 3; c++) {
		uint64_t at = 600000 + c * 20000;
		struct tw_call_id id = { CALIB_TID, at - 100, at + 2100, GRT_GPU_F_OWN };

		tw_launch_api(t, PID, CALIB_TID, at, at + 2000, 0, "__grt_calib", GRT_CUDA_LAUNCH_KERNEL,
			      GRT_CUDA_F_OWN);
		tw_gpu_probe_id(t, PID, CUPTI_TID, id, at + 5000, at + 6000, 0, "__grt_calib");
		tw_sync(t, PID, CALIB_TID, at + 2500, at + 7000, GRT_SYNC_STREAM, 0, 0, 0);
	}
	for (uint64_t i = 0; i < LAUNCHES; i++) {
		uint64_t at = 1000000 + i * 100000;
		struct tw_call_id id = { TID, at - 100, at + 4100, 0 };

		tw_launch(t, PID, TID, at, at + 4000, STREAM, "step");
		if (i == UNTIMED)
			continue;
		tw_gpu_kernel_id(t, PID, CUPTI_TID, id, at + 10000, at + 15000, STREAM, 0, "step", 0);
		tw_gpu_probe_id(t, PID, CUPTI_TID, id, at + 10100, at + 14900, STREAM, "step");
	}
	tw_ctx_sync(t, PID, TID, 60000000, 60001000);
	tw_close(t);
}

static void test_part_failure_is_not_missing_device_timing(void)
{
	struct tw t;
	char *text;
	int rc;

	write_h100_shaped(&t);
	text = report_capture(t.path, "jobs", 5, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(!strstr(text, "device timing:"));
	CHECK(!strstr(text, "device not recorded"));
	CHECK_LINE(text, "idle gaps (device 0):");
	CHECK_LINE(text, "jobs: 501 (500 complete, 1 incomplete, by first missing step: 1 no device "
			 "timing)");
	CHECK_LINE(text, "note: grtrace's own work left out: 3 jobs (calibration, probe collection), "
			 "counted as busy GPU time; --own shows them");
	free(text);
	text = report_capture(t.path, "jobs", 5, NULL, true, &rc);
	CHECK_HAS(text, "\"device_timing\":true,\"gpu_not_running\":null,\"pids_without_device_timing\":[]");
	free(text);
	unlink(t.path);
}

/*
 * With --own the calibration kernels are jobs, on device 0: the process ran
 * on one device, so their probe-only timing is placed there.
 */
static void test_own_probe_jobs_take_the_process_device(void)
{
	struct tw t;
	char *text;
	int rc;

	write_h100_shaped(&t);
	text = report_capture_with(t.path, "jobs", (struct report_options){ .top_n = 5,
									   .show_own = true },
				   &rc);
	CHECK_LINE(text, "jobs: 504 (503 complete, 1 incomplete, by first missing step: 1 no device "
			 "timing)");
	CHECK(!strstr(text, "device not recorded"));
	CHECK_HAS(text, "__grt_calib");
	free(text);
	unlink(t.path);
}

/* A process with jobs but no device record at all is named; so is a gpu source that never ran. */
static void test_missing_device_timing_is_named(void)
{
	struct tw t;
	char *text;
	int rc;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 2000, STREAM, "k");
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, (struct tw_call_id){ TID, 990, 2100, 0 }, 3000, 4000,
			 STREAM, 0, "k", 0);
	tw_launch(&t, 600, 600, 1500, 2500, STREAM, "k");
	tw_launch(&t, 600, 600, 2600, 2700, STREAM, "k");
	tw_ctx_sync(&t, PID, TID, 5000, 6000);
	tw_ctx_sync(&t, 600, 600, 5000, 6000);
	tw_close(&t);
	text = report_capture(t.path, "jobs", 5, NULL, false, &rc);
	CHECK_LINE(text, "device timing: none for pid 600 (?): its 2 jobs have no START/END");
	free(text);
	text = report_capture(t.path, "jobs", 5, NULL, true, &rc);
	CHECK_HAS(text, "\"pids_without_device_timing\":[600]");
	free(text);
	unlink(t.path);

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 2000, STREAM, "k");
	tw_ctx_sync(&t, PID, TID, 5000, 6000);
	tw_gpu_status(&t, 0, 0, 7000, -ENODATA, "gpu: the inject library never reported");
	tw_close(&t);
	text = report_capture(t.path, "jobs", 5, NULL, false, &rc);
	CHECK_LINE(text, "device timing: none, the gpu source did not run: gpu: the inject library never "
			 "reported");
	free(text);
	unlink(t.path);

	tw_open(&t, SRC_HOST_ONLY);
	tw_launch(&t, PID, TID, 1000, 2000, STREAM, "k");
	tw_ctx_sync(&t, PID, TID, 5000, 6000);
	tw_close(&t);
	text = report_capture(t.path, "jobs", 5, NULL, false, &rc);
	CHECK_LINE(text, "device timing: not recorded (add -s gpu): no START/END, no idle gaps");
	free(text);
	unlink(t.path);
}

int main(void)
{
	RUN_TEST(test_part_failure_is_not_missing_device_timing);
	RUN_TEST(test_own_probe_jobs_take_the_process_device);
	RUN_TEST(test_missing_device_timing_is_named);
	return TEST_EXIT_STATUS();
}
