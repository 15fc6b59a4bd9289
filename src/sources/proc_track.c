/* The implicit source that keeps the traced-process set in step with forks and records exits. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sources/bpf_util.h"
#include "sources/proc_track.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_core.h"
#include "proc_track.skel.h"

struct proc_track {
	struct grt_session *session;
	struct proc_track_bpf *skel;
	struct ring_buffer *ring;
	unsigned long long drops_seen;
};

static int on_proc_event(void *ctx, void *data, size_t len)
{
	struct proc_track *pt = ctx;
	const struct proc_track_event *e = data;
	struct grt_process_rec rec = { .event = e->kind, .ppid = e->ppid };
	struct grt_event_origin origin = { .ts_ns = e->ts_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->pid };
	char comm[PROC_TRACK_COMM_LEN + 1];

	if (len < sizeof(*e))
		return 0;
	if (e->kind == GRT_PROC_EXIT) {
		/* a wait status: the low 7 bits are the signal, 0x80 the core dump, then the code */
		rec.exit_signal = (uint16_t)(e->exit_code & 0x7f);
		rec.exit_flags = e->exit_code & 0x80 ? GRT_PROC_CORE_DUMPED : 0;
		rec.exit_code = rec.exit_signal ? 0 : (e->exit_code >> 8) & 0xff;
	}
	memcpy(comm, e->comm, PROC_TRACK_COMM_LEN);
	comm[PROC_TRACK_COMM_LEN] = 0;
	rec.comm_str = grt_session_intern(pt->session, comm);
	grt_session_emit(pt->session, GRT_REC_PROCESS, &origin, &rec, sizeof(rec));
	return 0;
}

static int proc_track_probe(char *why, size_t why_len)
{
	return grt_bpf_probe(why, why_len);
}

static void proc_track_detach(void *ctx)
{
	struct proc_track *pt = ctx;

	if (!pt)
		return;
	ring_buffer__free(pt->ring);
	proc_track_bpf__destroy(pt->skel);
	free(pt);
}

static int proc_track_attach(struct grt_session *s, void **ctx)
{
	struct proc_track *pt = calloc(1, sizeof(*pt));
	int err;

	if (!pt)
		return -ENOMEM;
	pt->session = s;
	pt->skel = proc_track_bpf__open();
	if (!pt->skel) {
		err = -errno;
		goto fail;
	}
	err = grt_bpf_use_pid_filter(s, pt->skel->obj, &pt->skel->rodata->filter_by_tgid);
	if (!err)
		err = proc_track_bpf__load(pt->skel);
	if (!err)
		err = proc_track_bpf__attach(pt->skel);
	if (err)
		goto fail;
	pt->ring = grt_bpf_watch_ringbuf(s, bpf_map__fd(pt->skel->maps.proc_events), on_proc_event, pt);
	if (!pt->ring) {
		err = -errno ? -errno : -ENOMEM;
		goto fail;
	}
	*ctx = pt;
	return 0;
fail:
	grt_session_fail(s, err, "process tracking: %s", grt_bpf_last_message()[0] ? grt_bpf_last_message() : strerror(-err));
	proc_track_detach(pt);
	return err;
}

static int proc_track_drain(void *ctx)
{
	struct proc_track *pt = ctx;

	grt_session_count_drop(pt->session, GRT_SRC_RECORDER,
			       grt_bpf_new_drops(bpf_map__fd(pt->skel->maps.dropped_events), &pt->drops_seen));
	return 0;
}

static const struct grt_source proc_track_source = {
	.name = "proc",
	.id = GRT_SRC_RECORDER,
	.summary = "process starts and exits of traced processes",
	.implicit = true,
	.probe = proc_track_probe,
	.attach = proc_track_attach,
	.drain = proc_track_drain,
	.detach = proc_track_detach,
};

GRT_SOURCE_REGISTER(proc_track_source);
