/* The `syscall` source: every syscall of the traced processes, NVIDIA ioctls decoded. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"
#include "sources/nv_ioctl_decode.h"
#include "sources/session.h"
#include "sources/source.h"
#include "sources/syscall.h"
#include "sources/syscall_filter.h"
#include "trace/records_kernel.h"
#include "syscall.skel.h"

_Static_assert(SYSCALL_SET_WORDS == GRT_SYSCALL_SET_WORDS, "one syscall set size");

struct syscall_source {
	struct grt_bpf_source base;
	struct grt_session *session;
	struct syscall_bpf *skel;
};

static void emit_call(struct syscall_source *ss, const struct syscall_event *e)
{
	struct grt_syscall_rec rec = {
		.call_id = e->call_id, .exit_ns = e->exit_ns, .ret = e->ret, .nr = e->nr,
	};
	struct grt_event_origin origin = { .ts_ns = e->enter_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->tid };

	memcpy(rec.args, e->args, sizeof(rec.args));
	if (e->flags & SYSCALL_EV_NO_RETURN)
		rec.flags |= GRT_SYSCALL_F_NO_RETURN;
	if (e->flags & SYSCALL_EV_UNFINISHED)
		rec.flags |= GRT_SYSCALL_F_UNFINISHED;
	grt_session_emit(ss->session, GRT_REC_SYSCALL, &origin, &rec, sizeof(rec));
}

static void emit_nv_ioctl(struct syscall_source *ss, const struct syscall_nv_event *e)
{
	const struct syscall_event *c = &e->call;
	struct grt_event_origin origin = { .ts_ns = c->enter_ns, .cpu = c->cpu, .pid = c->pid, .tid = c->tid };
	struct grt_nv_ioctl_rec rec = {
		.call_id = c->call_id, .exit_ns = c->exit_ns, .arg = c->args[2], .ret = c->ret,
		.fd = (uint32_t)c->args[0], .request = (uint32_t)c->args[1],
	};
	char name[SYSCALL_DEV_NAME_LEN + 1];
	struct nv_ioctl_capture cap = {
		.dev_name = name, .dev_major = e->dev_major, .dev_minor = e->dev_minor,
		.request = (uint32_t)c->args[1], .inner_cmd = e->inner_cmd, .arg_size = e->arg_size,
		.arg = e->arg, .arg_len = e->arg_len < sizeof(e->arg) ? e->arg_len : sizeof(e->arg),
		.arg_err = e->arg_err,
	};

	memcpy(name, e->dev_name, SYSCALL_DEV_NAME_LEN);
	name[SYSCALL_DEV_NAME_LEN] = 0;
	nv_ioctl_decode(&cap, &rec);
	rec.path_str = grt_session_intern(ss->session, name);
	grt_session_emit(ss->session, GRT_REC_NV_IOCTL, &origin, &rec, sizeof(rec));
}

static int on_syscall_event(void *ctx, void *data, size_t len)
{
	struct syscall_source *ss = ctx;
	const struct syscall_event *e = data;

	if (len < sizeof(*e))
		return 0;
	emit_call(ss, e);
	if ((e->flags & SYSCALL_EV_NV) && len >= sizeof(struct syscall_nv_event))
		emit_nv_ioctl(ss, data);
	return 0;
}

/* Reports a thread's call if it is still in one (grt_bpf_foreach_task_value). */
static void flush_thread(pid_t tid, void *value, void *ctx)
{
	const struct syscall_inflight *in = value;

	if (in->active) {
		struct syscall_event ev = {
			.call_id = in->call_id, .enter_ns = in->enter_ns, .nr = in->nr, .pid = in->pid,
			.tid = (uint32_t)tid, .cpu = in->cpu, .flags = SYSCALL_EV_UNFINISHED,
		};

		memcpy(ev.args, in->args, sizeof(ev.args));
		emit_call(ctx, &ev);
	}
}

/*
 * Calls still in the kernel at stop (a thread blocked in futex or epoll) are
 * recorded as unfinished.
 */
static void flush_unfinished(struct syscall_source *ss)
{
	struct syscall_inflight in;

	grt_bpf_foreach_task_value(ss->session, bpf_map__fd(ss->skel->maps.inflight), &in,
				   flush_thread, ss);
}

static int syscall_probe(char *why, size_t why_len)
{
	return grt_bpf_probe(why, why_len);
}

static void syscall_detach(void *ctx)
{
	struct syscall_source *ss = ctx;

	if (!ss)
		return;
	if (ss->skel) {
		syscall_bpf__detach(ss->skel);
		grt_bpf_source_flush(&ss->base);
		flush_unfinished(ss);
	}
	grt_bpf_source_stop(&ss->base);
	syscall_bpf__destroy(ss->skel);
	free(ss);
}

static int configure_filter(struct syscall_source *ss)
{
	const char *list = grt_session_option(ss->session, "syscalls");
	uint64_t set[GRT_SYSCALL_SET_WORDS];
	char err[256];
	int rc;

	if (!list)
		return 0;
	rc = grt_syscall_filter_parse(list, set, err, sizeof(err));
	if (rc)
		return grt_session_fail(ss->session, rc, "%s", err);
	ss->skel->rodata->filter_syscalls = true;
	for (int i = 0; i < GRT_SYSCALL_SET_WORDS; i++)
		ss->skel->rodata->syscall_set[i] = set[i];
	return 0;
}

static int syscall_attach(struct grt_session *s, void **ctx)
{
	struct syscall_source *ss = calloc(1, sizeof(*ss));
	int err;

	if (!ss)
		return -ENOMEM;
	ss->session = s;
	ss->skel = syscall_bpf__open();
	if (!ss->skel) {
		err = -errno;
		goto fail;
	}
	ss->skel->rodata->recorder_tgid = getpid();
	err = configure_filter(ss);
	if (err) {
		syscall_detach(ss);
		return err;
	}
	err = grt_bpf_use_pid_filter(s, ss->skel->obj, &ss->skel->rodata->filter_by_tgid);
	if (!err)
		err = grt_bpf_source_load_start(&ss->base, s, ss->skel->skeleton, GRT_SRC_SYSCALL,
						ss->skel->maps.syscall_events,
						ss->skel->maps.dropped_events, on_syscall_event, ss);
	if (err)
		goto fail;
	*ctx = ss;
	return 0;
fail:
	grt_bpf_source_fail(s, "syscall", err);
	syscall_detach(ss);
	return err;
}

static int syscall_drain(void *ctx)
{
	grt_bpf_source_drain(&((struct syscall_source *)ctx)->base);
	return 0;
}

static int check_syscalls(const char *list, char *why, size_t why_len)
{
	uint64_t set[GRT_SYSCALL_SET_WORDS];

	return grt_syscall_filter_parse(list, set, why, why_len);
}

static const struct grt_source_option syscall_options[] = {
	{ "syscalls", "LIST", "syscall source: only these syscalls", check_syscalls },
	{ NULL },
};

static const struct grt_source syscall_source = {
	.name = "syscall",
	.id = GRT_SRC_SYSCALL,
	.summary = "syscalls of traced processes (--syscalls to narrow), NVIDIA ioctls decoded",
	.probe = syscall_probe,
	.attach = syscall_attach,
	.drain = syscall_drain,
	.detach = syscall_detach,
	.options = syscall_options,
};

GRT_SOURCE_REGISTER(syscall_source);
