/* Tag tests: each tag alone and combined, exactly at its threshold and one nanosecond over. */
#include "jobs_trace.h"
#include "test_util.h"

#define PID 200
#define TID 201
#define S1 0x7000

/*
 * One job with chosen parts: API_ENTER at 1e6, then submit/queue/exec/complete
 * spans in ns. Returns its tags (and the job in *out when given).
 */
static uint32_t one_job(uint64_t submit, uint64_t queue, uint64_t exec, uint64_t complete,
			const char *thresholds, struct job *out)
{
	struct tw t;
	struct jobs_run r;
	uint64_t enter = 1000000, sub = enter + submit, start = sub + queue, end = start + exec;
	uint32_t tags = 0xffffffff;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, enter, sub, S1, "k");
	tw_gpu_kernel(&t, PID, TID, enter, start, end, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, sub + 1 > end ? end : sub + 1, end + complete);
	tw_run(&t, &r, thresholds);
	CHECK_EQ_U64(r.parse_rc, 0);
	if (r.n == 1) {
		tags = r.jobs[0].tags;
		if (out)
			*out = r.jobs[0];
	}
	jobs_run_done(&r, &t);
	return tags;
}

static void test_host_submit_slow_boundaries(void)
{
	/* share: 30% of a 1 ms job is 300 us; exactly at it is not slow, one ns over is */
	CHECK_EQ_U64(one_job(300000, 100000, 500000, 100000, NULL, NULL), 0);
	CHECK_EQ_U64(one_job(300001, 100000, 500000, 99999, NULL, NULL), TAG(JOB_TAG_HOST_SUBMIT_SLOW));
	/* absolute: 200 us is a large share of a 500 us job, but not more than 200 us */
	CHECK_EQ_U64(one_job(200000, 100000, 100000, 100000, NULL, NULL), 0);
	CHECK_EQ_U64(one_job(200001, 100000, 100000, 99999, NULL, NULL), TAG(JOB_TAG_HOST_SUBMIT_SLOW));
}

static void test_queue_wait_boundaries(void)
{
	CHECK_EQ_U64(one_job(1000, 500000, 400000, 99000, NULL, NULL), 0);
	CHECK_EQ_U64(one_job(1000, 500001, 400000, 98999, NULL, NULL), TAG(JOB_TAG_QUEUE_WAIT));
	/* 62% but exactly 500 us: not over the absolute limit */
	CHECK_EQ_U64(one_job(1000, 500000, 200000, 99000, NULL, NULL), 0);
	CHECK_EQ_U64(one_job(1000, 500001, 200000, 99000, NULL, NULL), TAG(JOB_TAG_QUEUE_WAIT));
}

static void test_threshold_override(void)
{
	/* 20% queue of 10 us: nothing by default, queue-wait with 10%,1us */
	CHECK_EQ_U64(one_job(1000, 2000, 6000, 1000, NULL, NULL), 0);
	CHECK_EQ_U64(one_job(1000, 2000, 6000, 1000, "queue-wait=10%,1us", NULL), TAG(JOB_TAG_QUEUE_WAIT));
	CHECK_EQ_U64(one_job(1000, 2000, 6000, 1000, "queue-wait=20%,1us", NULL), 0);
	CHECK_EQ_U64(one_job(3001, 2000, 4000, 999, "host-submit-slow=30%,3us", NULL),
		     TAG(JOB_TAG_HOST_SUBMIT_SLOW));
}

/* Ten runs of 1000 ns and one of limit: tagged only above 1.5 x P90. */
static uint32_t tail_tags(uint64_t slow_exec, int normal_jobs, const char *thresholds, int *checked)
{
	struct tw t;
	struct jobs_run r;
	uint64_t ts = 1000000;
	uint32_t tags = 0;

	tw_open(&t, SRC_HOST_AND_GPU);
	for (int i = 0; i <= normal_jobs; i++) {
		uint64_t exec = i == normal_jobs ? slow_exec : 1000;

		tw_launch(&t, PID, TID, ts, ts + 100, S1, "k_tail");
		tw_gpu_kernel(&t, PID, TID, ts, ts + 200, ts + 200 + exec, S1, 0, "k_tail", 0);
		tw_ctx_sync(&t, PID, TID, ts + 150, ts + 300 + exec);
		ts += 100000;
	}
	tw_run(&t, &r, thresholds);
	*checked = 1;
	for (uint32_t i = 0; i < r.n; i++) {
		tags |= r.jobs[i].tags;
		if (r.jobs[i].flags & JOB_F_TAIL_UNCHECKED)
			*checked = 0;
		if (r.jobs[i].t_exec == slow_exec)
			CHECK_EQ_U64(r.jobs[i].tail_limit, *checked ? 1500 * (thresholds ? 2 : 1) : 0);
	}
	jobs_run_done(&r, &t);
	return tags;
}

