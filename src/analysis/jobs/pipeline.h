/* The job analysis as one unit: builder + tags, with the pass that learns per-kernel P90s first. */
#ifndef GRT_JOB_PIPELINE_H
#define GRT_JOB_PIPELINE_H

#include <stdbool.h>
#include "analysis/jobs/builder.h"
#include "analysis/jobs/tags.h"

/*
 * exec-long-tail compares a job with the P90 of its kernel, which is only
 * known once every job of that kernel was seen. Keeping all jobs until the
 * end would make memory grow with the trace, so the analysis reads the trace
 * twice: job_pipeline_prepass() runs the builder over the whole file and
 * keeps only one bounded histogram per kernel (struct grt_stats: exact up
 * to 256 samples, then log-linear buckets); the main pass then tags each job
 * the moment it finishes. Without a prepass (no path), exec-long-tail is left
 * unchecked and the jobs say so (flag tail-unchecked).
 */
struct job_pipeline;
struct nccl_calls;

/* ops->job gets every job after tagging. */
struct job_pipeline *job_pipeline_new(const struct grt_file_header *hdr,
				      const struct job_thresholds *t,
				      const struct job_builder_ops *ops, void *ctx);
void job_pipeline_free(struct job_pipeline *p);
/*
 * Pass 1 over path. A trace that breaks part-way keeps what was read (the
 * main pass reports the error); returns 0, or a negative errno when the file
 * cannot be read at all (err filled).
 */
int job_pipeline_prepass(struct job_pipeline *p, const char *path, char *err, size_t err_len);
void job_pipeline_record(struct job_pipeline *p, const struct grt_record *rec,
			 const struct grt_strings *strings);
void job_pipeline_finish(struct job_pipeline *p);
const struct job_builder *job_pipeline_builder(const struct job_pipeline *p);
bool job_pipeline_has_prepass(const struct job_pipeline *p);
/* Whether memory sufficed for every job and every execution time of the prepass. */
bool job_pipeline_complete(const struct job_pipeline *p);
/* The trace's NCCL calls (after the prepass, with the nccl source), or NULL. */
const struct nccl_calls *job_pipeline_nccl(const struct job_pipeline *p);
/* DRM jobs handed out so far: their device timing comes from the drivers' rings. */
uint64_t job_pipeline_drm_jobs(const struct job_pipeline *p);

#endif
