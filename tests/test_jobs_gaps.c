/* Idle-gap tests: exact host-bound / sync-bound / other totals, and the verdict they lead to. */
#include "jobs_trace.h"
#include "test_util.h"

#define PID 300
#define TID 301
#define S1 0x8000

/* launch at enter, submitted 100 ns later, running [start, end) */
static void job(struct tw *t, uint32_t tid, uint64_t enter, uint64_t start, uint64_t end,
		uint32_t device)
{
	tw_launch(t, PID, tid, enter, enter + 100, S1 + device, "k");
	tw_gpu_kernel(t, PID, tid, enter, start, end, S1 + device, device, "k", 0);
}

/* No syncs between launches: the host submits late, the GPU waits. */
static void test_host_bound_gaps(void)
{
	struct tw t;
	struct jobs_run r;
	const struct device_idle *d;

	tw_open(&t, SRC_HOST_AND_GPU);
	job(&t, TID, 500, 1000, 2000, 0);
	job(&t, TID, 4400, 5000, 6000, 0);	/* submitted at 4500: 2500 host-bound, 500 other */
	job(&t, TID, 8400, 9000, 10000, 0);	/* the same */
	tw_ctx_sync(&t, PID, TID, 8600, 10100);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(idle_gaps_devices(r.gaps), 1);
	d = idle_gaps_device(r.gaps, 0);
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ_U64(d->first_start, 1000);
		CHECK_EQ_U64(d->last_end, 10000);
		CHECK_EQ_U64(d->busy, 3000);
		CHECK_EQ_U64(d->idle[GAP_HOST_BOUND], 5000);
		CHECK_EQ_U64(d->idle[GAP_SYNC_BOUND], 0);
		CHECK_EQ_U64(d->idle[GAP_OTHER], 1000);
		CHECK_EQ_U64(d->gaps, 2);
		CHECK_EQ_U64(d->n_longest, 2);
		CHECK_EQ_U64(d->longest[0].end - d->longest[0].start, 3000);
	}
	CHECK_STR(r.v.cause, "host-bound");
	CHECK_EQ_U64(r.v.tid, TID);
	CHECK(strstr(r.v.text, "67% of GPU time idle; 83% of idle time host-bound: launches from thread 301") != NULL);
	jobs_run_done(&r, &t);
}

/* A sync after every launch: the GPU ran dry while the host waited. */
static void test_sync_bound_gaps(void)
{
	struct tw t;
	struct jobs_run r;
	const struct device_idle *d;

	tw_open(&t, SRC_HOST_AND_GPU);
	job(&t, TID, 500, 1000, 2000, 0);
	tw_sync(&t, PID, TID, 700, 2100, GRT_SYNC_STREAM, S1, 0, 0);
	job(&t, TID, 2500, 2700, 3000, 0);	/* gap [2000,2700): sync-bound to SUBMIT 2600, other 100 */
	tw_sync(&t, PID, TID, 2650, 3050, GRT_SYNC_STREAM, S1, 0, 0);
	job(&t, TID, 3300, 3500, 4500, 0);	/* gap [3000,3500): sync-bound 400, other 100 */
	tw_sync(&t, PID, TID, 3450, 4600, GRT_SYNC_STREAM, S1, 0, 0);
	tw_run(&t, &r, NULL);
	d = idle_gaps_device(r.gaps, 0);
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ_U64(d->busy, 2300);
		CHECK_EQ_U64(d->idle[GAP_SYNC_BOUND], 1000);
		CHECK_EQ_U64(d->idle[GAP_HOST_BOUND], 0);
		CHECK_EQ_U64(d->idle[GAP_OTHER], 200);
	}
	/* idle 1200 of 3500 is under half: the tags speak, and none fired */
	CHECK_STR(r.v.cause, "none");
	jobs_run_free(&r);
	jobs_run(&r, t.path, "idle=30%", true);
	CHECK_STR(r.v.cause, "sync-bound");
	CHECK(strstr(r.v.text, "thread 301 waits for the GPU") != NULL);
	jobs_run_done(&r, &t);
}

