/* The `uvm` source: unified-memory events from the driver's tools interface, per traced process. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "common/clock.h"
#include "sources/session.h"
#include "sources/source.h"
#include "sources/uvm_bind.h"
#include "sources/uvm_decode.h"
#include "trace/records_uvm.h"

/* 64 Ki slots: 4.5 MiB pinned per traced process, about a second of the busiest fault storms seen.
 */
#define UVM_QUEUE_ENTRIES (1u << 16)
#define UVM_MAX_FDS 16
/* How often descriptor tables are rescanned for a UVM file opened later. */
#define SCAN_INTERVAL_TARGET_NS (20 * 1000000ULL)
#define SCAN_INTERVAL_ALL_NS (250 * 1000000ULL)
#define TIMER_INTERVAL_NS (20 * 1000000L)

/* One process we watch: unbound until its UVM file shows up. */
struct uvm_proc {
	pid_t pid;
	int pidfd;
	int uvm_fd; /* our copy of its VA-space descriptor (kept for flushes) */
	struct uvm_tracker tracker;
	bool bound;
	bool seen; /* still listed by the latest scan */
};

struct uvm_source {
	struct grt_session *session;
	pid_t target; /* 0: every process */
	int epoll_fd; /* our own: tools fds, pidfds, timer; the session polls it as one fd */
	int timer_fd;
	struct uvm_proc **procs;
	unsigned nprocs, cap;
	uint64_t last_scan_ns;
	struct uvm_clock_map clock;
	pid_t self;
};

static int uvm_probe(char *why, size_t why_len)
{
	return uvm_check_available(UVM_TOOLS_DEVICE_PATH, UVM_MODULE_DIR, why, why_len);
}

/* ---- event output ---- */

struct emit_ctx {
	struct uvm_source *src;
	struct uvm_proc *proc;
};

static void emit_decoded(struct uvm_source *src, struct uvm_proc *proc, const struct uvm_decoded *d)
{
	struct grt_event_origin origin = {
	    .ts_ns = d->ts_ns ? d->ts_ns : grt_monotonic_ns(),
	    .pid = (uint32_t)proc->pid,
	    .tid = d->tid,
	};

	grt_session_emit(src->session, GRT_REC_UVM_EVENT, &origin, &d->rec, sizeof(d->rec));
}

static void on_entry(void *ctx, const void *entry)
{
	struct emit_ctx *e = ctx;
	struct uvm_decoded d;

	if (uvm_decode_entry(entry, e->proc->tracker.version, (uint32_t)e->proc->pid,
			     &e->src->clock, &d)) {
		/* an entry we cannot read is an event lost, and counted as one */
		grt_session_count_drop(e->src->session, GRT_SRC_UVM, 1);
		return;
	}
	emit_decoded(e->src, e->proc, &d);
}

static void on_driver_drop(void *ctx, uint32_t driver_type, uint64_t n)
{
	struct emit_ctx *e = ctx;
	struct uvm_decoded d;

	memset(&d, 0, sizeof(d));
	d.rec.base.kind = GRT_UVM_QUEUE_OVERFLOW;
	d.rec.base.owner_pid = (uint32_t)e->proc->pid;
	d.rec.base.src_processor = GRT_UVM_PROC_NONE;
	d.rec.base.dst_processor = GRT_UVM_PROC_NONE;
	d.rec.base.cause = driver_type;
	d.rec.base.flags = e->proc->tracker.version == UVM_QUEUE_V2 ? GRT_UVM_F_QUEUE_V2 : 0;
	d.rec.ext.aux = n;
	d.ts_ns = grt_monotonic_ns();
	d.rec.base.end_ns = d.ts_ns;
	emit_decoded(e->src, e->proc, &d);
	grt_session_count_drop(e->src->session, GRT_SRC_UVM, n);
}

static void drain_proc(struct uvm_source *src, struct uvm_proc *proc)
{
	struct emit_ctx e = {.src = src, .proc = proc};

	if (!proc->bound)
		return;
	uvm_queue_drain(&proc->tracker.queue, on_entry, &e);
	uvm_queue_new_drops(&proc->tracker.queue, on_driver_drop, &e);
}

/* ---- the set of processes ---- */

