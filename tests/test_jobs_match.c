/* Device records to host calls: by the call they name (thread + bracket), whatever the timing or order. */
#include "jobs_trace.h"
#include "report_check.h"
#include "test_util.h"

#define PID 300
#define CUPTI_TID 399	/* the thread that writes device records: not the caller */
#define NSTREAMS 4
#define NTHREADS 3
#define NLAUNCHES 300

static const uint64_t streams[NSTREAMS] = { 0x5000, 0x6000, 0x7000, 0x8000 };

struct launch_plan {
	uint32_t tid;
	uint64_t stream;
	uint64_t enter;		/* the uprobe's entry time (the cuda record) */
	uint64_t ret;
	struct tw_call_id id;	/* the bracket the injected library stamped around the call */
	uint64_t start;		/* on the device */
	uint64_t end;
	char kernel[16];
};

/*
 * A JAX-like program: NTHREADS threads launch through cuLaunchKernelEx, each
 * thread's calls 1.2 us apart (600 ns in the driver) and a thread's neighbour
 * 400 ns away, three launches in a row on one stream and the streams taking
 * turns. The wrapper's stamps sit up to 290 ns outside the uprobe's (inside
 * the gap to the thread's previous and next call), so the nearest entry time
 * is often another thread's launch.
 */
static void plan_launches(struct launch_plan *p)
{
	for (uint32_t i = 0; i < NLAUNCHES; i++) {
		uint64_t before = 50 + (i * 277) % 240, after = 30 + (i * 131) % 260;

		p[i].tid = 301 + i % NTHREADS;
		p[i].stream = streams[(i / NTHREADS) % NSTREAMS];
		p[i].enter = 1000000 + (uint64_t)i * 400;
		p[i].ret = p[i].enter + 600;
		p[i].id = (struct tw_call_id){ .tid = p[i].tid, .enter = p[i].enter - before,
					       .ret = p[i].ret + after };
		p[i].start = 2000000 + (uint64_t)i * 1000;
		p[i].end = p[i].start + 500 + i;
		snprintf(p[i].kernel, sizeof(p[i].kernel), "k%03u", i);
	}
}

static void write_launch(struct tw *t, const struct launch_plan *p)
{
	tw_launch_api(t, PID, p->tid, p->enter, p->ret, p->stream, p->kernel,
		      GRT_CUDA_LAUNCH_KERNEL_EX, 0);
}

static void write_device(struct tw *t, const struct launch_plan *p)
{
	tw_gpu_kernel_id(t, PID, CUPTI_TID, p->id, p->start, p->end, p->stream, 0, p->kernel, 0);
}

/*
 * Jobs equal launches, each timed by its own kernel record, although the
 * device records come in another order than the calls (streams drained in
 * turn, a third of them before their launch records) and from another thread.
 */
static void test_jax_like_launches_match_by_identity(void)
{
	static struct launch_plan p[NLAUNCHES];
	struct tw t;
	struct jobs_run r;
	uint32_t right = 0;

	plan_launches(p);
	tw_open(&t, SRC_HOST_AND_GPU);
	for (uint32_t i = 0; i < NLAUNCHES / 3; i++)
		write_launch(&t, &p[i]);
	/* device records stream by stream, the last stream first, newest launch of each first */
	for (int s = NSTREAMS - 1; s >= 0; s--)
		for (int i = NLAUNCHES - 1; i >= 0; i--)
			if (p[i].stream == streams[s])
				write_device(&t, &p[i]);
	for (uint32_t i = NLAUNCHES / 3; i < NLAUNCHES; i++)
		write_launch(&t, &p[i]);
	for (uint32_t k = 0; k < NTHREADS; k++)
		tw_ctx_sync(&t, PID, 301 + k, 3000000 + k * 100, 3000000 + k * 100 + 50);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, NLAUNCHES);
	CHECK_EQ_U64(r.summary.incomplete, 0);
	CHECK_EQ_U64(r.stats.device_by_identity, NLAUNCHES);
	CHECK_EQ_U64(r.stats.device_near + r.stats.device_by_order + r.stats.device_unmatched, 0);
	for (uint32_t i = 0; i < NLAUNCHES; i++) {
		const struct job *j = job_at(&r, p[i].enter);

		right += j && j->start == p[i].start && j->end == p[i].end && j->tid == p[i].tid &&
			 !(j->flags & (JOB_F_NEAR | JOB_F_BY_ORDER));
	}
	CHECK_EQ_U64(right, NLAUNCHES);
	jobs_run_done(&r, &t);
}