/*
 * The H100 trace of bench/scenarios/sync_bound.cu: a 3 us kernel, a stream
 * sync that returns 3 us after its END, the next launch 8 us long; between
 * two kernels grtrace's probe collection runs a kernel of its own on its own
 * stream and thread. That work is busy time, but it must not cut the gap:
 * the host sat in the sync when the GPU ran dry, so the gap is sync-bound
 * (it was "other" before the collection kernel, host-bound after it).
 */
static void test_sync_bound_gaps_with_own_work(void)
{
	const uint32_t own_tid = TID + 50;
	const uint64_t own_stream = 0x7000;
	struct tw t;
	struct jobs_run r;
	const struct device_idle *d;

	tw_open(&t, SRC_HOST_AND_GPU);
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t at = 10000 + i * 20000;

		tw_launch(&t, PID, TID, at, at + 8000, S1, "spin");
		tw_sync(&t, PID, TID, at + 8500, at + 15600, GRT_SYNC_STREAM, S1, 0, 0);
		tw_gpu_kernel_id(&t, PID, TID + 1, (struct tw_call_id){ TID, at, at + 8000, 0 },
				 at + 9600, at + 12600, S1, 0, "spin", 0);
		tw_launch_api(&t, PID, own_tid, at + 13000, at + 13500, own_stream,
			      "__grt_summarize", GRT_CUDA_LAUNCH_KERNEL, GRT_CUDA_F_OWN);
		tw_gpu_kernel_id(&t, PID, TID + 1,
				 (struct tw_call_id){ own_tid, at + 13000, at + 13500, GRT_GPU_F_OWN },
				 at + 13600, at + 16600, own_stream, 0, "__grt_summarize", 0);
	}
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 3);
	d = idle_gaps_device(r.gaps, 0);
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ_U64(d->first_start, 19600);
		CHECK_EQ_U64(d->gaps, 2);
		/* each gap [END, next START) is 17000: 3000 own busy, 1600 after SUBMIT */
		CHECK_EQ_U64(d->idle[GAP_SYNC_BOUND], 2 * 12400);
		CHECK_EQ_U64(d->idle[GAP_HOST_BOUND], 0);
		CHECK_EQ_U64(d->idle[GAP_OTHER], 2 * 1600);
		CHECK_EQ_U64(d->busy, 3 * 3000 + 2 * 3000);
		CHECK_EQ_U64(d->n_longest, 2);
		CHECK_EQ_U64(d->longest[0].split[GAP_SYNC_BOUND], 12400);
	}
	CHECK_STR(r.v.cause, "sync-bound");
	jobs_run_done(&r, &t);
}

/* Two devices are judged apart; overlapping jobs on one device merge. */
static void test_two_devices_and_overlap(void)
{
	struct tw t;
	struct jobs_run r;
	const struct device_idle *d0 = NULL, *d1 = NULL;

	tw_open(&t, SRC_HOST_AND_GPU);
	job(&t, TID, 500, 1000, 3000, 0);
	tw_launch(&t, PID, TID, 600, 700, 0x9999, "k");
	tw_gpu_kernel(&t, PID, TID, 600, 2000, 4000, 0x9999, 0, "k", 0); /* overlaps on device 0 */
	job(&t, TID, 800, 10000, 11000, 1);
	job(&t, TID, 900, 12000, 13000, 1);
	tw_ctx_sync(&t, PID, TID, 1000, 14000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(idle_gaps_devices(r.gaps), 2);
	for (uint32_t i = 0; i < idle_gaps_devices(r.gaps); i++) {
		const struct device_idle *d = idle_gaps_device(r.gaps, i);

		if (d->device == 0)
			d0 = d;
		else if (d->device == 1)
			d1 = d;
	}
	CHECK(d0 && d1);
	if (d0 && d1) {
		CHECK_EQ_U64(d0->busy, 3000);
		CHECK_EQ_U64(d0->gaps, 0);
		CHECK_EQ_U64(d1->busy, 2000);
		CHECK_EQ_U64(d1->gaps, 1);
		/* submitted at 1000 (before the gap): all "other", though the host waited */
		CHECK_EQ_U64(d1->idle[GAP_OTHER], 1000);
	}
	jobs_run_done(&r, &t);
}

/* Gaps are exact even when records of different streams arrive out of time order. */
static void test_gaps_with_out_of_order_streams(void)
{
	struct tw t;
	struct jobs_run r;
	const struct device_idle *d;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 100, 200, 0xa1, "k");
	tw_launch(&t, PID, TID, 300, 400, 0xa2, "k");
	tw_gpu_kernel(&t, PID, TID, 300, 5000, 6000, 0xa2, 0, "k", 0);
	tw_gpu_kernel(&t, PID, TID, 100, 1000, 2000, 0xa1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 500, 7000);
	tw_run(&t, &r, NULL);
	d = idle_gaps_device(r.gaps, 0);
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ_U64(d->busy, 2000);
		CHECK_EQ_U64(d->gaps, 1);
		CHECK_EQ_U64(d->idle[GAP_OTHER], 3000);
		CHECK_EQ_U64(d->late_jobs, 0);
	}
	jobs_run_done(&r, &t);
}

