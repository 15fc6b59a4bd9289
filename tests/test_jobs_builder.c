/* Job builder tests: events become jobs with exact breakdowns, whatever the order or the losses. */
#include "jobs_trace.h"
#include "test_util.h"

#define PID 100
#define TID 101
#define S1 0x5000
#define S2 0x6000

static void test_complete_kernel_job(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1500, S1, "k_add");
	tw_gpu_kernel(&t, PID, TID, 1000, 3000, 8000, S1, 0, "k_add", 0);
	tw_ctx_sync(&t, PID, TID, 2000, 9000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 1);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->missing, 0);
		CHECK_EQ_U64(j->t_submit_host, 500);
		CHECK_EQ_U64(j->t_queue, 1500);
		CHECK_EQ_U64(j->t_exec, 5000);
		CHECK_EQ_U64(j->t_complete, 1000);
		CHECK_EQ_U64(j->t_total, 8000);
		CHECK_EQ_U64(j->t_gpu_wait, 0);
		CHECK_EQ_U64(j->known, JOB_K_SUBMIT_HOST | JOB_K_QUEUE | JOB_K_EXEC | JOB_K_COMPLETE |
					       JOB_K_GPU_WAIT | JOB_K_TOTAL);
		CHECK_EQ_U64(j->device, 0);
		CHECK_STR(j->name, "k_add");
		CHECK_EQ_U64(j->tags, 0);
	}
	jobs_run_done(&r, &t);
}

/* Host-only trace: no device timing expected, the job says what it misses. */
static void test_host_only_job_is_incomplete(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_ONLY);
	tw_launch(&t, PID, TID, 1000, 1400, S1, "k");
	tw_ctx_sync(&t, PID, TID, 2000, 9000);
	tw_run(&t, &r, NULL);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->missing, JOB_MISS_DEVICE);
		CHECK_EQ_U64(j->t_submit_host, 400);
		CHECK_EQ_U64(j->t_total, 8000);
		CHECK(!(j->known & JOB_K_QUEUE));
		CHECK(!(j->known & JOB_K_EXEC));
		CHECK_EQ_U64(j->complete, 9000);
	}
	CHECK_EQ_U64(idle_gaps_devices(r.gaps), 0);
	jobs_run_done(&r, &t);
}

static void test_missing_complete_and_submit(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *a, *b;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1500, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 1000, 2000, 4000, S1, 0, "k", 0);
	tw_launch(&t, PID, TID + 1, 5000, 0, S2, "k"); /* never returned */
	tw_gpu_kernel(&t, PID, TID + 1, 5000, 6000, 7000, S2, 0, "k", 0);
	tw_run(&t, &r, NULL);
	a = job_at(&r, 1000);
	b = job_at(&r, 5000);
	CHECK(a && b);
	if (a && b) {
		CHECK_EQ_U64(a->missing, JOB_MISS_COMPLETE);
		CHECK_EQ_U64(a->t_total, 3000); /* END - API_ENTER: the span that is known */
		CHECK(!(a->known & JOB_K_COMPLETE));
		CHECK_EQ_U64(b->missing, JOB_MISS_SUBMIT | JOB_MISS_COMPLETE);
		CHECK(!(b->known & JOB_K_SUBMIT_HOST));
		CHECK(!(b->known & JOB_K_QUEUE));
		CHECK_EQ_U64(b->t_exec, 1000);
	}
	jobs_run_done(&r, &t);
}

/*
 * A launch whose return was not sampled is a whole job: API_ENTER stands in
 * for SUBMIT, so t_queue runs from the entry and only t_submit_host is unknown.
 */