/* A graph launch's kernels carry its bracket and graph id: its nodes, not the launch beside it. */
static void test_graph_nodes_by_identity(void)
{
	struct tw t;
	struct jobs_run r;
	struct tw_call_id graph = { .tid = 301, .enter = 9900, .ret = 12100 };
	struct tw_call_id other = { .tid = 302, .enter = 10100, .ret = 11900 };
	uint32_t nodes = 0;
	const struct job *k;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_graph(&t, PID, 301, 10000, 12000, streams[0], 0xabc);
	tw_launch(&t, PID, 302, 10200, 11800, streams[0], "beside");
	for (int i = 0; i < 3; i++)
		tw_gpu_kernel_id(&t, PID, CUPTI_TID, graph, 20000 + i * 1000, 20500 + i * 1000,
				 streams[0], 0, "node", 0xabc);
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, other, 30000, 31000, streams[0], 0, "beside", 0);
	tw_ctx_sync(&t, PID, 301, 40000, 41000);
	tw_run(&t, &r, NULL);
	for (uint32_t i = 0; i < r.n; i++)
		nodes += r.jobs[i].group_id && r.jobs[i].api_enter == 10000 && r.jobs[i].kind == JOB_KERNEL;
	CHECK_EQ_U64(nodes, 3);
	CHECK_EQ_U64(r.n, 4);
	k = job_at(&r, 10200);
	CHECK(k && k->start == 30000 && k->group_id == 0);
	CHECK_EQ_U64(r.stats.device_by_identity, 4);
	jobs_run_done(&r, &t);
}

/*
 * CUPTI and the block probes time one call (the probes win); a third record
 * of it after its job finished is a duplicate; a record whose call's job
 * finished without it is late: no job, busy device time only.
 */
static void test_twins_and_late_records(void)
{
	struct tw t;
	struct jobs_run r;
	struct tw_call_id a = { .tid = 301, .enter = 990, .ret = 2100 };
	struct tw_call_id b = { .tid = 301, .enter = 2990, .ret = 4100 };
	struct tw_call_id c = { .tid = 301, .enter = 4990, .ret = 5600 };
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, 301, 1000, 2000, streams[0], "k");
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, a, 5000, 6000, streams[0], 0, "k", 0);
	tw_gpu_probe_id(&t, PID, CUPTI_TID, a, 5100, 5900, streams[0], "k");
	tw_launch(&t, PID, 301, 3000, 4000, streams[0], "k");
	/* the next launch of the stream is timed: the one before lost its device record */
	tw_launch(&t, PID, 301, 5000, 5500, streams[0], "k");
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, c, 7000, 7100, streams[0], 0, "k", 0);
	tw_ctx_sync(&t, PID, 301, 7000, 8000);
	/* a second of host time later: both jobs are finished, the second without device timing */
	tw_launch(&t, PID, 301, 1000000000, 1000000500, streams[1], "k");
	tw_ctx_sync(&t, PID, 301, 1000000600, 1000000700);
	/* the thread's device records reached that second too: b's is known not to come */
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, (struct tw_call_id){ 301, 999999990, 1000000510 },
			 1000000550, 1000000650, streams[1], 0, "k", 0);
	tw_gpu_probe_id(&t, PID, CUPTI_TID, a, 5100, 5900, streams[0], "k");
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, b, 6500, 6800, streams[0], 0, "k", 0);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 4);
	j = job_at(&r, 1000);
	CHECK(j && j->t_exec == 800 && (j->flags & JOB_F_PROBE));
	j = job_at(&r, 3000);
	CHECK(j && j->missing == JOB_MISS_DEVICE);
	CHECK_EQ_U64(r.stats.device_duplicates, 1);
	CHECK_EQ_U64(r.stats.device_late, 1);
	CHECK_EQ_U64(r.stats.device_unmatched, 0);
	if (idle_gaps_devices(r.gaps))
		CHECK_EQ_U64(idle_gaps_device(r.gaps, 0)->busy, 800 + 300 + 100 + 100);
	jobs_run_done(&r, &t);
}

