/* Two-pass job analysis: per-kernel execution distributions first, then jobs tagged as they finish. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "analysis/jobs/drm_jobs.h"
#include "analysis/jobs/pipeline.h"
#include "analysis/nccl_calls.h"
#include "analysis/own_work.h"
#include "trace/records_core.h"
#include "trace/records_gpu.h"

struct job_pipeline {
	struct job_thresholds t;
	struct kernel_exec_table exec;
	bool have_exec;
	uint64_t exec_failures;	/* execution times the prepass could not keep */
	struct job_builder *builder;
	struct drm_jobs *drm;	/* jobs of the DRM drivers' rings (drm records) */
	struct grt_file_header hdr;
	bool have_hdr;
	/* NCCL calls of the trace (prepass, when it has the nccl source): their kernels' jobs name them */
	struct nccl_calls *nccl;
	struct job_builder_ops ops;
	void *ctx;
};

static void tag_job(void *ctx, struct job *j)
{
	struct job_pipeline *p = ctx;

	if (p->nccl && j->kind == JOB_KERNEL)
		j->collective = nccl_calls_of_kernel(p->nccl, j->tid, j->api_enter);
	job_tags_apply(&p->t, p->have_exec ? &p->exec : NULL, j);
	p->ops.job(p->ctx, j);
}

static void pass_host_wait(void *ctx, uint32_t pid, uint32_t tid, uint32_t device,
			   uint64_t start, uint64_t end)
{
	struct job_pipeline *p = ctx;

	if (p->ops.host_wait)
		p->ops.host_wait(p->ctx, pid, tid, device, start, end);
}

static void pass_advance(void *ctx, uint64_t frontier)
{
	struct job_pipeline *p = ctx;
	uint64_t drm = drm_jobs_frontier(p->drm);

	if (p->ops.advance)
		p->ops.advance(p->ctx, drm < frontier ? drm : frontier);
}

static void pass_busy(void *ctx, uint32_t device, uint64_t start, uint64_t end)
{
	struct job_pipeline *p = ctx;

	if (p->ops.busy)
		p->ops.busy(p->ctx, device, start, end);
}

static void pass_settled(void *ctx, uint64_t point)
{
	struct job_pipeline *p = ctx;

	if (p->ops.settled)
		p->ops.settled(p->ctx, point);
}

static void pass_uvm(void *ctx, uint32_t pid, uint64_t ts, const struct grt_uvm_event_rec *u)
{
	struct job_pipeline *p = ctx;

	if (p->ops.uvm)
		p->ops.uvm(p->ctx, pid, ts, u);
}

struct job_pipeline *job_pipeline_new(const struct grt_file_header *hdr,
				      const struct job_thresholds *t,
				      const struct job_builder_ops *ops, void *ctx)
{
	static const struct job_builder_ops forward = {
		.job = tag_job, .host_wait = pass_host_wait, .advance = pass_advance,
		.busy = pass_busy, .uvm = pass_uvm, .settled = pass_settled,
	};
	struct job_pipeline *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->t = *t;
	p->ops = *ops;
	p->ctx = ctx;
	if (hdr) {
		p->hdr = *hdr;
		p->have_hdr = true;
	}
	kernel_exec_table_init(&p->exec);
	p->builder = job_builder_new(hdr, t, &forward, p);
	p->drm = drm_jobs_new(tag_job, p);
	if (!p->builder || !p->drm) {
		job_pipeline_free(p);
		return NULL;
	}
	return p;
}

void job_pipeline_free(struct job_pipeline *p)
{
	if (!p)
		return;
	job_builder_free(p->builder);
	drm_jobs_free(p->drm);
	nccl_calls_free(p->nccl);
	kernel_exec_table_destroy(&p->exec);
	free(p);
}

/*
 * Pass 1 needs only execution times per kernel, and those are in the device
 * records themselves: their name id is the kernel_key the builder gives named
 * kernels (kernels known only by handle get no P90 and stay unchecked).
 */
static int learn_exec(struct kernel_exec_table *exec, const struct grt_record *rec)
{
	uint64_t start, end;
	uint32_t name;

	if (rec->hdr.type == GRT_REC_GPU_KERNEL &&
	    rec->hdr.payload_len >= sizeof(struct grt_gpu_kernel_rec)) {
		const struct grt_gpu_kernel_rec *k = rec->payload;

		start = k->start_ns;
		end = k->end_ns;
		name = k->kernel_str;
	} else if (rec->hdr.type == GRT_REC_GPU_LAUNCH &&
		   rec->hdr.payload_len >= sizeof(struct grt_gpu_launch_rec)) {
		const struct grt_gpu_launch_rec *l = rec->payload;

		start = l->start_ns;
		end = l->end_ns;
		name = l->kernel_str;
	} else {
		return 0;
	}
	if (name && start && end >= start)
		return kernel_exec_table_add_sample(exec, name, end - start);
	return 0;
}

int job_pipeline_prepass(struct job_pipeline *p, const char *path, char *err, size_t err_len)
{
	struct grt_reader *r = grt_reader_open(path, err, err_len);
	struct grt_record rec;
	struct own_work own;

	if (!r)
		return -EIO;
	/* the collectives' ties and waits need every rank's calls and kernels: known before jobs end */
	if (!p->nccl && p->have_hdr && (p->hdr.sources_mask & (1u << GRT_SRC_NCCL))) {
		p->nccl = nccl_calls_new(&p->hdr);
		if (!p->nccl)
			p->exec_failures++;
	}
	own_work_init(&own);
	while (grt_reader_next(r, &rec) == GRT_READ_OK) {
		p->exec_failures += learn_exec(&p->exec, &rec) != 0;
		/* as the report streams them: grtrace's own work is no rank's */
		if (p->nccl && (!own_work_record(&own, &rec, grt_reader_strings(r)) || p->t.show_own))
			nccl_calls_record(p->nccl, &rec, grt_reader_strings(r));
	}
	own_work_destroy(&own);
	if (p->nccl)
		nccl_calls_finish(p->nccl);
	grt_reader_close(r);
	p->have_exec = true;
	return 0;
}

void job_pipeline_record(struct job_pipeline *p, const struct grt_record *rec,
			 const struct grt_strings *strings)
{
	job_builder_record(p->builder, rec, strings);
	drm_jobs_record(p->drm, rec, strings);
}

void job_pipeline_finish(struct job_pipeline *p)
{
	drm_jobs_finish(p->drm);
	job_builder_finish(p->builder);
}

const struct job_builder *job_pipeline_builder(const struct job_pipeline *p)
{
	return p->builder;
}

bool job_pipeline_complete(const struct job_pipeline *p)
{
	return !p->exec_failures && !job_builder_stats(p->builder)->alloc_failures &&
	       !(p->nccl && nccl_calls_incomplete(p->nccl));
}

const struct nccl_calls *job_pipeline_nccl(const struct job_pipeline *p)
{
	return p->nccl;
}

bool job_pipeline_has_prepass(const struct job_pipeline *p)
{
	return p->have_exec;
}

uint64_t job_pipeline_drm_jobs(const struct job_pipeline *p)
{
	return drm_jobs_count(p->drm);
}