static void test_unsampled_return_is_complete(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch_unsampled(&t, PID, TID, 1000, S1, "k_add");
	tw_gpu_kernel(&t, PID, TID, 1000, 3000, 8000, S1, 0, "k_add", 0);
	tw_ctx_sync(&t, PID, TID, 2000, 9000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 1);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->missing, 0);
		CHECK_EQ_U64(j->flags, JOB_F_RETURN_UNSAMPLED | JOB_F_TAIL_UNCHECKED); /* one job: no P90 */
		CHECK_EQ_U64(j->submit, 0);
		CHECK_EQ_U64(j->t_queue, 2000);
		CHECK_EQ_U64(j->t_exec, 5000);
		CHECK_EQ_U64(j->t_complete, 1000);
		CHECK_EQ_U64(j->t_total, 8000);
		CHECK_EQ_U64(j->known, JOB_K_QUEUE | JOB_K_EXEC | JOB_K_COMPLETE | JOB_K_GPU_WAIT |
					       JOB_K_TOTAL);
		CHECK_STR(j->name, "k_add");
	}
	CHECK_EQ_U64(r.summary.incomplete, 0);
	jobs_run_done(&r, &t);
}

/* Device record before its launch, sync before the device record: same answer. */
static void test_out_of_order_records(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_gpu_kernel(&t, PID, TID, 1000, 3000, 8000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 2000, 9000);
	tw_launch(&t, PID, TID, 1000, 1500, S1, "k");
	tw_launch(&t, PID, TID, 20000, 20500, S1, "k");
	tw_ctx_sync(&t, PID, TID, 21000, 30000);
	tw_gpu_kernel(&t, PID, TID, 20000, 22000, 29000, S1, 0, "k", 0);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 2);
	CHECK_EQ_U64(r.stats.device_unmatched, 0);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->missing, 0);
		CHECK_EQ_U64(j->t_queue, 1500);
		CHECK_EQ_U64(j->complete, 9000);
		CHECK_EQ_U64(j->t_complete, 1000);
	}
	j = job_at(&r, 20000);
	CHECK(j && j->missing == 0 && j->complete == 30000 && j->t_exec == 7000);
	jobs_run_done(&r, &t);
}

/* The sync that covers a job is the one entered after its SUBMIT. */
static void test_sync_after_launch_out_of_order(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *a, *b;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1500, S1, "k");
	tw_ctx_sync(&t, PID, TID, 2000, 9000);
	tw_gpu_kernel(&t, PID, TID, 1000, 3000, 8000, S1, 0, "k", 0); /* after the sync in the file */
	tw_launch(&t, PID, TID, 10000, 10500, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 10000, 11000, 12000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 11000, 13000);
	tw_run(&t, &r, NULL);
	a = job_at(&r, 1000);
	b = job_at(&r, 10000);
	CHECK(a && b);
	if (a && b) {
		CHECK_EQ_U64(a->missing, 0);
		CHECK_EQ_U64(a->complete, 9000);
		CHECK_EQ_U64(b->missing, 0);
		CHECK_EQ_U64(b->complete, 13000);
		CHECK_EQ_U64(b->t_complete, 1000);
	}
	jobs_run_done(&r, &t);
}

static void test_correlation_by_stream_order(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *a, *b;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1100, S1, "k1");
	tw_launch(&t, PID, TID, 1200, 1300, S1, "k2");
	tw_gpu_kernel(&t, PID, TID, 0, 2000, 3000, S1, 0, "k1", 0);
	tw_gpu_kernel(&t, PID, TID, 0, 3000, 4500, S1, 0, "k2", 0);
	tw_ctx_sync(&t, PID, TID, 1400, 5000);
	tw_run(&t, &r, NULL);
	a = job_at(&r, 1000);
	b = job_at(&r, 1200);
	CHECK(a && b);
	if (a && b) {
		CHECK_EQ_U64(a->t_exec, 1000);
		CHECK_EQ_U64(b->t_exec, 1500);
		CHECK(a->flags & JOB_F_BY_ORDER);
		CHECK(b->flags & JOB_F_BY_ORDER);
		CHECK_EQ_U64(a->missing | b->missing, 0);
	}
	CHECK_EQ_U64(r.stats.device_by_order, 2);
	jobs_run_done(&r, &t);
}

