/* Payloads of the `drm` source: one record per DRM job event, in the drm source's record range. */
#ifndef GRT_RECORDS_DRM_H
#define GRT_RECORDS_DRM_H

#include <stdint.h>
#include "grt_format.h"

enum grt_drm_record_type {
	GRT_REC_DRM_JOB = GRT_REC_SOURCE_FIRST(GRT_SRC_DRM),
};

enum grt_drm_driver {
	GRT_DRM_SCHED = 1,	/* the DRM GPU scheduler (gpu_scheduler:*), under amdgpu, xe, nouveau ... */
	GRT_DRM_AMDGPU = 2,
	GRT_DRM_I915 = 3,
	GRT_DRM_XE = 4,
	GRT_DRM_VIRTIO_GPU = 5,
	GRT_DRM_DRIVER_COUNT,
};

/* The ring operation an event stands for (docs/drm.md maps each tracepoint). */
enum grt_drm_event {
	GRT_DRM_ALLOC = 1,	/* the job is built: its ring space / request allocated */
	GRT_DRM_COMMIT = 2,	/* handed to the driver's queue (scheduler entity, request list) */
	GRT_DRM_SUBMIT = 3,	/* written to the ring the GPU reads: visible to the hardware */
	GRT_DRM_RUNNING = 4,	/* the hardware started it (where a driver says so) */
	GRT_DRM_COMPLETE = 5,	/* the hardware finished it (fence signaled, response received) */
	GRT_DRM_RETIRE = 6,	/* the driver released it after completion */
	GRT_DRM_WAIT_BEGIN = 7,	/* a host thread starts waiting for it */
	GRT_DRM_WAIT_END = 8,
	GRT_DRM_DEPENDENCY = 9,	/* the job waits for another fence before it can run */
	GRT_DRM_EVENT_COUNT,
};

/*
 * Header pid/tid is the thread the tracepoint fired in: the submitter for alloc/commit, a
 * driver thread or an interrupt for the others. Which fields an event fills: docs/drm.md.
 */
struct grt_drm_job_rec {
	uint64_t job;		/* the driver's job id (scheduler job id, virtqueue seqno); 0 = none */
	uint64_t fence;		/* kernel address of the job's (or dependency's) fence; 0 = none */
	uint64_t context;	/* fence context, i915 context, xe GuC id, virtio-gpu context id */
	uint64_t seqno;		/* fence or request seqno, virtio-gpu fence id */
	uint32_t event;		/* enum grt_drm_event */
	uint32_t driver;	/* enum grt_drm_driver */
	uint32_t tracepoint_str; /* "group:event" it came from */
	uint32_t ring_str;	/* ring, timeline, device or virtqueue name; 0 = none */
	uint32_t arg0;		/* per driver: see grt_drm_arg_names() */
	uint32_t arg1;
};

_Static_assert(sizeof(struct grt_drm_job_rec) == 56, "drm job layout");

const char *grt_drm_driver_name(uint32_t driver);
const char *grt_drm_event_name(uint32_t event);
/* The names of arg0 and arg1 for a driver's events (NULL: unused). */
void grt_drm_arg_names(uint32_t driver, const char **arg0, const char **arg1);
/* A virtio-gpu command or response type's name ("RESOURCE_CREATE_2D"), NULL when unknown. */
const char *grt_virtio_gpu_cmd_name(uint32_t type);

#endif
