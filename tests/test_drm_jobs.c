/*
 * DRM jobs in the job analysis: drm records (and fence waits) written as the drm and fence
 * sources would, read back through the same pipeline as CUDA jobs (tests/jobs_trace.h).
 */
#include <stdio.h>
#include "test_util.h"
#include "export/perfetto.h"
#include "jobs_trace.h"
#include "analysis/jobs/drm_jobs.h"
#include "trace/records_drm.h"

#define PID 4242
#define VIRTIO_CREATE 0x0101
#define VIRTIO_TRANSFER 0x0105
#define VIRTIO_OK 0x1100

struct drm_ev {
	uint32_t event, driver;
	uint64_t job, fence, context, seqno;
	uint32_t arg0, arg1;
	const char *ring;
};

static void tw_drm(struct tw *t, uint32_t pid, uint64_t ts, struct drm_ev e)
{
	struct grt_drm_job_rec r = {
		.job = e.job, .fence = e.fence, .context = e.context, .seqno = e.seqno, .event = e.event,
		.driver = e.driver, .tracepoint_str = grt_writer_intern(t->w, "test:event"),
		.ring_str = e.ring ? grt_writer_intern(t->w, e.ring) : 0, .arg0 = e.arg0, .arg1 = e.arg1,
	};

	tw_rec(t, GRT_REC_DRM_JOB, pid, pid, ts, &r, sizeof(r));
}

static void tw_fence_wait_end(struct tw *t, uint32_t pid, uint64_t ts, const char *driver, uint64_t context,
			      uint64_t seqno, uint64_t wait_ns)
{
	struct grt_fence_rec f = { .context = context, .seqno = seqno, .wait_ns = wait_ns,
				   .event = GRT_FENCE_WAIT_END, .flags = GRT_FENCE_F_WAIT_MATCHED,
				   .driver_str = grt_writer_intern(t->w, driver) };

	tw_rec(t, GRT_REC_FENCE, pid, pid, ts, &f, sizeof(f));
}

static void virtio(struct tw *t, uint64_t ts, uint32_t event, uint64_t seqno, uint32_t cmd, uint64_t fence_id)
{
	tw_drm(t, event == GRT_DRM_SUBMIT ? PID : 7, ts,
	       (struct drm_ev){ .event = event, .driver = GRT_DRM_VIRTIO_GPU, .job = seqno, .seqno = fence_id,
				.arg0 = cmd, .arg1 = fence_id ? 1 : 0, .ring = "control" });
}

static const struct job *drm_job(const struct jobs_run *r, uint64_t submit)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (r->jobs[i].kind == JOB_DRM && r->jobs[i].submit == submit)
			return &r->jobs[i];
	return NULL;
}

/*
 * Three virtio-gpu commands on the control virtqueue, the second fenced and waited for: each is
 * a job from its submit to its response, START by the ring's order, and the waited one is
 * complete with the host's wake-up.
 */
static void check_virtio_jobs(bool with_seqno, bool fence_chunk_first)
{
	struct tw t;
	struct jobs_run r;
	const struct job *a, *b, *c;
	uint64_t s = with_seqno ? 1 : 0;

	tw_open(&t, 1u << GRT_SRC_DRM | 1u << GRT_SRC_FENCE);
	if (fence_chunk_first)
		tw_fence_wait_end(&t, PID, 6400, "virtio_gpu", 1, 5, 5000);
	virtio(&t, 1000, GRT_DRM_SUBMIT, s ? 11 : 0, VIRTIO_TRANSFER, 0);
	virtio(&t, 1100, GRT_DRM_SUBMIT, s ? 12 : 0, VIRTIO_CREATE, 5);
	virtio(&t, 1200, GRT_DRM_SUBMIT, s ? 13 : 0, VIRTIO_TRANSFER, 0);
	virtio(&t, 5000, GRT_DRM_COMPLETE, s ? 11 : 0, VIRTIO_OK, 0);
	virtio(&t, 6000, GRT_DRM_COMPLETE, s ? 12 : 0, VIRTIO_OK, 5);
	if (!fence_chunk_first)
		tw_fence_wait_end(&t, PID, 6400, "virtio_gpu", 1, 5, 5000);
	virtio(&t, 9000, GRT_DRM_COMPLETE, s ? 13 : 0, VIRTIO_OK, 0);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 3);
	a = drm_job(&r, 1000);
	b = drm_job(&r, 1100);
	c = drm_job(&r, 1200);
	CHECK(a && b && c);
	if (a && b && c) {
		CHECK_STR(a->name, "TRANSFER_TO_HOST_2D");
		CHECK_STR(b->name, "RESOURCE_CREATE_2D");
		CHECK_EQ_U64(a->pid, PID);
		CHECK_EQ_U64(b->device, DRM_JOB_DEVICE_BASE);
		CHECK_EQ_U64(a->id >= DRM_JOB_ID_BASE, 1);
		/* the first starts at its submit, the others when the one before ended */
		CHECK_EQ_U64(a->start, 1000);
		CHECK_EQ_U64(b->start, 5000);
		CHECK_EQ_U64(c->start, 6000);
		CHECK_EQ_U64(b->end, 6000);
		CHECK_EQ_U64(b->flags & JOB_F_RING_ORDER, JOB_F_RING_ORDER);
		CHECK_EQ_U64(b->complete, 6400);
		CHECK_EQ_U64(b->missing, 0);
		CHECK_EQ_U64(b->t_queue, 3900);
		CHECK_EQ_U64(b->t_exec, 1000);
		CHECK_EQ_U64(b->t_complete, 400);
		CHECK_EQ_U64(b->t_total, 5300);
		/* nobody waited for the others: no host wake-up, incomplete */
		CHECK_EQ_U64(a->missing, JOB_MISS_COMPLETE);
		CHECK_EQ_U64(c->missing, JOB_MISS_COMPLETE);
		CHECK_EQ_U64(c->t_exec, 3000);
	}
	jobs_run_done(&r, &t);
}