/*
 * The H100 JAX trace: each calling thread's device records come in their own
 * bursts, one thread's 185 ms of trace time after the other threads' records,
 * past the late window (100 ms), and inside a burst a later call's record may
 * come first. The earlier call's job waits for its record (it was finished
 * without device timing, the record then counted late or unmatched).
 */
static void test_one_threads_records_come_late(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	/* thread 301: one launch timed at once, then two whose records come in the next burst */
	tw_launch(&t, PID, 301, 1000, 2000, streams[0], "k");
	tw_gpu_kernel_id(&t, PID, 301, (struct tw_call_id){ 301, 990, 2010 }, 2500, 2600,
			 streams[0], 0, "k", 0);
	tw_launch(&t, PID, 301, 3000, 4000, streams[0], "k");
	tw_memcpy(&t, PID, 301, 4500, 5000, streams[0], 1, GRT_COPY_DTOH, 64);
	tw_ctx_sync(&t, PID, 301, 5500, 9000);
	/* thread 302 goes on for 300 ms, its records on time */
	for (uint64_t i = 1; i <= 30; i++) {
		uint64_t at = i * 10000000;

		tw_launch(&t, PID, 302, at, at + 1000, streams[1], "k");
		tw_gpu_kernel_id(&t, PID, 302, (struct tw_call_id){ 302, at - 10, at + 1010 },
				 at + 2000, at + 3000, streams[1], 0, "k", 0);
		tw_ctx_sync(&t, PID, 302, at + 1500, at + 3500);
	}
	/* thread 301's burst: the copy's record before the kernel's */
	tw_gpu_copy_id(&t, PID, 301, (struct tw_call_id){ 301, 4490, 5010 }, 6000, 6100,
		       streams[0], GRT_COPY_DTOH, 64);
	tw_gpu_kernel_id(&t, PID, 301, (struct tw_call_id){ 301, 2990, 4010 }, 5000, 6000,
			 streams[0], 0, "k", 0);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 33);
	CHECK_EQ_U64(r.summary.incomplete, 0);
	CHECK_EQ_U64(r.stats.device_records, 33);
	CHECK_EQ_U64(r.stats.device_by_identity, 33);
	CHECK_EQ_U64(r.stats.device_late + r.stats.device_unmatched, 0);
	j = job_at(&r, 3000);
	CHECK(j && j->start == 5000 && j->end == 6000);
	j = job_at(&r, 4500);
	CHECK(j && j->start == 6000 && j->end == 6100);
	jobs_run_done(&r, &t);
}

/* A copy of no bytes puts no work on the GPU and gets no device record: no job waits for one. */
static void test_empty_copy_is_no_job(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_memcpy(&t, PID, 301, 1000, 1100, streams[0], 1, GRT_COPY_HTOD, 0);
	tw_launch(&t, PID, 301, 2000, 2500, streams[0], "k");
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, (struct tw_call_id){ 301, 1990, 2510 }, 3000, 3500,
			 streams[0], 0, "k", 0);
	tw_ctx_sync(&t, PID, 301, 3000, 4000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 1);
	CHECK_EQ_U64(r.summary.incomplete, 0);
	jobs_run_done(&r, &t);
}

/*
 * grtrace's calibration kernels carry no call bracket: they are counted apart,
 * not as application records matched by time (torch 1047 of 1050 on the H100).
 */
static void test_own_records_counted_apart(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch_api(&t, PID, 350, 500, 600, 0x9000, "__grt_calib", GRT_CUDA_LAUNCH_KERNEL,
		      GRT_CUDA_F_OWN);
	tw_gpu_kernel(&t, PID, 350, 500, 700, 800, 0x9000, 0, "__grt_calib", 0);
	tw_launch(&t, PID, 301, 1000, 2000, streams[0], "k");
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, (struct tw_call_id){ 301, 990, 2010 }, 2500, 2600,
			 streams[0], 0, "k", 0);
	tw_ctx_sync(&t, PID, 301, 3000, 4000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 1);
	CHECK_EQ_U64(r.stats.device_records, 1);
	CHECK_EQ_U64(r.stats.own_device_records, 1);
	CHECK_EQ_U64(r.stats.device_by_identity, 1);
	CHECK_EQ_U64(r.stats.device_near + r.stats.device_by_order + r.stats.device_unmatched, 0);
	jobs_run_done(&r, &t);
}

