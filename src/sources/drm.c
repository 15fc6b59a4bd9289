/*
 * The `drm` source: DRM job events (DRM scheduler, amdgpu, i915, xe, virtio-gpu) from the
 * drivers' tracepoints, each decoded through the layout its tracefs format file gives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "common/clock.h"
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"
#include "sources/drm.h"
#include "sources/drm_events.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_drm.h"
#include "trace/records_kernel.h"
#include "drm.skel.h"

struct drm_source {
	struct grt_bpf_source base;
	struct grt_session *session;
	struct drm_bpf *skel;
	uint32_t tracepoint_str[DRM_TP_COUNT];	/* "group:name", interned once */
};

static int on_drm_event(void *ctx, void *data, size_t len)
{
	struct drm_source *ds = ctx;
	const struct drm_event *e = data;
	const struct drm_tracepoint_def *def;
	char ring[DRM_RING_LEN + 1];
	struct grt_drm_job_rec rec;
	struct grt_event_origin origin;

	if (len < sizeof(*e) || !(def = drm_tracepoint_def(e->tracepoint)))
		return 0;
	memcpy(ring, e->ring, DRM_RING_LEN);
	ring[DRM_RING_LEN] = 0;
	rec = (struct grt_drm_job_rec){
		.job = e->job, .fence = e->fence, .context = e->context, .seqno = e->seqno,
		.event = def->event, .driver = def->driver,
		.tracepoint_str = ds->tracepoint_str[e->tracepoint],
		.ring_str = grt_session_intern(ds->session, ring), .arg0 = e->arg0, .arg1 = e->arg1,
	};
	origin = (struct grt_event_origin){ .ts_ns = e->ts_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->tid };
	grt_session_emit(ds->session, GRT_REC_DRM_JOB, &origin, &rec, sizeof(rec));
	return 0;
}

static bool tracepoint_present(unsigned tp)
{
	return grt_tracepoint_exists(drm_tracepoint_group(tp), drm_tracepoint_name(tp));
}

static int drm_probe(char *why, size_t why_len)
{
	int err = grt_bpf_probe(why, why_len);

	if (err)
		return err;
	for (unsigned tp = 0; tp < DRM_TP_COUNT; tp++)
		if (tracepoint_present(tp))
			return 0;
	snprintf(why, why_len,
		 "no DRM job tracepoints here (no gpu_scheduler, amdgpu, i915, xe or virtio_gpu events: no such driver loaded)");
	return -ENOENT;
}

/* A tracepoint the kernel has but whose format the source cannot decode: said, and left out. */
static void note_undecodable(struct drm_source *ds, unsigned tp, const char *why)
{
	char probe[128];
	struct grt_unsupported_probe_rec rec = { .source = GRT_SRC_DRM, .error = -EINVAL };
	struct grt_event_origin origin = { .ts_ns = grt_monotonic_ns(), .pid = getpid(), .tid = getpid() };

	snprintf(probe, sizeof(probe), "tracepoint:%s:%s", drm_tracepoint_group(tp), drm_tracepoint_name(tp));
	rec.probe_str = grt_session_intern(ds->session, probe);
	rec.reason_str = grt_session_intern(ds->session, why);
	grt_session_emit(ds->session, GRT_REC_UNSUPPORTED_PROBE, &origin, &rec, sizeof(rec));
}

/* Adds "group(n)" to how for the tracepoints used, one group after the other. */
static void describe_groups(const bool used[DRM_TP_COUNT], char *how, size_t how_len)
{
	size_t at = 0;

	how[0] = 0;
	for (unsigned tp = 0; tp < DRM_TP_COUNT; tp++) {
		const char *group = drm_tracepoint_group(tp);
		int n = 0;

		if (tp && !strcmp(group, drm_tracepoint_group(tp - 1)))
			continue;
		for (unsigned same = tp; same < DRM_TP_COUNT && !strcmp(drm_tracepoint_group(same), group); same++)
			n += used[same];
		if (n && at < how_len)
			at += snprintf(how + at, how_len - at, "%s%s(%d)", at ? " " : "", group, n);
	}
}