static void test_exec_long_tail_boundaries(void)
{
	int checked;

	CHECK_EQ_U64(tail_tags(1500, 10, NULL, &checked), 0);
	CHECK(checked);
	CHECK_EQ_U64(tail_tags(1501, 10, NULL, &checked), TAG(JOB_TAG_EXEC_LONG_TAIL));
	CHECK_EQ_U64(tail_tags(3000, 10, "exec-long-tail=3x", &checked), 0);
	CHECK_EQ_U64(tail_tags(3001, 10, "exec-long-tail=3x", &checked), TAG(JOB_TAG_EXEC_LONG_TAIL));
	/* fewer jobs than the minimum: not judged, and the jobs say so */
	CHECK_EQ_U64(tail_tags(100000, 8, NULL, &checked), 0);
	CHECK(!checked);
}

static void test_exec_long_tail_needs_second_pass(void)
{
	struct tw t;
	struct jobs_run r;
	uint64_t ts = 1000000;

	tw_open(&t, SRC_HOST_AND_GPU);
	for (int i = 0; i < 20; i++) {
		tw_launch(&t, PID, TID, ts, ts + 100, S1, "k");
		uint64_t exec = i == 19 ? 50000 : 1000;

		tw_gpu_kernel(&t, PID, TID, ts, ts + 200, ts + 200 + exec, S1, 0, "k", 0);
		ts += exec + 300; /* back to back: the GPU is mostly busy */
	}
	tw_ctx_sync(&t, PID, TID, ts, ts + 100);
	tw_close(&t);
	jobs_run(&r, t.path, NULL, false);
	CHECK_EQ_U64(r.summary.tags[JOB_TAG_EXEC_LONG_TAIL].jobs, 0);
	CHECK_EQ_U64(r.summary.tail_unchecked, 20);
	jobs_run_free(&r);
	jobs_run(&r, t.path, NULL, true);
	CHECK_EQ_U64(r.summary.tags[JOB_TAG_EXEC_LONG_TAIL].jobs, 1);
	CHECK_EQ_U64(r.summary.tags[JOB_TAG_EXEC_LONG_TAIL].cost_ns, 50000 - 1500);
	CHECK_EQ_U64(r.summary.tail_unchecked, 0);
	CHECK_STR(r.v.cause, "exec-long-tail");
	jobs_run_done(&r, &t);
}

/* A job waiting on another stream's event for exactly / just over 40% of its time. */
static uint32_t dep_tags(uint64_t producer_end, const char *thresholds)
{
	struct tw t;
	struct jobs_run r;
	uint32_t tags = 0;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 1100, 0xa, "producer");
	tw_sync(&t, PID, TID, 1100, 1150, GRT_SYNC_EVENT_RECORD, 0xa, 0xe, 0);
	tw_sync(&t, PID, TID, 1150, 1200, GRT_SYNC_STREAM_WAIT_EVENT, 0xb, 0xe, 0);
	tw_launch(&t, PID, TID, 10000, 11000, 0xb, "consumer"); /* SUBMIT at 11000 */
	tw_gpu_kernel(&t, PID, TID, 1000, 1200, producer_end, 0xa, 0, "producer", 0);
	/* the consumer starts the moment the producer ends */
	tw_gpu_kernel(&t, PID, TID, 10000, producer_end, producer_end + 1000, 0xb, 0, "consumer", 0);
	tw_ctx_sync(&t, PID, TID, 11500, 20000);
	tw_run(&t, &r, thresholds);
	j = job_at(&r, 10000);
	if (j)
		tags = j->tags;
	CHECK(j != NULL);
	jobs_run_done(&r, &t);
	return tags;
}