/* Stream sync covers its stream only; event sync covers jobs before the event record. */
static void test_stream_and_event_coverage(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *a, *b, *c;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1100, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 1000, 1200, 1300, S1, 0, "k", 0);
	tw_launch(&t, PID, TID, 2000, 2100, S2, "k");
	tw_gpu_kernel(&t, PID, TID, 2000, 2200, 2300, S2, 0, "k", 0);
	tw_sync(&t, PID, TID, 2400, 2500, GRT_SYNC_EVENT_RECORD, S2, 0xe1, 0);
	tw_launch(&t, PID, TID, 2600, 2700, S2, "k");
	tw_gpu_kernel(&t, PID, TID, 2600, 2800, 2900, S2, 0, "k", 0);
	tw_sync(&t, PID, TID, 3000, 3100, GRT_SYNC_STREAM, S1, 0, 0);
	tw_sync(&t, PID, TID, 3200, 3300, GRT_SYNC_EVENT_QUERY, 0, 0xe1, 600); /* not ready */
	tw_sync(&t, PID, TID, 3400, 3500, GRT_SYNC_EVENT, 0, 0xe1, 0);
	tw_sync(&t, PID, TID, 3600, 3700, GRT_SYNC_STREAM_QUERY, S2, 0, 0);
	tw_run(&t, &r, NULL);
	a = job_at(&r, 1000);
	b = job_at(&r, 2000);
	c = job_at(&r, 2600);
	CHECK(a && b && c);
	if (a && b && c) {
		CHECK_EQ_U64(a->complete, 3100);
		CHECK_EQ_U64(b->complete, 3500);
		CHECK_EQ_U64(c->complete, 3700);
	}
	jobs_run_done(&r, &t);
}

static void test_graph_nodes_grouped(void)
{
	struct tw t;
	struct jobs_run r;
	uint32_t nodes = 0;
	uint64_t group = 0;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_graph(&t, PID, TID, 1000, 1200, S1, 0xabc);
	tw_gpu_kernel(&t, PID, TID, 1000, 2000, 3000, S1, 0, "node_a", 7);
	tw_gpu_kernel(&t, PID, TID, 1000, 3000, 3500, S1, 0, "node_b", 7);
	tw_gpu_kernel(&t, PID, TID, 1000, 3500, 4500, S1, 0, "node_c", 7);
	tw_graph(&t, PID, TID, 5000, 5200, S2, 0xdef); /* no nodes seen */
	tw_ctx_sync(&t, PID, TID, 6000, 7000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 4);
	for (uint32_t i = 0; i < r.n; i++) {
		const struct job *j = &r.jobs[i];

		if (j->api_enter == 1000) {
			nodes++;
			CHECK_EQ_U64(j->kind, JOB_KERNEL);
			CHECK_EQ_U64(j->graph_nodes, 3);
			CHECK_EQ_U64(j->t_submit_host, 200);
			CHECK_EQ_U64(j->complete, 7000);
			CHECK(group == 0 || group == j->group_id);
			group = j->group_id;
			CHECK_EQ_U64(j->missing, 0);
		} else {
			CHECK_EQ_U64(j->kind, JOB_GRAPH);
			CHECK_EQ_U64(j->missing, JOB_MISS_DEVICE);
		}
	}
	CHECK_EQ_U64(nodes, 3);
	CHECK(group != 0);
	CHECK_EQ_U64(r.summary.graph_nodes, 3);
	jobs_run_done(&r, &t);
}