static void test_virtio_jobs_by_virtqueue_seqno(void)
{
	check_virtio_jobs(true, false);
}

/* 6.1's tracepoints have no virtqueue seqno: responses pair with commands in order. */
static void test_virtio_jobs_by_order(void)
{
	check_virtio_jobs(false, false);
}

/*
 * The recorder writes each source's ring as it drains it, so the fence source's wait may be
 * in the file before the drm records of the job it waited for (seen in a loaded VM on 6.1):
 * the same jobs, the waited one complete.
 */
static void test_virtio_jobs_with_the_fence_chunk_first(void)
{
	check_virtio_jobs(false, true);
	check_virtio_jobs(true, true);
}

/*
 * In the Perfetto timeline a DRM job is a slice on its ring's track, with no arrow: the ioctl
 * that submitted it is no call slice, so an arrow into the job would start nowhere.
 */
static void test_perfetto_slices_without_arrows(void)
{
	struct job_thresholds th;
	struct perfetto_stats st;
	char *out = NULL, err[256] = "";
	size_t len = 0;
	FILE *f;
	struct tw t;

	tw_open(&t, 1u << GRT_SRC_DRM | 1u << GRT_SRC_FENCE);
	virtio(&t, 1000, GRT_DRM_SUBMIT, 11, VIRTIO_CREATE, 5);
	virtio(&t, 1100, GRT_DRM_SUBMIT, 12, VIRTIO_TRANSFER, 0);
	virtio(&t, 6000, GRT_DRM_COMPLETE, 11, VIRTIO_OK, 5);
	tw_fence_wait_end(&t, PID, 6400, "virtio_gpu", 1, 5, 5000);
	virtio(&t, 9000, GRT_DRM_COMPLETE, 12, VIRTIO_OK, 0);
	tw_close(&t);
	job_thresholds_default(&th);
	f = open_memstream(&out, &len);
	CHECK_EQ_U64(perfetto_json_export(t.path, f, &th, &st, err, sizeof(err)), 0);
	fclose(f);
	CHECK_EQ_U64(st.jobs, 2);
	CHECK_EQ_U64(st.flows, 0);
	CHECK(strstr(out, "\"name\":\"RESOURCE_CREATE_2D\"") != NULL);
	CHECK(strstr(out, "\"name\":\"TRANSFER_TO_HOST_2D\"") != NULL);
	CHECK(strstr(out, "bind_id") == NULL);
	free(out);
	unlink(t.path);
}

/*
 * amdgpu through the DRM scheduler: the CS ioctl (alloc), the entity push (commit), the run
 * on the ring (submit, seen by both), the fence signal (complete) and the submitter's wait on
 * the job's fence, tied by the fence address, the job id and the fence's (context, seqno).
 */
