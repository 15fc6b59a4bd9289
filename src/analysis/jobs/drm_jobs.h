/* DRM jobs: the drm source's events of one GPU job gathered into a job of the job model. */
#ifndef GRT_DRM_JOBS_H
#define GRT_DRM_JOBS_H

#include <stdint.h>
#include "analysis/jobs/job.h"
#include "trace/grt_reader.h"

/* DRM jobs are numbered from here on, apart from the CUDA jobs' ids (1, 2, ...). */
#define DRM_JOB_ID_BASE 1000000000ull
/* A DRM ring is a device of its own for idle gaps: the first ring seen is this one. */
#define DRM_JOB_DEVICE_BASE 256u

/*
 * Which events make a job, per driver (docs/drm.md): the scheduler's finished-fence address
 * (DRM scheduler, amdgpu, xe), an i915 request's (context, seqno), a virtio-gpu command's
 * virtqueue seqno, or on kernels without one the order of commands and responses on a ring.
 * A job is handed out once the submitter's wait for it ended (the fence source's wait_end,
 * i915's wait_end), or DRM_JOB_SETTLE_NS of trace time after it completed, or at the end.
 * 10 s: a job handed out before its submitter's wait ends loses its wake-up, and a loaded
 * machine may wake the submitter late; the window only bounds how late.
 */
#define DRM_JOB_SETTLE_NS 10000000000ull

/*
 * The recorder writes each source's ring as it drains it, so a fence wait can be in the file
 * before the drm records of the job it waited for. Records are taken in time order once they
 * are this much older than the newest record read (or at the end): the rings are drained
 * every 100 ms, 2 s leaves room for a loaded machine.
 */
#define DRM_JOB_REORDER_NS 2000000000ull

struct drm_jobs;

struct drm_jobs *drm_jobs_new(void (*emit)(void *ctx, struct job *j), void *ctx);
void drm_jobs_free(struct drm_jobs *d);
/*
 * Takes drm and fence records (others only tell the time); handles them in time order.
 * strings must stay valid until drm_jobs_finish.
 */
void drm_jobs_record(struct drm_jobs *d, const struct grt_record *rec, const struct grt_strings *strings);
/* End of trace: every open job goes out, marked with what it misses. */
void drm_jobs_finish(struct drm_jobs *d);
/* No job handed out from now on can START before this (UINT64_MAX when none is open). */
uint64_t drm_jobs_frontier(const struct drm_jobs *d);
/* Jobs handed out so far. */
uint64_t drm_jobs_count(const struct drm_jobs *d);

#endif
