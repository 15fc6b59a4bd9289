/* The drm source's tracepoint table and the layouts it resolves from tracefs format files. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sources/drm_events.h"
#include "trace/records_drm.h"

#define SCHED_JOB_FIELDS .job = "id", .fence = "fence", .arg0 = "job_count", .arg1 = "hw_job_count", \
	.ring = "name"
#define AMDGPU_JOB_FIELDS .job = "sched_job_id", .context = "context", .seqno = "seqno", \
	.arg0 = "num_ibs", .ring = "ring"
#define I915_REQUEST_FIELDS .context = "ctx", .seqno = "seqno", .arg0 = "class", .arg1 = "instance"
#define XE_JOB_FIELDS .fence = "fence", .context = "guc_id", .seqno = "seqno", .arg0 = "lrc_seqno", \
	.arg1 = "error", .ring = "dev"
/* the virtqueue seqno is only in kernels since 6.3 (6.1 matches responses by order) */
#define VIRTIO_CMD_FIELDS .job = "?seqno", .context = "ctx_id", .seqno = "fence_id", .arg0 = "type", \
	.arg1 = "flags", .ring = "name"

#define DEF(id, ev, drv, ...) \
	[DRM_TP_##id] = { .event = GRT_DRM_##ev, .driver = GRT_DRM_##drv, __VA_ARGS__ }

static const struct drm_tracepoint_def defs[DRM_TP_COUNT] = {
	DEF(SCHED_JOB, COMMIT, SCHED, SCHED_JOB_FIELDS),
	DEF(SCHED_RUN_JOB, SUBMIT, SCHED, SCHED_JOB_FIELDS),
	DEF(SCHED_PROCESS_JOB, COMPLETE, SCHED, .fence = "fence"),
	DEF(SCHED_WAIT_DEP, DEPENDENCY, SCHED, .job = "id", .fence = "fence", .context = "ctx",
	    .seqno = "seqno", .ring = "name"),
	DEF(AMDGPU_CS_IOCTL, ALLOC, AMDGPU, AMDGPU_JOB_FIELDS, .fence = "fence"),
	DEF(AMDGPU_RUN_JOB, SUBMIT, AMDGPU, AMDGPU_JOB_FIELDS),
	DEF(I915_QUEUE, ALLOC, I915, I915_REQUEST_FIELDS),
	DEF(I915_ADD, COMMIT, I915, I915_REQUEST_FIELDS),
	DEF(I915_SUBMIT, SUBMIT, I915, I915_REQUEST_FIELDS),
	DEF(I915_IN, RUNNING, I915, I915_REQUEST_FIELDS),
	DEF(I915_OUT, COMPLETE, I915, I915_REQUEST_FIELDS),
	DEF(I915_RETIRE, RETIRE, I915, I915_REQUEST_FIELDS),
	DEF(I915_WAIT_BEGIN, WAIT_BEGIN, I915, I915_REQUEST_FIELDS),
	DEF(I915_WAIT_END, WAIT_END, I915, I915_REQUEST_FIELDS),
	DEF(XE_JOB_CREATE, ALLOC, XE, XE_JOB_FIELDS),
	DEF(XE_JOB_EXEC, COMMIT, XE, XE_JOB_FIELDS),
	DEF(XE_JOB_RUN, SUBMIT, XE, XE_JOB_FIELDS),
	DEF(XE_JOB_FREE, RETIRE, XE, XE_JOB_FIELDS),
	DEF(VIRTIO_CMD_QUEUE, SUBMIT, VIRTIO_GPU, VIRTIO_CMD_FIELDS),
	DEF(VIRTIO_CMD_RESPONSE, COMPLETE, VIRTIO_GPU, VIRTIO_CMD_FIELDS),
};

static const struct {
	const char *group, *name;
} tracepoint_names[DRM_TP_COUNT] = {
#define DRM_TP_NAME(id, grp, tp) [DRM_TP_##id] = { #grp, #tp },
	DRM_TRACEPOINTS(DRM_TP_NAME)
#undef DRM_TP_NAME
};

const struct drm_tracepoint_def *drm_tracepoint_def(unsigned tp)
{
	return tp < DRM_TP_COUNT ? &defs[tp] : NULL;
}

const char *drm_tracepoint_group(unsigned tp)
{
	return tp < DRM_TP_COUNT ? tracepoint_names[tp].group : NULL;
}

const char *drm_tracepoint_name(unsigned tp)
{
	return tp < DRM_TP_COUNT ? tracepoint_names[tp].name : NULL;
}

/* One value of the layout: an integer field, or for the ring a string (__data_loc or char *). */
static int resolve_field(const char *want, bool string, const struct tp_field *fields, int count,
			 struct drm_field *out, char *why, size_t why_len)
{
	bool optional = want && want[0] == '?';
	const struct tp_field *f;

	*out = (struct drm_field){ 0 };
	if (!want)
		return 0;
	f = tp_field_find(fields, count, optional ? want + 1 : want);
	if (!f) {
		if (optional)
			return 0;
		snprintf(why, why_len, "its format has no '%s' field", want);
		return -EINVAL;
	}
	if (f->offset > UINT16_MAX) {
		snprintf(why, why_len, "'%s' is at offset %d, beyond an entry", f->name, f->offset);
		return -EINVAL;
	}
	out->offset = f->offset;
	out->size = f->size;
	if (string && (f->data_loc || (f->char_pointer && f->size == 8))) {
		out->kind = f->data_loc ? DRM_FIELD_LOC_STRING : DRM_FIELD_PTR_STRING;
		return 0;
	}
	if (string || f->data_loc || (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)) {
		snprintf(why, why_len, "'%s' is not %s (%d bytes%s)", f->name,
			 string ? "a string" : "an integer", f->size, f->data_loc ? ", a string" : "");
		return -EINVAL;
	}
	out->kind = DRM_FIELD_INT;
	return 0;
}

int drm_layout_resolve(const struct drm_tracepoint_def *def, const struct tp_field *fields,
		       int count, struct drm_layout *layout, char *why, size_t why_len)
{
	int err = 0;

	memset(layout, 0, sizeof(*layout));
	err = err ?: resolve_field(def->job, false, fields, count, &layout->job, why, why_len);
	err = err ?: resolve_field(def->fence, false, fields, count, &layout->fence, why, why_len);
	err = err ?: resolve_field(def->context, false, fields, count, &layout->context, why, why_len);
	err = err ?: resolve_field(def->seqno, false, fields, count, &layout->seqno, why, why_len);
	err = err ?: resolve_field(def->arg0, false, fields, count, &layout->arg0, why, why_len);
	err = err ?: resolve_field(def->arg1, false, fields, count, &layout->arg1, why, why_len);
	err = err ?: resolve_field(def->ring, true, fields, count, &layout->ring, why, why_len);
	return err;
}