static void test_dependency_wait_boundaries(void)
{
	/* consumer total 10000 ns; wait from SUBMIT (11000) to the producer's end */
	CHECK_EQ_U64(dep_tags(15000, NULL), 0);			/* 4000 = 40% */
	CHECK_EQ_U64(dep_tags(15001, NULL), TAG(JOB_TAG_DEPENDENCY_WAIT));
	CHECK_EQ_U64(dep_tags(14000, "dependency-wait=30%"), 0);	/* 3000 = 30% */
	CHECK_EQ_U64(dep_tags(14001, "dependency-wait=30%"), TAG(JOB_TAG_DEPENDENCY_WAIT));
}

static struct job fault_job(uint64_t ts, uint64_t end, uint32_t kind, const char *thresholds)
{
	struct tw t;
	struct jobs_run r;
	struct job j = { 0 };

	tw_open(&t, SRC_HOST_AND_GPU | (1u << GRT_SRC_UVM));
	tw_launch(&t, PID, TID, 1000, 1100, S1, "k");
	tw_uvm(&t, PID, ts, end, kind);
	tw_gpu_kernel(&t, PID, TID, 1000, 2000, 9000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 1200, 9500);
	tw_run(&t, &r, thresholds);
	CHECK_EQ_U64(r.n, 1);
	if (r.n)
		j = r.jobs[0];
	jobs_run_done(&r, &t);
	return j;
}

static void test_vm_fault(void)
{
	struct job j;

	j = fault_job(9000, 9000, GRT_UVM_GPU_FAULT, NULL); /* at END: inside */
	CHECK_EQ_U64(j.tags, TAG(JOB_TAG_VM_FAULT));
	CHECK_EQ_U64(j.vm_faults, 1);
	CHECK_EQ_U64(j.t_vm_fault, 0);
	j = fault_job(9001, 9001, GRT_UVM_GPU_FAULT, NULL); /* one ns after END */
	CHECK_EQ_U64(j.tags, 0);
	j = fault_job(1500, 4000, GRT_UVM_MIGRATION, NULL); /* overlaps START by 2000 ns */
	CHECK_EQ_U64(j.tags, TAG(JOB_TAG_VM_FAULT));
	CHECK_EQ_U64(j.t_vm_fault, 2000);
	j = fault_job(3000, 3000, GRT_UVM_CPU_FAULT, NULL); /* host-side fault: not the job's */
	CHECK_EQ_U64(j.tags, 0);
	j = fault_job(3000, 3000, GRT_UVM_FAULT_BUFFER_OVERFLOW, NULL); /* bookkeeping, not a fault */
	CHECK_EQ_U64(j.tags, 0);
	j = fault_job(3000, 3000, GRT_UVM_GPU_FAULT, "vm-fault=2");
	CHECK_EQ_U64(j.tags, 0);
}

static struct job offcpu_job(uint64_t off, uint64_t on, bool late, const char *thresholds)
{
	struct tw t;
	struct jobs_run r;
	struct job j = { 0 };

	tw_open(&t, SRC_HOST_AND_GPU | (1u << GRT_SRC_SCHED));
	if (!late)
		tw_offcpu(&t, PID, TID, off, on);
	tw_launch(&t, PID, TID, 1000, 5000, S1, "k");
	if (late)
		tw_offcpu(&t, PID, TID, off, on);
	tw_gpu_kernel(&t, PID, TID, 1000, 5100, 900000, S1, 0, "k", 0);
	tw_ctx_sync(&t, PID, TID, 5200, 901000);
	tw_run(&t, &r, thresholds);
	if (r.n)
		j = r.jobs[0];
	jobs_run_done(&r, &t);
	return j;
}