static void test_synchronous_copy(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_memcpy(&t, PID, TID, 1000, 9000, 0, 0, GRT_COPY_HTOD, 1 << 20);
	tw_gpu_copy(&t, PID, TID, 1000, 3000, 8000, 0, GRT_COPY_HTOD, 1 << 20);
	tw_run(&t, &r, NULL);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->kind, JOB_MEMCPY);
		CHECK(j->flags & JOB_F_SYNC_CALL);
		CHECK_EQ_U64(j->missing, 0);
		CHECK(!(j->known & JOB_K_SUBMIT_HOST));
		CHECK_EQ_U64(j->t_queue, 2000); /* from API_ENTER */
		CHECK_EQ_U64(j->t_exec, 5000);
		CHECK_EQ_U64(j->t_complete, 1000);
		CHECK_EQ_U64(j->t_total, 8000);
		CHECK_EQ_U64(j->bytes, 1 << 20);
		CHECK_STR(j->name, "[memcpy HtoD]");
	}
	jobs_run_done(&r, &t);
}

/* A lost device record: only that job misses device timing, found when a later one matched. */
static void test_dropped_device_record(void)
{
	struct tw t;
	struct jobs_run r;
	struct grt_drop_rec d = { .source = GRT_SRC_GPU, .count = 1 };

	tw_open(&t, SRC_HOST_AND_GPU);
	for (uint64_t i = 0; i < 3; i++)
		tw_launch(&t, PID, TID, 1000 + i * 100, 1050 + i * 100, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 1000, 2000, 3000, S1, 0, "k", 0);
	tw_rec(&t, GRT_REC_DROP, 0, 0, 3500, &d, sizeof(d));
	tw_gpu_kernel(&t, PID, TID, 1200, 4000, 5000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 1300, 6000);
	tw_launch(&t, PID, TID, 7000, 7050, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 7000, 8000, 9000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 7100, 9500);
	tw_run(&t, &r, "late-window=0ns");
	CHECK_EQ_U64(r.n, 4);
	CHECK(job_at(&r, 1000) && job_at(&r, 1000)->missing == 0);
	CHECK(job_at(&r, 1100) && job_at(&r, 1100)->missing == JOB_MISS_DEVICE);
	CHECK(job_at(&r, 1200) && job_at(&r, 1200)->missing == 0);
	CHECK_EQ_U64(r.summary.incomplete, 1);
	CHECK_EQ_U64(r.summary.missing[2], 1);
	/* given up once the next job matched, not held to the end: it comes out before the last job */
	CHECK(r.n == 4 && r.jobs[1].api_enter == 1100 && r.jobs[3].api_enter == 7000);
	jobs_run_done(&r, &t);
}

static void test_failed_launch(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch_failed(&t, PID, TID, 1000, 1500, S1, "k", 98);
	tw_run(&t, &r, NULL);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK(j->flags & JOB_F_FAILED);
		CHECK_EQ_U64(j->missing, 0);
		CHECK_EQ_U64(j->tags, 0);
		CHECK_EQ_U64(j->ret, 98);
	}
	CHECK_EQ_U64(r.summary.failed, 1);
	CHECK_EQ_U64(r.stats.failed_calls, 1);
	jobs_run_done(&r, &t);
}