static void release_proc(struct uvm_source *src, struct uvm_proc *proc)
{
	if (proc->bound) {
		epoll_ctl(src->epoll_fd, EPOLL_CTL_DEL, proc->tracker.tools_fd, NULL);
		epoll_ctl(src->epoll_fd, EPOLL_CTL_DEL, proc->pidfd, NULL);
	}
	uvm_tracker_close(&proc->tracker);
	if (proc->uvm_fd >= 0)
		close(proc->uvm_fd);
	if (proc->pidfd >= 0)
		close(proc->pidfd);
	free(proc);
}

/* A process that exited: deliver what the driver still holds, then let its UVM file go. */
static void finish_proc(struct uvm_source *src, struct uvm_proc *proc)
{
	if (proc->bound) {
		uvm_flush_events(proc->uvm_fd);
		uvm_clock_map_sample(&src->clock);
		drain_proc(src, proc);
	}
	release_proc(src, proc);
}

static struct uvm_proc *find_proc(struct uvm_source *src, pid_t pid)
{
	for (unsigned i = 0; i < src->nprocs; i++)
		if (src->procs[i]->pid == pid)
			return src->procs[i];
	return NULL;
}

static struct uvm_proc *add_proc(struct uvm_source *src, pid_t pid)
{
	struct uvm_proc *proc;

	if (src->nprocs == src->cap) {
		unsigned cap = src->cap ? src->cap * 2 : 8;
		struct uvm_proc **grown = realloc(src->procs, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		src->procs = grown;
		src->cap = cap;
	}
	proc = calloc(1, sizeof(*proc));
	if (!proc)
		return NULL;
	proc->pid = pid;
	proc->pidfd = -1;
	proc->uvm_fd = -1;
	uvm_tracker_init(&proc->tracker);
	src->procs[src->nprocs++] = proc;
	return proc;
}

static void remove_proc_at(struct uvm_source *src, unsigned i)
{
	finish_proc(src, src->procs[i]);
	src->procs[i] = src->procs[--src->nprocs];
}

/*
 * Tries each of the process's UVM descriptors: CUDA keeps two (the VA
 * space and the mm holder) and only the VA-space one takes a tracker. One
 * that is not initialized yet is retried on the next scan.
 */
static void try_bind(struct uvm_source *src, struct uvm_proc *proc, const int *fds, int nfds)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = proc};
	int local;

	if (proc->pidfd < 0 && (proc->pidfd = uvm_pidfd_open(proc->pid)) < 0)
		return;
	local = uvm_tracker_bind(&proc->tracker, UVM_TOOLS_DEVICE_PATH, proc->pidfd, fds, nfds,
				 UVM_QUEUE_ENTRIES, UVM_EV_MASK_ALL);
	if (local < 0)
		return;
	proc->uvm_fd = local;
	proc->bound = true;
	/* the tools fd polls readable at the threshold; the pidfd when the process exits */
	epoll_ctl(src->epoll_fd, EPOLL_CTL_ADD, proc->tracker.tools_fd, &ev);
	epoll_ctl(src->epoll_fd, EPOLL_CTL_ADD, proc->pidfd, &ev);
}

/* Looks at one candidate process: new ones are added, unbound ones get a bind attempt. */
static void scan_pid(struct uvm_source *src, pid_t pid)
{
	struct uvm_proc *proc = find_proc(src, pid);
	int fds[UVM_MAX_FDS];
	int n;

	if (proc)
		proc->seen = true;
	if ((proc && proc->bound) || pid == src->self)
		return;
	n = uvm_find_fds(pid, UVM_DEVICE_PATH, fds, UVM_MAX_FDS);
	if (n <= 0)
		return;
	if (!proc && !(proc = add_proc(src, pid)))
		return;
	proc->seen = true;
	try_bind(src, proc, fds, n);
}

/* The traced set: the target and the descendants process tracking added to the session's map. */
static void scan_traced(struct uvm_source *src)
{
	int map_fd = grt_session_pid_map_fd(src->session);
	__u32 key, next;
	void *prev = NULL;

	scan_pid(src, src->target);
	if (map_fd < 0)
		return;
	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		if ((pid_t)next != src->target)
			scan_pid(src, (pid_t)next);
		key = next;
		prev = &key;
	}
}

static void scan_all(struct uvm_source *src)
{
	DIR *dir = opendir("/proc");
	struct dirent *d;

	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			scan_pid(src, (pid_t)atoi(d->d_name));
	closedir(dir);
}

