/* Test helpers for the job analysis: write synthetic traces through grt_writer, run the analysis. */
#ifndef GRT_TEST_JOBS_TRACE_H
#define GRT_TEST_JOBS_TRACE_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/jobs/idle_gaps.h"
#include "analysis/jobs/pipeline.h"
#include "analysis/jobs/summary.h"
#include "analysis/jobs/threshold_list.h"
#include "analysis/jobs/verdict.h"
#include "trace/grt_writer.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"
#include "trace/records_kernel.h"
#include "trace/records_uvm.h"

#define SRC_HOST_AND_GPU ((1u << GRT_SRC_CUDA) | (1u << GRT_SRC_GPU))
#define SRC_HOST_ONLY (1u << GRT_SRC_CUDA)

struct tw {
	struct grt_writer *w;
	char path[64];
};

static inline void tw_open(struct tw *t, uint32_t sources)
{
	struct grt_file_header h = { .clock_id = GRT_CLOCK_MONOTONIC, .sources_mask = sources,
				     .start_monotonic_ns = 1 };

	strcpy(t->path, "/tmp/grt-jobs-XXXXXX");
	close(mkstemp(t->path));
	t->w = grt_writer_open(t->path, &h);
}

static inline void tw_close(struct tw *t)
{
	grt_writer_close(t->w, GRT_END_TARGET_EXIT, 0);
}

static inline void tw_rec(struct tw *t, uint16_t type, uint32_t pid, uint32_t tid, uint64_t ts,
		   const void *payload, uint32_t len)
{
	struct grt_event_origin o = { .ts_ns = ts, .cpu = 0, .pid = pid, .tid = tid };

	grt_writer_append(t->w, type, &o, payload, len);
}

static inline struct grt_cuda_call tw_call(uint16_t api, uint64_t ret_ns, int32_t ret)
{
	struct grt_cuda_call c = { .return_ns = ret_ns, .ret = ret, .api = api };

	if (!ret_ns)
		c.flags = GRT_CUDA_F_NO_RETURN;
	return c;
}

static inline void tw_launch(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter, uint64_t ret_ns,
		      uint64_t stream, const char *kernel)
{
	struct grt_cuda_launch_rec l = { .call = tw_call(GRT_CUDA_LAUNCH_KERNEL, ret_ns, 0),
					 .function = 0xf00, .stream = stream,
					 .kernel_str = grt_writer_intern(t->w, kernel), .user_stack_id = -1 };

	tw_rec(t, GRT_REC_CUDA_LAUNCH, pid, tid, enter, &l, sizeof(l));
}

/* A launch recorded at its entry only (record --launch-returns): its return not sampled. */
static inline void tw_launch_unsampled(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter,
				       uint64_t stream, const char *kernel)
{
	struct grt_cuda_launch_rec l = {
		.call = { .api = GRT_CUDA_LAUNCH_KERNEL, .flags = GRT_CUDA_F_RETURN_UNSAMPLED },
		.function = 0xf00, .stream = stream, .kernel_str = grt_writer_intern(t->w, kernel),
		.user_stack_id = -1 };

	tw_rec(t, GRT_REC_CUDA_LAUNCH, pid, tid, enter, &l, sizeof(l));
}

static inline void tw_launch_failed(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter,
			     uint64_t ret_ns, uint64_t stream, const char *kernel, int32_t err)
{
	struct grt_cuda_launch_rec l = { .call = tw_call(GRT_CUDA_LAUNCH_KERNEL, ret_ns, err),
					 .stream = stream, .kernel_str = grt_writer_intern(t->w, kernel),
					 .user_stack_id = -1 };

	tw_rec(t, GRT_REC_CUDA_LAUNCH, pid, tid, enter, &l, sizeof(l));
}

static inline void tw_graph(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter, uint64_t ret_ns,
		     uint64_t stream, uint64_t graph_exec)
{
	struct grt_cuda_graph_launch_rec g = { .call = tw_call(GRT_CUDA_GRAPH_LAUNCH, ret_ns, 0),
					       .graph_exec = graph_exec, .stream = stream,
					       .user_stack_id = -1 };

	tw_rec(t, GRT_REC_CUDA_GRAPH_LAUNCH, pid, tid, enter, &g, sizeof(g));
}