/* A device record no host call claims is no job, but the device was busy running it. */
static void test_device_record_without_host_call(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1500, S1, "k");
	tw_gpu_kernel_id(&t, PID, TID, (struct tw_call_id){ TID, 990, 1600, 0 }, 2000, 3000, S1, 0,
			 "k", 0);
	tw_gpu_kernel_id(&t, PID, TID, (struct tw_call_id){ TID, 4200, 4300, 0 }, 5000, 6000, S1, 0,
			 "lonely", 0);
	tw_launch(&t, PID, TID, 6500, 6600, S1, "k");
	tw_gpu_kernel_id(&t, PID, TID, (struct tw_call_id){ TID, 6490, 6700, 0 }, 7000, 8000, S1, 0,
			 "k", 0);
	/* after the last job: it does not stretch the span */
	tw_gpu_kernel_id(&t, PID, TID, (struct tw_call_id){ TID, 8200, 8300, 0 }, 9000, 9500, S1, 0,
			 "lonely", 0);
	tw_ctx_sync(&t, PID, TID, 6800, 10000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 2);
	CHECK_EQ_U64(r.stats.device_unmatched, 2);
	CHECK_EQ_U64(r.summary.incomplete, 0);
	CHECK_EQ_U64(idle_gaps_devices(r.gaps), 1);
	if (idle_gaps_devices(r.gaps)) {
		const struct device_idle *d = idle_gaps_device(r.gaps, 0);

		CHECK_EQ_U64(d->busy, 3000);
		CHECK_EQ_U64(d->last_end - d->first_start, 6000);
		/* it does not cut the gap [3000, 7000): its 1000 busy leave the rest to the next submit */
		CHECK_EQ_U64(d->gaps, 1);
		CHECK_EQ_U64(d->idle[GAP_OTHER], 400);
		CHECK_EQ_U64(d->idle[GAP_HOST_BOUND] + d->idle[GAP_SYNC_BOUND], 2600);
	}
	jobs_run_done(&r, &t);
}

/* GPU records carry times already mapped to CLOCK_MONOTONIC: used as they are, never shifted. */
static void test_calibrated_device_times(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;
	struct grt_clock_calib_rec c = { .clock_id = GRT_CLOCK_GPU_GLOBALTIMER, .gpu_ns = 500000,
					 .host_ns = 100000, .error_ns = 32 };

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_rec(&t, GRT_REC_CLOCK_CALIB, 0, 0, 100000, &c, sizeof(c));
	tw_launch(&t, PID, TID, 1000, 1500, S1, "k");
	/* the device started before the launch call returned: a real overlap, not a negative queue */
	tw_gpu_kernel(&t, PID, TID, 1000, 1400, 2400, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 1600, 2600);
	tw_run(&t, &r, NULL);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->start, 1400);
		CHECK_EQ_U64(j->end, 2400);
		CHECK_EQ_U64(j->t_queue, 0);
		CHECK(j->flags & JOB_F_CLAMPED);
		CHECK_EQ_U64(j->t_complete, 200);
	}
	jobs_run_done(&r, &t);
}

/* CUPTI and the block probes both time a launch: the probes win; a second CUPTI one is a duplicate. */
static void test_probe_and_cupti(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1500, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 1000, 2000, 5000, S1, 0, "k", 0);
	tw_gpu_probe(&t, PID, TID, 1000, 2100, 4900, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 1000, 2000, 5000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 1600, 6000);
	tw_run(&t, &r, NULL);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->t_exec, 2800);
		CHECK(j->flags & JOB_F_PROBE);
		CHECK_EQ_U64(j->device, 0);
	}
	CHECK_EQ_U64(r.stats.device_duplicates, 1);
	jobs_run_done(&r, &t);
}

/*
 * The block-probe twin of a launch is drained long after the launch's job
 * finished with CUPTI timing (as on a queued stream): a duplicate, not a
 * device-only job of its own.
 */
static void test_late_twin_after_job_finished(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1500, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 1000, 2000, 5000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 1600, 6000);
	/* a second second of host activity finishes the first job */
	tw_launch(&t, PID, TID, 1000000000, 1000000500, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 1000000000, 1000001000, 1000002000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 1000000600, 1000003000);
	tw_gpu_probe(&t, PID, TID, 1000, 2100, 4900, S1, "k");
	tw_close(&t);
	jobs_run(&r, t.path, NULL, true);
	CHECK_EQ_U64(r.stats.jobs, 2);
	CHECK_EQ_U64(r.stats.device_unmatched, 0);
	CHECK_EQ_U64(r.stats.device_duplicates, 1);
	jobs_run_free(&r);
	unlink(t.path);
}