static void test_amdgpu_job_through_the_scheduler(void)
{
	struct tw t;
	struct jobs_run r;
	const uint64_t fence = 0xffff888012345678ull;
	const struct job *j;

	tw_open(&t, 1u << GRT_SRC_DRM | 1u << GRT_SRC_FENCE);
	tw_drm(&t, PID, 100, (struct drm_ev){ .event = GRT_DRM_ALLOC, .driver = GRT_DRM_AMDGPU, .job = 77,
					      .fence = fence, .context = 9, .seqno = 3, .ring = "gfx_0.0.0" });
	tw_drm(&t, PID, 120, (struct drm_ev){ .event = GRT_DRM_COMMIT, .driver = GRT_DRM_SCHED, .job = 77,
					      .fence = fence, .ring = "gfx_0.0.0" });
	tw_drm(&t, 55, 400, (struct drm_ev){ .event = GRT_DRM_SUBMIT, .driver = GRT_DRM_AMDGPU, .job = 77,
					     .context = 9, .seqno = 3, .ring = "gfx_0.0.0" });
	tw_drm(&t, 55, 410, (struct drm_ev){ .event = GRT_DRM_SUBMIT, .driver = GRT_DRM_SCHED, .job = 77,
					     .fence = fence, .ring = "gfx_0.0.0" });
	tw_drm(&t, 0, 2400, (struct drm_ev){ .event = GRT_DRM_COMPLETE, .driver = GRT_DRM_SCHED,
					     .fence = fence });
	tw_fence_wait_end(&t, PID, 2500, "amdgpu", 9, 3, 2300);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 1);
	j = r.n == 1 ? &r.jobs[0] : NULL;
	if (j) {
		CHECK_EQ_U64(j->pid, PID);
		CHECK_STR(j->name, "gfx_0.0.0");
		CHECK_EQ_U64(j->api_enter, 100);
		CHECK_EQ_U64(j->submit, 400);
		CHECK_EQ_U64(j->start, 400);	/* the ring was idle */
		CHECK_EQ_U64(j->end, 2400);
		CHECK_EQ_U64(j->complete, 2500);
		CHECK_EQ_U64(j->missing, 0);
		CHECK_EQ_U64(j->t_submit_host, 300);	/* waiting in the scheduler */
		CHECK_EQ_U64(j->t_exec, 2000);
	}
	jobs_run_done(&r, &t);
}

/* i915 without its low-level tracepoints: queued, added, retired, and a host wait ending. */
static void test_i915_request(void)
{
	struct tw t;
	struct jobs_run r;
	struct drm_ev e = { .driver = GRT_DRM_I915, .context = 3, .seqno = 40, .arg0 = 0, .arg1 = 0 };
	const struct job *j;

	tw_open(&t, 1u << GRT_SRC_DRM);
	e.event = GRT_DRM_ALLOC;
	tw_drm(&t, PID, 10, e);
	e.event = GRT_DRM_COMMIT;
	tw_drm(&t, PID, 20, e);
	e.event = GRT_DRM_RETIRE;
	tw_drm(&t, 0, 900, e);
	e.event = GRT_DRM_WAIT_END;
	tw_drm(&t, PID, 950, e);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 1);
	j = r.n == 1 ? &r.jobs[0] : NULL;
	if (j) {
		CHECK_STR(j->name, "engine 0:0");
		CHECK_EQ_U64(j->api_enter, 10);
		CHECK_EQ_U64(j->submit, 0);	/* no event says when it reached the ring */
		CHECK_EQ_U64(j->end, 900);
		CHECK_EQ_U64(j->complete, 950);
		CHECK_EQ_U64(j->missing, JOB_MISS_SUBMIT);
	}
	jobs_run_done(&r, &t);
}

/* A completed job nobody waits for goes out once a second of trace time has passed. */
static void test_unwaited_job_goes_out_after_settling(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, 1u << GRT_SRC_DRM);
	virtio(&t, 1000, GRT_DRM_SUBMIT, 1, VIRTIO_TRANSFER, 0);
	virtio(&t, 2000, GRT_DRM_COMPLETE, 1, VIRTIO_OK, 0);
	virtio(&t, 2000 + DRM_JOB_SETTLE_NS, GRT_DRM_SUBMIT, 2, VIRTIO_TRANSFER, 0);
	tw_close(&t);
	jobs_run(&r, t.path, NULL, false);
	/* both out at the end; the first was out before the trace ended (the second never completed) */
	CHECK_EQ_U64(r.n, 2);
	if (r.n == 2) {
		CHECK_EQ_U64(r.jobs[0].submit, 1000);
		CHECK_EQ_U64(r.jobs[1].missing, JOB_MISS_DEVICE | JOB_MISS_COMPLETE);
	}
	jobs_run_done(&r, &t);
}

/* Events of jobs begun before the recording started make no job. */
static void test_events_of_unknown_jobs_are_ignored(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, 1u << GRT_SRC_DRM);
	tw_drm(&t, 0, 10, (struct drm_ev){ .event = GRT_DRM_COMPLETE, .driver = GRT_DRM_SCHED, .fence = 0x1234 });
	virtio(&t, 20, GRT_DRM_COMPLETE, 9, VIRTIO_OK, 0);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 0);
	jobs_run_done(&r, &t);
}

int main(void)
{
	RUN_TEST(test_virtio_jobs_by_virtqueue_seqno);
	RUN_TEST(test_virtio_jobs_by_order);
	RUN_TEST(test_virtio_jobs_with_the_fence_chunk_first);
	RUN_TEST(test_perfetto_slices_without_arrows);
	RUN_TEST(test_amdgpu_job_through_the_scheduler);
	RUN_TEST(test_i915_request);
	RUN_TEST(test_unwaited_job_goes_out_after_settling);
	RUN_TEST(test_events_of_unknown_jobs_are_ignored);
	return TEST_EXIT_STATUS();
}