static inline void tw_gpu_kernel(struct tw *t, uint32_t pid, uint32_t tid, uint64_t api_enter,
			  uint64_t start, uint64_t end, uint64_t stream, uint32_t device,
			  const char *kernel, uint64_t graph_id)
{
	struct grt_gpu_kernel_rec k = { .start_ns = start, .end_ns = end, .api_enter_ns = api_enter,
					.stream = stream, .device = device,
					.kernel_str = kernel ? grt_writer_intern(t->w, kernel) : 0,
					.graph_id = graph_id };

	tw_rec(t, GRT_REC_GPU_KERNEL, pid, tid, end, &k, sizeof(k));
}

/* A launch of any launch API (cuLaunchKernelEx, ...) with call flags (GRT_CUDA_F_OWN). */
static inline void tw_launch_api(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter,
				 uint64_t ret_ns, uint64_t stream, const char *kernel, uint16_t api,
				 uint16_t flags)
{
	struct grt_cuda_launch_rec l = { .call = tw_call(api, ret_ns, 0), .function = 0xf00,
					 .stream = stream,
					 .kernel_str = grt_writer_intern(t->w, kernel),
					 .user_stack_id = -1 };

	l.call.flags |= flags;
	tw_rec(t, GRT_REC_CUDA_LAUNCH, pid, tid, enter, &l, sizeof(l));
}

/*
 * The host call a device record names (format 1.1): thread tid entered the
 * driver at enter and returned at ret, as the injected library stamped them.
 */
struct tw_call_id {
	uint32_t tid;
	uint64_t enter;
	uint64_t ret;
	uint32_t flags;		/* GRT_GPU_F_OWN */
};

/* A CUPTI kernel record naming its call; written by thread rec_tid (CUPTI's, not the caller). */
static inline void tw_gpu_kernel_id(struct tw *t, uint32_t pid, uint32_t rec_tid,
				    struct tw_call_id id, uint64_t start, uint64_t end,
				    uint64_t stream, uint32_t device, const char *kernel,
				    uint64_t graph_id)
{
	struct grt_gpu_kernel_rec k = { .start_ns = start, .end_ns = end, .api_enter_ns = id.enter,
					.stream = stream, .device = device,
					.kernel_str = kernel ? grt_writer_intern(t->w, kernel) : 0,
					.graph_id = graph_id, .api_return_ns = id.ret,
					.host_tid = id.tid, .flags = id.flags };

	tw_rec(t, GRT_REC_GPU_KERNEL, pid, rec_tid, end, &k, sizeof(k));
}

/* A CUPTI copy or memset record naming its call. */
static inline void tw_gpu_copy_id(struct tw *t, uint32_t pid, uint32_t rec_tid,
				  struct tw_call_id id, uint64_t start, uint64_t end,
				  uint64_t stream, uint32_t kind, uint64_t bytes)
{
	struct grt_gpu_copy_rec c = { .start_ns = start, .end_ns = end, .api_enter_ns = id.enter,
				      .bytes = bytes, .stream = stream, .kind = kind,
				      .api_return_ns = id.ret, .host_tid = id.tid,
				      .flags = id.flags };

	tw_rec(t, GRT_REC_GPU_COPY, pid, rec_tid, end, &c, sizeof(c));
}

/* The block probes' per-launch record naming its call. */
static inline void tw_gpu_probe_id(struct tw *t, uint32_t pid, uint32_t rec_tid,
				   struct tw_call_id id, uint64_t start, uint64_t end,
				   uint64_t stream, const char *kernel)
{
	struct grt_gpu_launch_rec l = { .launch_id = 1, .start_ns = start, .end_ns = end,
					.api_enter_ns = id.enter, .stream = stream,
					.kernel_str = grt_writer_intern(t->w, kernel), .blocks = 1,
					.api_return_ns = id.ret, .host_tid = id.tid,
					.flags = id.flags };

	tw_rec(t, GRT_REC_GPU_LAUNCH, pid, rec_tid, end, &l, sizeof(l));
}

/* A kernel record as format 1.0 wrote it: 80 bytes, no call identity, no flags. */
static inline void tw_gpu_kernel_v1_0(struct tw *t, uint32_t pid, uint32_t tid, uint64_t api_enter,
				      uint64_t start, uint64_t end, uint64_t stream,
				      const char *kernel)
{
	struct grt_gpu_kernel_rec k = { .start_ns = start, .end_ns = end, .api_enter_ns = api_enter,
					.stream = stream,
					.kernel_str = grt_writer_intern(t->w, kernel) };

	tw_rec(t, GRT_REC_GPU_KERNEL, pid, tid, end, &k, GRT_GPU_KERNEL_REC_V1_0_LEN);
}