/* Stream S2 waits for an event recorded on S1: the wait shows as t_gpu_wait of S2's next job. */
static void test_dependency_wait(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *b, *c;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1100, S1, "producer");
	tw_sync(&t, PID, TID, 1200, 1250, GRT_SYNC_EVENT_RECORD, S1, 0xe5, 0);
	tw_sync(&t, PID, TID, 1300, 1350, GRT_SYNC_STREAM_WAIT_EVENT, S2, 0xe5, 0);
	tw_launch(&t, PID, TID, 1400, 1500, S2, "consumer");
	tw_launch(&t, PID, TID, 1600, 1700, S2, "consumer");
	tw_gpu_kernel(&t, PID, TID, 1400, 10100, 10200, S2, 0, "consumer", 0);
	tw_gpu_kernel(&t, PID, TID, 1600, 10200, 10300, S2, 0, "consumer", 0);
	tw_gpu_kernel(&t, PID, TID, 1000, 2000, 10000, S1, 0, "producer", 0);
	tw_ctx_sync(&t, PID, TID, 1800, 10400);
	tw_run(&t, &r, NULL);
	b = job_at(&r, 1400);
	c = job_at(&r, 1600);
	CHECK(b && c);
	if (b && c) {
		CHECK_EQ_U64(b->dep_ready, 10000);
		CHECK_EQ_U64(b->t_gpu_wait, 10000 - 1500);
		CHECK_EQ_U64(b->t_queue, 10100 - 1500);
		CHECK_EQ_U64(b->t_total, 10400 - 1400);
		/* 8500 / 9000 > 40% */
		CHECK(b->tags & TAG(JOB_TAG_DEPENDENCY_WAIT));
		CHECK_EQ_U64(c->t_gpu_wait, 0);
		CHECK(!(c->tags & TAG(JOB_TAG_DEPENDENCY_WAIT)));
	}
	jobs_run_done(&r, &t);
}

/* Periodic syncs keep the number of open jobs small, however long the trace. */
static void test_memory_bounded_by_open_jobs(void)
{
	struct tw t;
	struct jobs_run r;
	uint64_t ts = 1000;

	tw_open(&t, SRC_HOST_AND_GPU);
	for (int i = 0; i < 20000; i++) {
		tw_launch(&t, PID, TID, ts, ts + 100, S1, "k");
		tw_gpu_kernel(&t, PID, TID, ts, ts + 200, ts + 300, S1, 0, "k", 0);
		if (i % 10 == 9)
			tw_ctx_sync(&t, PID, TID, ts + 150, ts + 400);
		ts += 1000;
	}
	tw_run(&t, &r, "late-window=0us");
	CHECK_EQ_U64(r.n, 20000);
	CHECK_EQ_U64(r.summary.incomplete, 0);
	CHECK_EQ_U64(r.stats.max_open, 11); /* ten covered by a sync + the next one opening */
	jobs_run_free(&r);
	jobs_run(&r, t.path, "late-window=100us", true);
	CHECK_EQ_U64(r.n, 20000);
	/* 100 us of lateness at one launch per us keeps about 100 more */
	CHECK(r.stats.max_open <= 11 + 100);
	jobs_run_done(&r, &t);
}

static void test_open_job_limit(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, SRC_HOST_AND_GPU);
	for (uint64_t i = 0; i < 100; i++)
		tw_launch(&t, PID, TID, 1000 + i * 10, 1005 + i * 10, S1, "k");
	tw_close(&t);
	jobs_run(&r, t.path, "max-open-jobs=16", false);
	CHECK_EQ_U64(r.n, 100);
	CHECK_EQ_U64(r.stats.max_open, 17);
	CHECK_EQ_U64(r.stats.forced, 84);
	CHECK_EQ_U64(r.summary.forced, 84);
	jobs_run_done(&r, &t);
}