/*
 * Device records whose cuda events were lost are no jobs: counted, the reason
 * said in one line, their execution still busy time for the idle gaps.
 */
static void test_unmatched_records_are_no_jobs(void)
{
	struct tw t;
	struct jobs_run r;
	struct grt_drop_rec lost = { .source = GRT_SRC_CUDA, .count = 3 };
	char *text;
	int rc;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, 301, 1000, 2000, streams[0], "k");
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, (struct tw_call_id){ 301, 990, 2100, 0 }, 10000, 11000,
			 streams[0], 0, "k", 0);
	tw_rec(&t, GRT_REC_DROP, 0, 0, 2500, &lost, sizeof(lost));
	for (int i = 0; i < 3; i++)
		tw_gpu_kernel_id(&t, PID, CUPTI_TID,
				 (struct tw_call_id){ 301, 3000 + i * 1000, 3500 + i * 1000, 0 },
				 12000 + i * 1000, 12500 + i * 1000, streams[0], 0, "k", 0);
	tw_launch(&t, PID, 301, 7000, 8000, streams[0], "k");
	tw_gpu_kernel_id(&t, PID, CUPTI_TID, (struct tw_call_id){ 301, 6990, 8100, 0 }, 16000, 17000,
			 streams[0], 0, "k", 0);
	tw_ctx_sync(&t, PID, 301, 9000, 18000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 2);
	CHECK_EQ_U64(r.summary.incomplete, 0);
	CHECK_EQ_U64(r.stats.device_unmatched, 3);
	CHECK_EQ_U64(r.stats.device_by_identity, 2);
	if (idle_gaps_devices(r.gaps) == 1)
		CHECK_EQ_U64(idle_gaps_device(r.gaps, 0)->busy, 1000 + 3 * 500 + 1000);
	text = report_capture(t.path, "jobs", 5, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_HAS(text, "jobs: 2 (2 complete, 0 incomplete)\n");
	CHECK_LINE(text, "note: 3 device records without a recorded host call (no jobs; their execution "
			 "counts as busy GPU time): 3 cuda events were lost while recording");
	free(text);
	jobs_run_done(&r, &t);
}

/*
 * A trace of format 1.0 (80-byte kernel records, no bracket) is still
 * matched, by the nearest API entry time, and the report says so.
 */
static void test_time_fallback_is_reported(void)
{
	struct tw t;
	struct jobs_run r;
	char *text;
	int rc;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, 301, 1000, 2000, streams[0], "k");
	tw_gpu_kernel_v1_0(&t, PID, CUPTI_TID, 900, 5000, 6000, streams[0], "k");
	tw_launch(&t, PID, 301, 3000, 4000, streams[0], "k");
	tw_gpu_kernel_v1_0(&t, PID, CUPTI_TID, 3000, 7000, 8000, streams[0], "k");
	tw_ctx_sync(&t, PID, 301, 9000, 10000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 2);
	CHECK_EQ_U64(r.summary.incomplete, 0);
	CHECK(job_at(&r, 1000) && job_at(&r, 1000)->start == 5000);
	CHECK(job_at(&r, 3000) && job_at(&r, 3000)->start == 7000);
	CHECK_EQ_U64(r.stats.device_near, 1);
	CHECK_EQ_U64(r.stats.device_by_identity, 0);
	text = report_capture(t.path, "jobs", 5, NULL, false, &rc);
	CHECK_LINE(text, "note: 1 device records matched by nearest time: trace has no call identity");
	free(text);
	jobs_run_done(&r, &t);
}

int main(void)
{
	RUN_TEST(test_jax_like_launches_match_by_identity);
	RUN_TEST(test_graph_nodes_by_identity);
	RUN_TEST(test_twins_and_late_records);
	RUN_TEST(test_one_threads_records_come_late);
	RUN_TEST(test_own_records_counted_apart);
	RUN_TEST(test_empty_copy_is_no_job);
	RUN_TEST(test_unmatched_records_are_no_jobs);
	RUN_TEST(test_time_fallback_is_reported);
	return TEST_EXIT_STATUS();
}
