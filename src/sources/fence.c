/* The `fence` source: dma_fence life cycle and waits of the traced processes' fences. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"
#include "sources/fence.h"
#include "sources/session.h"
#include "sources/source.h"
#include "sources/tp_format.h"
#include "trace/records_kernel.h"
#include "fence.skel.h"

static const char *const fence_events[] = {
	"dma_fence_init", "dma_fence_emit", "dma_fence_enable_signal", "dma_fence_signaled",
	"dma_fence_destroy", "dma_fence_wait_start", "dma_fence_wait_end",
};

struct fence_source {
	struct grt_bpf_source base;
	struct grt_session *session;
	struct fence_bpf *skel;
};

static int on_fence_event(void *ctx, void *data, size_t len)
{
	struct fence_source *fs = ctx;
	const struct fence_event *e = data;
	char driver[FENCE_NAME_LEN + 1], timeline[FENCE_NAME_LEN + 1];
	struct grt_fence_rec rec;
	struct grt_event_origin origin;

	if (len < sizeof(*e))
		return 0;
	memcpy(driver, e->driver, FENCE_NAME_LEN);
	memcpy(timeline, e->timeline, FENCE_NAME_LEN);
	driver[FENCE_NAME_LEN] = timeline[FENCE_NAME_LEN] = 0;
	rec = (struct grt_fence_rec){
		.context = e->context, .seqno = e->seqno, .wait_ns = e->wait_ns, .event = e->kind,
		.flags = e->flags, .driver_str = grt_session_intern(fs->session, driver),
		.timeline_str = grt_session_intern(fs->session, timeline),
	};
	origin = (struct grt_event_origin){ .ts_ns = e->ts_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->tid };
	grt_session_emit(fs->session, GRT_REC_FENCE, &origin, &rec, sizeof(rec));
	return 0;
}

static int fence_probe(char *why, size_t why_len)
{
	int err = grt_bpf_probe(why, why_len);

	if (err)
		return err;
	for (size_t i = 0; i < sizeof(fence_events) / sizeof(fence_events[0]); i++)
		if (!grt_tracepoint_exists("dma_fence", fence_events[i])) {
			snprintf(why, why_len, "this kernel has no dma_fence:%s tracepoint", fence_events[i]);
			return -ENOENT;
		}
	return 0;
}

/* Reads the event class's field offsets so the program matches this kernel's layout. */
static int load_layout(struct fence_source *fs)
{
	static const char *const names[] = { "driver", "timeline", "context", "seqno" };
	const struct tp_field *f[4];
	struct tp_field fields[TP_MAX_FIELDS];
	int n = tp_format_load("dma_fence", "dma_fence_init", fields, TP_MAX_FIELDS);

	if (n < 0)
		return grt_session_fail(fs->session, n, "fence: cannot read the dma_fence_init format: %s",
					strerror(-n));
	for (int i = 0; i < 4; i++) {
		f[i] = tp_field_find(fields, n, names[i]);
		if (!f[i] || (i < 2 && !f[i]->data_loc) || (i >= 2 && f[i]->size != 4 && f[i]->size != 8))
			return grt_session_fail(fs->session, -EINVAL,
						"fence: dma_fence_init has no usable '%s' field", names[i]);
	}
	fs->skel->rodata->layout = (struct fence_layout){
		.driver = f[0]->offset, .timeline = f[1]->offset, .context = f[2]->offset,
		.seqno = f[3]->offset, .context_size = f[2]->size, .seqno_size = f[3]->size,
	};
	return 0;
}

static void fence_detach(void *ctx)
{
	struct fence_source *fs = ctx;

	if (!fs)
		return;
	grt_bpf_source_detach(&fs->base, fs->skel ? fs->skel->skeleton : NULL);
	fence_bpf__destroy(fs->skel);
	free(fs);
}

static int fence_attach(struct grt_session *s, void **ctx)
{
	struct fence_source *fs = calloc(1, sizeof(*fs));
	int err;

	if (!fs)
		return -ENOMEM;
	fs->session = s;
	fs->skel = fence_bpf__open();
	if (!fs->skel) {
		err = -errno;
		goto fail;
	}
	bpf_program__set_autoload(fs->skel->progs.fence_test_event, false);
	err = load_layout(fs);
	if (err) {
		fence_detach(fs);
		return err;
	}
	err = grt_bpf_use_pid_filter(s, fs->skel->obj, &fs->skel->rodata->filter_by_tgid);
	if (!err)
		err = grt_bpf_source_load_start(&fs->base, s, fs->skel->skeleton, GRT_SRC_FENCE,
						fs->skel->maps.fence_events,
						fs->skel->maps.dropped_events, on_fence_event, fs);
	if (err)
		goto fail;
	*ctx = fs;
	return 0;
fail:
	grt_bpf_source_fail(s, "fence", err);
	fence_detach(fs);
	return err;
}

static int fence_drain(void *ctx)
{
	grt_bpf_source_drain(&((struct fence_source *)ctx)->base);
	return 0;
}

static const struct grt_source fence_source = {
	.name = "fence",
	.id = GRT_SRC_FENCE,
	.summary = "dma_fence init/emit/signal/destroy and wait durations (dma_fence tracepoints)",
	.probe = fence_probe,
	.attach = fence_attach,
	.drain = fence_drain,
	.detach = fence_detach,
};

GRT_SOURCE_REGISTER(fence_source);