/* The device side read its own clock around the call: API entry times close, not equal. */
static void test_match_by_nearest_entry_time(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *a, *b;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 10000, 10500, S1, "k");
	tw_launch(&t, PID, TID, 14000, 14500, S1, "k");
	tw_gpu_kernel(&t, PID, TID, 9700, 11000, 12000, S1, 0, "k", 0);
	tw_gpu_probe(&t, PID, TID, 9700, 11100, 11900, S1, "k"); /* the same call, block probes */
	tw_gpu_kernel(&t, PID, TID, 13800, 15000, 17000, S1, 0, "k", 0);
	tw_gpu_kernel(&t, PID, TID, 90000, 95000, 96000, S1, 0, "k", 0); /* nobody near: no job */
	tw_ctx_sync(&t, PID, TID, 15000, 18000);
	tw_run(&t, &r, NULL);
	a = job_at(&r, 10000);
	b = job_at(&r, 14000);
	CHECK(a && b);
	if (a && b) {
		CHECK_EQ_U64(a->t_exec, 800);
		CHECK(a->flags & JOB_F_PROBE);
		CHECK_EQ_U64(b->t_exec, 2000);
		CHECK(a->flags & JOB_F_NEAR);
		CHECK_EQ_U64(a->missing | b->missing, 0);
	}
	CHECK_EQ_U64(r.n, 2);
	CHECK_EQ_U64(r.stats.device_near, 2);
	CHECK_EQ_U64(r.stats.device_unmatched, 1);
	jobs_run_done(&r, &t);
}

/* Device records before their (per-thread default stream) launches, times a little apart. */
static void test_early_device_records_near_and_per_thread_stream(void)
{
	struct tw t;
	struct jobs_run r;
	struct grt_cuda_launch_rec l = { .call = { .return_ns = 10500, .api = GRT_CUDA_LAUNCH_KERNEL_PTSZ },
					 .stream = 0, .user_stack_id = -1 };
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_gpu_kernel(&t, PID, TID, 9800, 11000, 12000, 0, 0, "k", 0);
	tw_gpu_probe(&t, PID, TID, 9800, 11100, 11900, 0, "k");
	l.kernel_str = grt_writer_intern(t.w, "k");
	tw_rec(&t, GRT_REC_CUDA_LAUNCH, PID, TID, 10000, &l, sizeof(l));
	tw_ctx_sync(&t, PID, TID, 10600, 13000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 1);
	j = job_at(&r, 10000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->missing, 0);
		CHECK_EQ_U64(j->t_exec, 800);
		CHECK(j->flags & JOB_F_NEAR);
		CHECK(j->flags & JOB_F_PROBE);
	}
	CHECK_EQ_U64(r.stats.device_unmatched, 0);
	jobs_run_done(&r, &t);
}

int main(void)
{
	RUN_TEST(test_complete_kernel_job);
	RUN_TEST(test_host_only_job_is_incomplete);
	RUN_TEST(test_missing_complete_and_submit);
	RUN_TEST(test_unsampled_return_is_complete);
	RUN_TEST(test_out_of_order_records);
	RUN_TEST(test_sync_after_launch_out_of_order);
	RUN_TEST(test_correlation_by_stream_order);
	RUN_TEST(test_match_by_nearest_entry_time);
	RUN_TEST(test_early_device_records_near_and_per_thread_stream);
	RUN_TEST(test_stream_and_event_coverage);
	RUN_TEST(test_graph_nodes_grouped);
	RUN_TEST(test_synchronous_copy);
	RUN_TEST(test_dropped_device_record);
	RUN_TEST(test_failed_launch);
	RUN_TEST(test_device_record_without_host_call);
	RUN_TEST(test_calibrated_device_times);
	RUN_TEST(test_probe_and_cupti);
	RUN_TEST(test_late_twin_after_job_finished);
	RUN_TEST(test_dependency_wait);
	RUN_TEST(test_memory_bounded_by_open_jobs);
	RUN_TEST(test_open_job_limit);
	return TEST_EXIT_STATUS();
}