/* A status record of the gpu source; tid 0 is the recorder's, others the injected library's. */
static inline void tw_gpu_status(struct tw *t, uint32_t pid, uint32_t tid, uint64_t ts,
				 int32_t status, const char *message)
{
	struct grt_source_status_rec s = { .source = GRT_SRC_GPU, .status = status,
					   .message_str = grt_writer_intern(t->w, message) };

	tw_rec(t, GRT_REC_SOURCE_STATUS, pid, tid, ts, &s, sizeof(s));
}

static inline void tw_gpu_probe(struct tw *t, uint32_t pid, uint32_t tid, uint64_t api_enter,
			 uint64_t start, uint64_t end, uint64_t stream, const char *kernel)
{
	struct grt_gpu_launch_rec l = { .launch_id = 1, .start_ns = start, .end_ns = end,
					.api_enter_ns = api_enter, .stream = stream,
					.kernel_str = grt_writer_intern(t->w, kernel), .blocks = 1 };

	tw_rec(t, GRT_REC_GPU_LAUNCH, pid, tid, end, &l, sizeof(l));
}

static inline void tw_gpu_copy(struct tw *t, uint32_t pid, uint32_t tid, uint64_t api_enter,
			uint64_t start, uint64_t end, uint64_t stream, uint32_t kind, uint64_t bytes)
{
	struct grt_gpu_copy_rec c = { .start_ns = start, .end_ns = end, .api_enter_ns = api_enter,
				      .bytes = bytes, .stream = stream, .kind = kind };

	tw_rec(t, GRT_REC_GPU_COPY, pid, tid, end, &c, sizeof(c));
}

static inline void tw_sync(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter, uint64_t ret_ns,
		    uint32_t kind, uint64_t stream, uint64_t event, int32_t ret)
{
	static const uint16_t apis[] = { 0, GRT_CUDA_CTX_SYNCHRONIZE, GRT_CUDA_STREAM_SYNCHRONIZE,
					 GRT_CUDA_EVENT_SYNCHRONIZE, GRT_CUDA_STREAM_WAIT_EVENT,
					 GRT_CUDA_EVENT_RECORD, GRT_CUDA_EVENT_QUERY,
					 GRT_CUDA_STREAM_QUERY };
	struct grt_cuda_sync_rec s = { .call = tw_call(apis[kind], ret_ns, ret), .stream = stream,
				       .event = event, .kind = kind };

	tw_rec(t, GRT_REC_CUDA_SYNC, pid, tid, enter, &s, sizeof(s));
}

/* A stream or context sync with call flags (GRT_CUDA_F_OWN). */
static inline void tw_sync_flagged(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter,
				   uint64_t ret_ns, uint32_t kind, uint16_t flags)
{
	struct grt_cuda_sync_rec s = { .call = tw_call(kind == GRT_SYNC_CTX ? GRT_CUDA_CTX_SYNCHRONIZE
									   : GRT_CUDA_STREAM_SYNCHRONIZE,
						       ret_ns, 0),
				       .kind = kind };

	s.call.flags |= flags;
	tw_rec(t, GRT_REC_CUDA_SYNC, pid, tid, enter, &s, sizeof(s));
}

static inline void tw_ctx_sync(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter, uint64_t ret_ns)
{
	tw_sync(t, pid, tid, enter, ret_ns, GRT_SYNC_CTX, 0, 0, 0);
}

static inline void tw_memcpy(struct tw *t, uint32_t pid, uint32_t tid, uint64_t enter, uint64_t ret_ns,
		      uint64_t stream, int async, uint32_t kind, uint64_t bytes)
{
	struct grt_cuda_memcpy_rec m = { .call = tw_call(async ? GRT_CUDA_MEMCPY_ASYNC : GRT_CUDA_MEMCPY,
							 ret_ns, 0),
					 .bytes = bytes, .stream = stream, .kind = kind,
					 .is_async = (uint8_t)async, .dims = 1 };

	tw_rec(t, GRT_REC_CUDA_MEMCPY, pid, tid, enter, &m, sizeof(m));
}

static inline void tw_offcpu(struct tw *t, uint32_t pid, uint32_t tid, uint64_t off, uint64_t on)
{
	struct grt_sched_offcpu_rec o = { .on_cpu_ns = on };

	tw_rec(t, GRT_REC_SCHED_OFFCPU, pid, tid, off, &o, sizeof(o));
}

static inline void tw_uvm(struct tw *t, uint32_t pid, uint64_t ts, uint64_t end, uint32_t kind)
{
	struct grt_uvm_event_rec u = { .bytes = 4096, .end_ns = end, .kind = kind };

	tw_rec(t, GRT_REC_UVM_EVENT, pid, pid, ts, &u, sizeof(u));
}

