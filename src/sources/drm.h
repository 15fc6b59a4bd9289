/* Shared by drm.bpf.c and drm.c: the DRM tracepoints the drm source knows, their layouts, its event. */
#ifndef GRT_DRM_H
#define GRT_DRM_H

#define DRM_RING_LEN 32

/*
 * Every tracepoint the source can attach, in one list: the BPF programs, the index of each
 * in the layouts, and the user-side table (drm_events.c) of what each means come from it.
 */
#define DRM_TRACEPOINTS(X)                                                                         \
	X(SCHED_JOB, gpu_scheduler, drm_sched_job)                                                 \
	X(SCHED_RUN_JOB, gpu_scheduler, drm_run_job)                                               \
	X(SCHED_PROCESS_JOB, gpu_scheduler, drm_sched_process_job)                                 \
	X(SCHED_WAIT_DEP, gpu_scheduler, drm_sched_job_wait_dep)                                   \
	X(AMDGPU_CS_IOCTL, amdgpu, amdgpu_cs_ioctl)                                                \
	X(AMDGPU_RUN_JOB, amdgpu, amdgpu_sched_run_job)                                            \
	X(I915_QUEUE, i915, i915_request_queue)                                                    \
	X(I915_ADD, i915, i915_request_add)                                                        \
	X(I915_SUBMIT, i915, i915_request_submit)                                                  \
	X(I915_IN, i915, i915_request_in)                                                          \
	X(I915_OUT, i915, i915_request_out)                                                        \
	X(I915_RETIRE, i915, i915_request_retire)                                                  \
	X(I915_WAIT_BEGIN, i915, i915_request_wait_begin)                                          \
	X(I915_WAIT_END, i915, i915_request_wait_end)                                              \
	X(XE_JOB_CREATE, xe, xe_sched_job_create)                                                  \
	X(XE_JOB_EXEC, xe, xe_sched_job_exec)                                                      \
	X(XE_JOB_RUN, xe, xe_sched_job_run)                                                        \
	X(XE_JOB_FREE, xe, xe_sched_job_free)                                                      \
	X(VIRTIO_CMD_QUEUE, virtio_gpu, virtio_gpu_cmd_queue)                                      \
	X(VIRTIO_CMD_RESPONSE, virtio_gpu, virtio_gpu_cmd_response)

enum drm_tracepoint {
#define DRM_TP_ENUM(id, group, name) DRM_TP_##id,
	DRM_TRACEPOINTS(DRM_TP_ENUM)
#undef DRM_TP_ENUM
	DRM_TP_COUNT
};

enum drm_field_kind {
	DRM_FIELD_NONE = 0,
	DRM_FIELD_INT = 1,		/* an integer or a pointer, size 1, 2, 4 or 8 */
	DRM_FIELD_LOC_STRING = 2,	/* __data_loc char[]: a u32 of length << 16 | offset in the entry */
	DRM_FIELD_PTR_STRING = 3,	/* const char *: a kernel address */
};

/* Where one value sits in a tracepoint's entry, from its format file. */
struct drm_field {
	__u16 offset;
	__u8 size;
	__u8 kind;			/* enum drm_field_kind */
};

/* The values the source keeps of one tracepoint; which field fills which is in drm_events.c. */
struct drm_layout {
	struct drm_field job;
	struct drm_field fence;
	struct drm_field context;
	struct drm_field seqno;
	struct drm_field arg0;
	struct drm_field arg1;
	struct drm_field ring;
	struct drm_field reserved;
};

struct drm_event {
	__u64 ts_ns;
	__u64 job;
	__u64 fence;
	__u64 context;
	__u64 seqno;
	__u32 tracepoint;		/* enum drm_tracepoint */
	__u32 arg0;
	__u32 arg1;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	char ring[DRM_RING_LEN];
};

#endif
