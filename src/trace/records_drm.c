/* Description and names of the drm source's record: one DRM job event. */
#include <stddef.h>
#include "trace/record_desc.h"
#include "trace/records_drm.h"
#include "trace/trace_names.h"

static const char *const driver_names[GRT_DRM_DRIVER_COUNT] = {
	[GRT_DRM_SCHED] = "drm_sched", [GRT_DRM_AMDGPU] = "amdgpu", [GRT_DRM_I915] = "i915",
	[GRT_DRM_XE] = "xe", [GRT_DRM_VIRTIO_GPU] = "virtio_gpu",
};

const char *grt_drm_driver_name(uint32_t driver)
{
	return GRT_NAME_OF(driver_names, driver);
}

static const char *const event_names[GRT_DRM_EVENT_COUNT] = {
	[GRT_DRM_ALLOC] = "alloc", [GRT_DRM_COMMIT] = "commit", [GRT_DRM_SUBMIT] = "submit",
	[GRT_DRM_RUNNING] = "running", [GRT_DRM_COMPLETE] = "complete", [GRT_DRM_RETIRE] = "retire",
	[GRT_DRM_WAIT_BEGIN] = "wait_begin", [GRT_DRM_WAIT_END] = "wait_end",
	[GRT_DRM_DEPENDENCY] = "dependency",
};

const char *grt_drm_event_name(uint32_t event)
{
	return GRT_NAME_OF(event_names, event);
}

void grt_drm_arg_names(uint32_t driver, const char **arg0, const char **arg1)
{
	static const char *const names[GRT_DRM_DRIVER_COUNT][2] = {
		[GRT_DRM_SCHED] = { "queued", "hw_queued" },	/* entity jobs, jobs on the hardware */
		[GRT_DRM_AMDGPU] = { "ibs", NULL },		/* indirect buffers in the job */
		[GRT_DRM_I915] = { "class", "instance" },	/* the engine */
		[GRT_DRM_XE] = { "lrc_seqno", "error" },
		[GRT_DRM_VIRTIO_GPU] = { "cmd", "flags" },	/* command type, VIRTIO_GPU_FLAG_* */
	};

	*arg0 = driver < GRT_DRM_DRIVER_COUNT ? names[driver][0] : NULL;
	*arg1 = driver < GRT_DRM_DRIVER_COUNT ? names[driver][1] : NULL;
}

/* Type codes of the virtio-gpu specification (control and cursor queues, and responses). */
const char *grt_virtio_gpu_cmd_name(uint32_t type)
{
	static const struct {
		uint32_t type;
		const char *name;
	} names[] = {
		{ 0x0100, "GET_DISPLAY_INFO" }, { 0x0101, "RESOURCE_CREATE_2D" },
		{ 0x0102, "RESOURCE_UNREF" }, { 0x0103, "SET_SCANOUT" }, { 0x0104, "RESOURCE_FLUSH" },
		{ 0x0105, "TRANSFER_TO_HOST_2D" }, { 0x0106, "RESOURCE_ATTACH_BACKING" },
		{ 0x0107, "RESOURCE_DETACH_BACKING" }, { 0x0108, "GET_CAPSET_INFO" },
		{ 0x0109, "GET_CAPSET" }, { 0x010a, "GET_EDID" }, { 0x010b, "RESOURCE_ASSIGN_UUID" },
		{ 0x010c, "RESOURCE_CREATE_BLOB" }, { 0x010d, "SET_SCANOUT_BLOB" },
		{ 0x0200, "CTX_CREATE" }, { 0x0201, "CTX_DESTROY" }, { 0x0202, "CTX_ATTACH_RESOURCE" },
		{ 0x0203, "CTX_DETACH_RESOURCE" }, { 0x0204, "RESOURCE_CREATE_3D" },
		{ 0x0205, "TRANSFER_TO_HOST_3D" }, { 0x0206, "TRANSFER_FROM_HOST_3D" },
		{ 0x0207, "SUBMIT_3D" }, { 0x0208, "RESOURCE_MAP_BLOB" },
		{ 0x0209, "RESOURCE_UNMAP_BLOB" }, { 0x0300, "UPDATE_CURSOR" }, { 0x0301, "MOVE_CURSOR" },
		{ 0x1100, "OK_NODATA" }, { 0x1101, "OK_DISPLAY_INFO" }, { 0x1102, "OK_CAPSET_INFO" },
		{ 0x1103, "OK_CAPSET" }, { 0x1104, "OK_EDID" }, { 0x1105, "OK_RESOURCE_UUID" },
		{ 0x1106, "OK_MAP_INFO" }, { 0x1200, "ERR_UNSPEC" }, { 0x1201, "ERR_OUT_OF_MEMORY" },
		{ 0x1202, "ERR_INVALID_SCANOUT_ID" }, { 0x1203, "ERR_INVALID_RESOURCE_ID" },
		{ 0x1204, "ERR_INVALID_CONTEXT_ID" }, { 0x1205, "ERR_INVALID_PARAMETER" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].type == type)
			return names[i].name;
	return NULL;
}

static void describe_drm_job(const struct grt_record *rec, const struct grt_strings *strings,
			     struct grt_fields *out)
{
	const struct grt_drm_job_rec *d = rec->payload;
	const char *arg0, *arg1;

	grt_field_str(out, "driver", grt_drm_driver_name(d->driver));
	grt_field_str(out, "event", grt_drm_event_name(d->event));
	grt_field_str(out, "tracepoint", grt_strings_get(strings, d->tracepoint_str));
	grt_field_str(out, "ring", grt_strings_get(strings, d->ring_str));
	grt_field_u64(out, "job", d->job);
	grt_field_hex(out, "fence", d->fence);
	grt_field_u64(out, "context", d->context);
	grt_field_u64(out, "seqno", d->seqno);
	grt_drm_arg_names(d->driver, &arg0, &arg1);
	if (d->driver == GRT_DRM_VIRTIO_GPU) {
		grt_field_hex(out, "cmd_type", d->arg0);
		grt_field_str(out, "cmd", grt_virtio_gpu_cmd_name(d->arg0));
	} else if (arg0) {
		grt_field_u64(out, arg0, d->arg0);
	}
	if (arg1)
		grt_field_u64(out, arg1, d->arg1);
}

GRT_RECORD_DESC(drm_job_desc) = {
	.type = GRT_REC_DRM_JOB,
	.name = "drm",
	.min_len = sizeof(struct grt_drm_job_rec),
	.describe = describe_drm_job,
};