/*
 * Sets the layout of every tracepoint this kernel has and turns the others off; a present
 * one whose format cannot be decoded leaves an unsupported_probe record. Returns how many
 * are used, described by group in how.
 */
static int choose_tracepoints(struct drm_source *ds, char *how, size_t how_len)
{
	struct bpf_program *progs[DRM_TP_COUNT] = {
#define DRM_TP_PROG(id, group, name) [DRM_TP_##id] = ds->skel->progs.name,
		DRM_TRACEPOINTS(DRM_TP_PROG)
#undef DRM_TP_PROG
	};
	bool used[DRM_TP_COUNT] = { false };
	int count = 0;

	for (unsigned tp = 0; tp < DRM_TP_COUNT; tp++) {
		struct drm_layout *layout = (struct drm_layout *)&ds->skel->rodata->layouts[tp];
		struct tp_field fields[TP_MAX_FIELDS];
		char why[200], name[160];
		int n = -ENOENT;

		if (tracepoint_present(tp))
			n = tp_format_load(drm_tracepoint_group(tp), drm_tracepoint_name(tp), fields,
					   TP_MAX_FIELDS);
		if (n >= 0 && drm_layout_resolve(drm_tracepoint_def(tp), fields, n, layout, why, sizeof(why)))
			note_undecodable(ds, tp, why);
		else if (n >= 0)
			used[tp] = true;
		bpf_program__set_autoload(progs[tp], used[tp]);
		if (!used[tp])
			continue;
		snprintf(name, sizeof(name), "%s:%s", drm_tracepoint_group(tp), drm_tracepoint_name(tp));
		ds->tracepoint_str[tp] = grt_session_intern(ds->session, name);
		count++;
	}
	describe_groups(used, how, how_len);
	return count;
}

static void drm_detach(void *ctx)
{
	struct drm_source *ds = ctx;

	if (!ds)
		return;
	grt_bpf_source_detach(&ds->base, ds->skel ? ds->skel->skeleton : NULL);
	drm_bpf__destroy(ds->skel);
	free(ds);
}

static int drm_attach(struct grt_session *s, void **ctx)
{
	struct drm_source *ds = calloc(1, sizeof(*ds));
	char how[200];
	int err;

	if (!ds)
		return -ENOMEM;
	ds->session = s;
	ds->base.drops_fd = -1;
	ds->skel = drm_bpf__open();
	if (!ds->skel) {
		err = -errno;
		goto fail;
	}
	bpf_program__set_autoload(ds->skel->progs.drm_test_event, false);
	if (!choose_tracepoints(ds, how, sizeof(how))) {
		drm_detach(ds);
		return grt_session_fail(s, -ENOTSUP, "no DRM tracepoint here has a format the drm source can decode");
	}
	grt_session_attached_how(s, how);
	err = grt_bpf_source_load_start(&ds->base, s, ds->skel->skeleton, GRT_SRC_DRM, ds->skel->maps.drm_events,
					ds->skel->maps.dropped_events, on_drm_event, ds);
	if (err)
		goto fail;
	*ctx = ds;
	return 0;
fail:
	grt_bpf_source_fail(s, "drm", err);
	drm_detach(ds);
	return err;
}

static int drm_drain(void *ctx)
{
	grt_bpf_source_count_drops(&((struct drm_source *)ctx)->base);
	return 0;
}

static const struct grt_source drm_source = {
	.name = "drm",
	.id = GRT_SRC_DRM,
	.summary = "DRM jobs on the ring (DRM scheduler, amdgpu, i915, xe, virtio-gpu tracepoints), system-wide",
	.probe = drm_probe,
	.attach = drm_attach,
	.drain = drm_drain,
	.detach = drm_detach,
};

GRT_SOURCE_REGISTER(drm_source);