static void test_preempted(void)
{
	struct job j;

	j = offcpu_job(2000, 3000, false, NULL);
	CHECK_EQ_U64(j.tags, TAG(JOB_TAG_PREEMPTED));
	CHECK_EQ_U64(j.t_offcpu, 1000);
	CHECK_EQ_U64(j.offcpu_count, 1);
	j = offcpu_job(4500, 6000, true, NULL); /* recorded after the launch, clipped to SUBMIT */
	CHECK_EQ_U64(j.tags, TAG(JOB_TAG_PREEMPTED));
	CHECK_EQ_U64(j.t_offcpu, 500);
	j = offcpu_job(100, 999, false, NULL); /* before API_ENTER */
	CHECK_EQ_U64(j.tags, 0);
	j = offcpu_job(2000, 3000, false, "preempted=1000ns"); /* not more than 1000 ns */
	CHECK_EQ_U64(j.tags, 0);
	j = offcpu_job(2000, 3001, false, "preempted=1000ns");
	CHECK_EQ_U64(j.tags, TAG(JOB_TAG_PREEMPTED));
}

/* One job that is slow to submit, preempted, queued and faulting at once. */
static void test_tags_combined(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_AND_GPU | (1u << GRT_SRC_SCHED) | (1u << GRT_SRC_UVM));
	tw_offcpu(&t, PID, TID, 1000000, 1250000);
	tw_launch(&t, PID, TID, 900000, 1400000, S1, "k"); /* 500 us in the call */
	tw_uvm(&t, PID, 2100000, 2100000, GRT_UVM_GPU_FAULT_REPLAY);
	tw_gpu_kernel(&t, PID, TID, 900000, 2000000, 2200000, S1, 0, "k", 0); /* 600 us queued */
	tw_ctx_sync(&t, PID, TID, 1500000, 2210000);
	tw_run(&t, &r, NULL);
	j = job_at(&r, 900000);
	CHECK(j != NULL);
	if (j) {
		/* total 1310 us: submit 500 (38%), queue 600 (45.8% -> not over 50%) */
		CHECK_EQ_U64(j->tags, TAG(JOB_TAG_HOST_SUBMIT_SLOW) | TAG(JOB_TAG_PREEMPTED) |
					      TAG(JOB_TAG_VM_FAULT));
		CHECK_EQ_U64(j->t_offcpu, 250000);
	}
	jobs_run_free(&r);
	jobs_run(&r, t.path, "queue-wait=45%,500us", true);
	j = job_at(&r, 900000);
	CHECK(j && j->tags == (TAG(JOB_TAG_HOST_SUBMIT_SLOW) | TAG(JOB_TAG_PREEMPTED) |
			       TAG(JOB_TAG_VM_FAULT) | TAG(JOB_TAG_QUEUE_WAIT)));
	CHECK_EQ_U64(r.summary.tags[JOB_TAG_QUEUE_WAIT].cost_ns, 600000);
	CHECK_EQ_U64(r.summary.tags[JOB_TAG_HOST_SUBMIT_SLOW].cost_ns, 500000);
	jobs_run_done(&r, &t);
}

/* Incomplete jobs are tagged from what is known and nothing else. */
static void test_incomplete_job_tags(void)
{
	struct tw t;
	struct jobs_run r;
	const struct job *j;

	tw_open(&t, SRC_HOST_ONLY);
	tw_launch(&t, PID, TID, 1000, 900000, S1, "k");
	tw_ctx_sync(&t, PID, TID, 900100, 1000000);
	tw_run(&t, &r, NULL);
	j = job_at(&r, 1000);
	CHECK(j != NULL);
	if (j) {
		CHECK_EQ_U64(j->missing, JOB_MISS_DEVICE);
		CHECK_EQ_U64(j->tags, TAG(JOB_TAG_HOST_SUBMIT_SLOW));
		CHECK(!(j->known & JOB_K_QUEUE));
	}
	CHECK_STR(r.v.cause, "host-submit-slow");
	jobs_run_done(&r, &t);
}

int main(void)
{
	RUN_TEST(test_host_submit_slow_boundaries);
	RUN_TEST(test_queue_wait_boundaries);
	RUN_TEST(test_threshold_override);
	RUN_TEST(test_exec_long_tail_boundaries);
	RUN_TEST(test_exec_long_tail_needs_second_pass);
	RUN_TEST(test_dependency_wait_boundaries);
	RUN_TEST(test_vm_fault);
	RUN_TEST(test_preempted);
	RUN_TEST(test_tags_combined);
	RUN_TEST(test_incomplete_job_tags);
	return TEST_EXIT_STATUS();
}
