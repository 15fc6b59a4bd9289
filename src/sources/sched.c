/* The `sched` source: off-CPU intervals and wakeups of the traced threads. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/types.h>
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"
#include "sources/sched.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_kernel.h"
#include "sched.skel.h"

struct sched_source {
	struct grt_bpf_source base;
	struct grt_session *session;
	struct sched_bpf *skel;
};

static void emit_offcpu(struct sched_source *ss, const struct sched_event *e)
{
	struct grt_sched_offcpu_rec rec = {
		.on_cpu_ns = e->on_cpu_ns, .prev_state = e->prev_state, .waker_tid = e->waker_tid,
	};
	struct grt_event_origin origin = { .ts_ns = e->ts_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->tid };

	grt_session_emit(ss->session, GRT_REC_SCHED_OFFCPU, &origin, &rec, sizeof(rec));
}

static void emit_wakeup(struct sched_source *ss, const struct sched_event *e)
{
	struct grt_sched_wakeup_rec rec = {
		.target_pid = e->target_pid, .target_tid = e->target_tid, .target_cpu = e->target_cpu,
		.prio = e->prio,
	};
	struct grt_event_origin origin = { .ts_ns = e->ts_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->tid };

	grt_session_emit(ss->session, GRT_REC_SCHED_WAKEUP, &origin, &rec, sizeof(rec));
}

static int on_sched_event(void *ctx, void *data, size_t len)
{
	const struct sched_event *e = data;

	if (len < sizeof(*e))
		return 0;
	if (e->kind == SCHED_EV_OFFCPU)
		emit_offcpu(ctx, e);
	else if (e->kind == SCHED_EV_WAKEUP)
		emit_wakeup(ctx, e);
	return 0;
}

static int sched_probe(char *why, size_t why_len)
{
	return grt_bpf_probe(why, why_len);
}

static void sched_detach(void *ctx)
{
	struct sched_source *ss = ctx;

	if (!ss)
		return;
	grt_bpf_source_detach(&ss->base, ss->skel ? ss->skel->skeleton : NULL);
	sched_bpf__destroy(ss->skel);
	free(ss);
}

static int sched_attach(struct grt_session *s, void **ctx)
{
	struct sched_source *ss = calloc(1, sizeof(*ss));
	int err;

	if (!ss)
		return -ENOMEM;
	ss->session = s;
	ss->skel = sched_bpf__open();
	if (!ss->skel) {
		err = -errno;
		goto fail;
	}
	ss->skel->rodata->recorder_tgid = getpid();
	err = grt_bpf_use_pid_filter(s, ss->skel->obj, &ss->skel->rodata->filter_by_tgid);
	if (!err)
		err = grt_bpf_source_load_start(&ss->base, s, ss->skel->skeleton, GRT_SRC_SCHED,
						ss->skel->maps.sched_events,
						ss->skel->maps.dropped_events, on_sched_event, ss);
	if (err)
		goto fail;
	*ctx = ss;
	return 0;
fail:
	grt_bpf_source_fail(s, "sched", err);
	sched_detach(ss);
	return err;
}

static int sched_drain(void *ctx)
{
	grt_bpf_source_drain(&((struct sched_source *)ctx)->base);
	return 0;
}

static const struct grt_source sched_source = {
	.name = "sched",
	.id = GRT_SRC_SCHED,
	.summary = "off-CPU intervals and wakeups of traced threads (sched_switch, sched_wakeup)",
	.probe = sched_probe,
	.attach = sched_attach,
	.drain = sched_drain,
	.detach = sched_detach,
};

GRT_SOURCE_REGISTER(sched_source);