static void test_no_jobs_verdict(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_ctx_sync(&t, PID, TID, 500, 600);
	tw_run(&t, &r, NULL);
	CHECK_STR(r.v.cause, "no-jobs");
	CHECK_EQ_U64(r.n, 0);
	jobs_run_done(&r, &t);
}

/* Many back-to-back launches behind a long kernel: a saturated GPU, queue-wait. */
static void test_queue_bound_verdict(void)
{
	struct tw t;
	struct jobs_run r;
	uint64_t start = 2000000;

	tw_open(&t, SRC_HOST_AND_GPU);
	job(&t, TID, 1000, 1500, start, 0); /* a 2 ms kernel */
	for (int i = 1; i <= 100; i++) {
		tw_launch(&t, PID, TID, 1000 + i * 1000, 1100 + i * 1000, S1, "small");
		tw_gpu_kernel(&t, PID, TID, 1000 + i * 1000, start, start + 10000, S1, 0, "small", 0);
		start += 10000;
	}
	tw_ctx_sync(&t, PID, TID, 200000, start + 1000);
	tw_run(&t, &r, NULL);
	CHECK_STR(r.v.cause, "queue-wait");
	CHECK_EQ_U64(r.summary.tags[JOB_TAG_QUEUE_WAIT].jobs, 100);
	CHECK(strstr(r.v.text, "stream 0x8000") != NULL);
	jobs_run_done(&r, &t);
}

/* Kernels back to back, each faulting its pages in: a busy GPU slowed by unified memory. */
static void test_vm_fault_verdict(void)
{
	struct tw t;
	struct jobs_run r;
	uint64_t ts = 1000;

	tw_open(&t, SRC_HOST_AND_GPU | (1u << GRT_SRC_UVM));
	for (int i = 0; i < 8; i++) {
		job(&t, TID, ts, ts + 500, ts + 50000, 0);
		tw_uvm(&t, PID, ts + 1000, ts + 41000, GRT_UVM_MIGRATION);
		tw_sync(&t, PID, TID, ts + 200, ts + 50100, GRT_SYNC_STREAM, S1, 0, 0);
		ts += 50600;
	}
	tw_run(&t, &r, NULL);
	CHECK_STR(r.v.cause, "vm-fault");
	CHECK_EQ_U64(r.summary.tags[JOB_TAG_VM_FAULT].jobs, 8);
	CHECK_EQ_U64(r.summary.tags[JOB_TAG_VM_FAULT].cost_ns, 8 * 40000);
	jobs_run_done(&r, &t);
}

int main(void)
{
	RUN_TEST(test_host_bound_gaps);
	RUN_TEST(test_sync_bound_gaps);
	RUN_TEST(test_sync_bound_gaps_with_own_work);
	RUN_TEST(test_two_devices_and_overlap);
	RUN_TEST(test_gaps_with_out_of_order_streams);
	RUN_TEST(test_no_jobs_verdict);
	RUN_TEST(test_queue_bound_verdict);
	RUN_TEST(test_vm_fault_verdict);
	return TEST_EXIT_STATUS();
}