static void scan(struct uvm_source *src)
{
	for (unsigned i = 0; i < src->nprocs; i++)
		src->procs[i]->seen = false;
	if (src->target)
		scan_traced(src);
	else
		scan_all(src);
	/* unbound entries whose UVM descriptor went away are forgotten */
	for (unsigned i = 0; i < src->nprocs;) {
		if (!src->procs[i]->bound && !src->procs[i]->seen)
			remove_proc_at(src, i);
		else
			i++;
	}
	src->last_scan_ns = grt_monotonic_ns();
}

/* ---- the source interface ---- */

static int uvm_drain(void *ctx)
{
	struct uvm_source *src = ctx;
	uint64_t interval = src->target ? SCAN_INTERVAL_TARGET_NS : SCAN_INTERVAL_ALL_NS;

	uvm_clock_map_sample(&src->clock);
	for (unsigned i = 0; i < src->nprocs;) {
		struct uvm_proc *proc = src->procs[i];

		if (proc->bound && uvm_pidfd_exited(proc->pidfd)) {
			remove_proc_at(src, i);
			continue;
		}
		drain_proc(src, proc);
		i++;
	}
	if (grt_monotonic_ns() - src->last_scan_ns >= interval)
		scan(src);
	return 0;
}

/* Our epoll fd became readable: a queue passed its threshold, a process exited, or the timer
 * ticked. */
static int uvm_on_ready(void *ctx)
{
	struct uvm_source *src = ctx;
	struct epoll_event evs[32];
	uint64_t ticks;
	int n;

	/* consume readiness; the work is the same drain either way */
	n = epoll_wait(src->epoll_fd, evs, 32, 0);
	for (int i = 0; i < n; i++)
		if (!evs[i].data.ptr && read(src->timer_fd, &ticks, sizeof(ticks)) < 0)
			break;
	return uvm_drain(src);
}

static void uvm_detach(void *ctx)
{
	struct uvm_source *src = ctx;

	if (!src)
		return;
	/* events of GPU work that finished just before the stop */
	for (unsigned i = 0; i < src->nprocs; i++)
		if (src->procs[i]->bound)
			uvm_flush_events(src->procs[i]->uvm_fd);
	uvm_clock_map_sample(&src->clock);
	while (src->nprocs)
		remove_proc_at(src, src->nprocs - 1);
	free(src->procs);
	if (src->timer_fd >= 0)
		close(src->timer_fd);
	if (src->epoll_fd >= 0)
		close(src->epoll_fd);
	free(src);
}

/* Fails early, with the reason, when the target cannot be traced at all. */
static int check_target(struct grt_session *s, pid_t pid)
{
	char why[256];
	int err = uvm_check_target(pid, why, sizeof(why));

	return err ? grt_session_fail(s, err, "uvm: %s", why) : 0;
}

static int uvm_attach(struct grt_session *s, void **ctx)
{
	struct itimerspec tick = {.it_interval.tv_nsec = TIMER_INTERVAL_NS,
				  .it_value.tv_nsec = TIMER_INTERVAL_NS};
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	struct uvm_source *src = calloc(1, sizeof(*src));
	int err;

	if (!src)
		return -ENOMEM;
	src->session = s;
	src->target = grt_session_config(s)->target_pid;
	src->self = getpid();
	src->timer_fd = -1;
	src->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (src->target && (err = check_target(s, src->target)))
		goto fail;
	src->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (src->epoll_fd < 0 || src->timer_fd < 0 ||
	    timerfd_settime(src->timer_fd, 0, &tick, NULL) ||
	    epoll_ctl(src->epoll_fd, EPOLL_CTL_ADD, src->timer_fd, &ev)) {
		err = grt_session_fail(s, -errno, "uvm: %s", strerror(errno));
		goto fail;
	}
	err = grt_session_watch_fd(s, src->epoll_fd, uvm_on_ready, src);
	if (err) {
		grt_session_fail(s, err, "uvm: cannot watch the event queues: %s", strerror(-err));
		goto fail;
	}
	uvm_clock_map_sample(&src->clock);
	scan(src);
	*ctx = src;
	return 0;
fail:
	uvm_detach(src);
	return err;
}

static const struct grt_source uvm_source = {
    .name = "uvm",
    .id = GRT_SRC_UVM,
    .summary = "unified-memory faults, migrations, evictions, thrashing (/dev/nvidia-uvm-tools)",
    .probe = uvm_probe,
    .attach = uvm_attach,
    .drain = uvm_drain,
    .detach = uvm_detach,
};

GRT_SOURCE_REGISTER(uvm_source);
