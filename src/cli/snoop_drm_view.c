/* `grtrace snoop drm`: DRM job events as they happen, one line each. */
#include <inttypes.h>
#include "cli/snoop.h"
#include "trace/records_drm.h"

/*
 * What names the job in a line: the virtio-gpu command, else the scheduler's job id, else the
 * (context, seqno) of an i915 or xe job.
 */
static void print_drm(FILE *out, const struct grt_record *rec, const struct grt_strings *strings,
		      uint64_t t0_ns)
{
	const struct grt_drm_job_rec *d = rec->payload;
	const char *ring, *cmd;

	if (rec->hdr.type != GRT_REC_DRM_JOB || rec->hdr.payload_len < sizeof(*d))
		return;
	ring = grt_strings_get(strings, d->ring_str);
	snoop_line_start(out, rec, t0_ns);
	fprintf(out, "%-10s %-10s %-14s ", grt_drm_driver_name(d->driver), grt_drm_event_name(d->event),
		ring && *ring ? ring : "-");
	if (d->driver == GRT_DRM_VIRTIO_GPU && (cmd = grt_virtio_gpu_cmd_name(d->arg0)))
		fprintf(out, "%s seqno=%" PRIu64, cmd, d->job);
	else if (d->job)
		fprintf(out, "job=%" PRIu64, d->job);
	else
		fprintf(out, "ctx=%" PRIu64 " seqno=%" PRIu64, d->context, d->seqno);
	if (d->fence)
		fprintf(out, " fence=%#" PRIx64, d->fence);
	if (d->driver == GRT_DRM_VIRTIO_GPU && (d->arg1 & 1))
		fprintf(out, " fence_id=%" PRIu64, d->seqno);
	fputc('\n', out);
}

static const struct snoop_view drm_view = {
	.name = "drm",
	.sources = "drm",
	.summary = "DRM jobs on the GPU's rings (DRM scheduler, amdgpu, i915, xe, virtio-gpu)",
	.header = "driver     event      ring           job",
	.print = print_drm,
};

GRT_SNOOP_VIEW(drm_view);