/* A UVM event with its bytes and the processors it moved them between (GRT_UVM_PROC_CPU is 0). */
static inline void tw_uvm_move(struct tw *t, uint32_t pid, uint64_t ts, uint64_t end, uint32_t kind,
			       uint64_t bytes, uint32_t src, uint32_t dst)
{
	struct grt_uvm_event_rec u = { .bytes = bytes, .end_ns = end, .kind = kind,
				       .src_processor = src, .dst_processor = dst };

	tw_rec(t, GRT_REC_UVM_EVENT, pid, pid, ts, &u, sizeof(u));
}

/* ---- running the analysis ---- */

struct jobs_run {
	struct job *jobs;
	uint32_t n;
	uint32_t cap;
	struct job_pipeline *p;
	struct idle_gaps *gaps;
	struct job_summary summary;
	struct job_thresholds t;
	struct verdict v;
	struct job_builder_stats stats;
	int parse_rc;
	char err[256];
};

static inline void run_on_job(void *ctx, struct job *j)
{
	struct jobs_run *r = ctx;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->jobs = realloc(r->jobs, r->cap * sizeof(*r->jobs));
	}
	r->jobs[r->n++] = *j;
	job_summary_add(&r->summary, j);
	idle_gaps_job(r->gaps, j);
}

static inline void run_on_wait(void *ctx, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e)
{
	idle_gaps_host_wait(((struct jobs_run *)ctx)->gaps, pid, tid, s, e);
}

static inline void run_on_advance(void *ctx, uint64_t f)
{
	idle_gaps_advance(((struct jobs_run *)ctx)->gaps, f);
}

static inline void run_on_settled(void *ctx, uint64_t point)
{
	job_summary_settle(&((struct jobs_run *)ctx)->summary, point);
}

static inline void run_on_uvm(void *ctx, uint32_t pid, uint64_t ts, const struct grt_uvm_event_rec *u)
{
	idle_gaps_uvm(((struct jobs_run *)ctx)->gaps, pid, ts, u);
}

static inline void run_on_busy(void *ctx, uint32_t device, uint64_t start, uint64_t end)
{
	idle_gaps_busy(((struct jobs_run *)ctx)->gaps, device, start, end);
}

/* Runs the two-pass analysis over path (one pass when two_pass is false). */
static inline void jobs_run(struct jobs_run *r, const char *path, const char *thresholds, bool two_pass)
{
	static const struct job_builder_ops ops = { .job = run_on_job, .host_wait = run_on_wait,
						    .advance = run_on_advance, .busy = run_on_busy,
						    .settled = run_on_settled, .uvm = run_on_uvm };
	struct grt_reader *rd;
	struct grt_record rec;

	memset(r, 0, sizeof(*r));
	job_thresholds_default(&r->t);
	r->parse_rc = threshold_list_parse(&r->t, thresholds, r->err, sizeof(r->err));
	rd = grt_reader_open(path, r->err, sizeof(r->err));
	if (!rd)
		return;
	r->gaps = idle_gaps_new(10);
	job_summary_init(&r->summary, 10);
	r->p = job_pipeline_new(grt_reader_header(rd), &r->t, &ops, r);
	if (two_pass)
		job_pipeline_prepass(r->p, path, r->err, sizeof(r->err));
	while (grt_reader_next(rd, &rec) == GRT_READ_OK)
		job_pipeline_record(r->p, &rec, grt_reader_strings(rd));
	job_pipeline_finish(r->p);
	r->stats = *job_builder_stats(job_pipeline_builder(r->p));
	verdict_build(&r->v, &r->summary, r->gaps, job_pipeline_builder(r->p), &r->t);
	grt_reader_close(rd);
}

static inline void jobs_run_free(struct jobs_run *r)
{
	job_pipeline_free(r->p);
	idle_gaps_free(r->gaps);
	job_summary_destroy(&r->summary);
	free(r->jobs);
}

/* Closes the trace being written and runs the two-pass analysis over it. */
static inline void tw_run(struct tw *t, struct jobs_run *r, const char *thresholds)
{
	tw_close(t);
	jobs_run(r, t->path, thresholds, true);
}

/* Frees the run and removes its trace file. */
static inline void jobs_run_done(struct jobs_run *r, struct tw *t)
{
	jobs_run_free(r);
	unlink(t->path);
}

/* The finished job whose API entry time is enter (NULL when none). */
static inline const struct job *job_at(const struct jobs_run *r, uint64_t enter)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (r->jobs[i].api_enter == enter)
			return &r->jobs[i];
	return NULL;
}

#define TAG(t) (1u << (t))

#endif
