/* Per-process UVM counters: trackers bound to CUDA processes' UVM files, drained on the agent's tick. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/u64_map.h"
#include "serve/uvm_counts.h"
#include "sources/uvm_bind.h"
#include "sources/uvm_capture.h"
#include "sources/uvm_decode.h"

/*
 * 8 Ki slots (576 KiB pinned per process) drained every agent tick (0.2 s):
 * 40,000 events a second before the driver drops, and drops are counted.
 * The uvm source keeps 64 Ki for a single traced process; a node agent
 * watching every CUDA process keeps less.
 */
#define QUEUE_ENTRIES (1u << 13)
#define UVM_FDS_MAX 16
#define FIRST_RETRY_NS (250 * 1000000ull)
#define LAST_RETRY_NS (8 * 1000000000ull)
/* what is counted: the rest of the driver's events stay off */
#define COUNTED_EVENTS                                                                             \
	((1ull << UVM_EV_CPU_FAULT) | (1ull << UVM_EV_GPU_FAULT) | (1ull << UVM_EV_MIGRATION))

struct watched {
	uint32_t pid;
	bool bound;
	int pidfd, uvm_fd;
	struct uvm_tracker tracker; /* the driver's queue */
	struct uvm_queue replayed;  /* or a capture's */
	struct uvm_queue *queue;
	enum uvm_queue_version version;
	struct uvm_counts counts;
	uint64_t next_try_ns, retry_ns;
};

struct uvm_counter {
	struct uvm_capture capture; /* replay: entries given to every watched process */
	bool replay;
	struct u64_map procs; /* pid -> struct watched * */
	uint64_t lost;
};

void uvm_counts_add(struct uvm_counts *c, const struct grt_uvm_event_rec *e)
{
	bool src_cpu = e->src_processor == GRT_UVM_PROC_CPU;
	bool dst_cpu = e->dst_processor == GRT_UVM_PROC_CPU;

	switch (e->kind) {
	case GRT_UVM_CPU_FAULT:
		c->faults[UVM_FAULTS_CPU]++;
		break;
	case GRT_UVM_GPU_FAULT:
		c->faults[UVM_FAULTS_GPU]++;
		break;
	case GRT_UVM_MIGRATION:
		if (e->src_processor == GRT_UVM_PROC_NONE || e->dst_processor == GRT_UVM_PROC_NONE ||
		    (src_cpu && dst_cpu))
			break;
		c->migrated_bytes[src_cpu ? UVM_DIR_HTOD : dst_cpu ? UVM_DIR_DTOH : UVM_DIR_DTOD] +=
		    e->bytes;
		break;
	}
}

const char *uvm_fault_side_name(unsigned side)
{
	return side == UVM_FAULTS_CPU ? "cpu" : "gpu";
}

const char *uvm_direction_name(unsigned dir)
{
	static const char *const names[UVM_DIRECTIONS] = {"htod", "dtoh", "dtod"};

	return dir < UVM_DIRECTIONS ? names[dir] : "unknown";
}

/* ---- binding ---- */

static struct watched *find(const struct uvm_counter *u, uint32_t pid)
{
	uint64_t v;

	return u64_map_get(&u->procs, pid, &v) ? (struct watched *)(uintptr_t)v : NULL;
}

static bool bind_replay(struct uvm_counter *u, struct watched *w)
{
	if (uvm_capture_queue(&u->capture, &w->replayed))
		return false;
	w->queue = &w->replayed;
	w->version = (enum uvm_queue_version)u->capture.h.version;
	return true;
}

/* The process's UVM file, once CUDA opened and initialized it; our copy of it is kept for flushes. */
static bool bind_driver(struct watched *w)
{
	int fds[UVM_FDS_MAX];
	int n = uvm_find_fds((pid_t)w->pid, UVM_DEVICE_PATH, fds, UVM_FDS_MAX);

	if (n <= 0)
		return false;
	if (w->pidfd < 0 && (w->pidfd = uvm_pidfd_open((pid_t)w->pid)) < 0)
		return false;
	w->uvm_fd = uvm_tracker_bind(&w->tracker, UVM_TOOLS_DEVICE_PATH, w->pidfd, fds, n,
				     QUEUE_ENTRIES, COUNTED_EVENTS);
	if (w->uvm_fd < 0)
		return false;
	w->queue = &w->tracker.queue;
	w->version = w->tracker.version;
	return true;
}

static void try_bind(struct uvm_counter *u, struct watched *w, uint64_t now)
{
	if (now < w->next_try_ns)
		return;
	w->bound = u->replay ? bind_replay(u, w) : bind_driver(w);
	/* a process without UVM (yet) is looked at less and less often */
	w->next_try_ns = now + w->retry_ns;
	if (w->retry_ns < LAST_RETRY_NS)
		w->retry_ns *= 2;
}

/* ---- counting ---- */

struct drain_ctx {
	struct uvm_counter *u;
	struct watched *w;
};

static void on_entry(void *ctx, const void *entry)
{
	static const struct uvm_clock_map no_clock; /* counts need no time stamps */
	struct drain_ctx *d = ctx;
	struct uvm_decoded ev;

	if (uvm_decode_entry(entry, d->w->version, d->w->pid, &no_clock, &ev))
		d->u->lost++;
	else
		uvm_counts_add(&d->w->counts, &ev.rec.base);
}

static void drain(struct uvm_counter *u, struct watched *w)
{
	struct drain_ctx d = {u, w};

	uvm_queue_drain(w->queue, on_entry, &d);
	u->lost += uvm_queue_new_drops(w->queue, NULL, NULL);
}

static void release(struct watched *w)
{
	uvm_tracker_close(&w->tracker);
	if (w->replayed.ctrl)
		uvm_capture_queue_free(&w->replayed);
	if (w->uvm_fd >= 0)
		close(w->uvm_fd);
	if (w->pidfd >= 0)
		close(w->pidfd);
	free(w);
}

/* ---- the interface ---- */

int uvm_counter_start(struct uvm_counter **out, const char *replay, char *why, size_t why_len)
{
	struct uvm_counter *u = calloc(1, sizeof(*u));
	int err = 0;

	if (!u)
		return -ENOMEM;
	u64_map_init(&u->procs);
	u->replay = replay && *replay;
	if (u->replay)
		err = uvm_capture_load(replay, &u->capture, why, why_len);
	else
		err = uvm_check_available(UVM_TOOLS_DEVICE_PATH, UVM_MODULE_DIR, why, why_len);
	if (err) {
		uvm_counter_stop(u);
		return err;
	}
	*out = u;
	return 0;
}

void uvm_counter_watch(struct uvm_counter *u, uint32_t pid)
{
	struct watched *w;

	if (!u || find(u, pid) || !(w = calloc(1, sizeof(*w))))
		return;
	w->pid = pid;
	w->pidfd = w->uvm_fd = -1;
	w->retry_ns = FIRST_RETRY_NS;
	uvm_tracker_init(&w->tracker);
	if (u64_map_put(&u->procs, pid, (uintptr_t)w))
		free(w);
}

void uvm_counter_poll(struct uvm_counter *u, uint64_t now_ns)
{
	uint64_t v;

	if (!u)
		return;
	for (size_t i = 0; u64_map_iter(&u->procs, &i, NULL, &v);) {
		struct watched *w = (void *)(uintptr_t)v;

		if (!w->bound)
			try_bind(u, w, now_ns);
		if (w->bound)
			drain(u, w);
	}
}

bool uvm_counter_get(const struct uvm_counter *u, uint32_t pid, struct uvm_counts *out)
{
	struct watched *w = u ? find(u, pid) : NULL;

	if (!w || !w->bound)
		return false;
	*out = w->counts;
	return true;
}

bool uvm_counter_finish(struct uvm_counter *u, uint32_t pid, struct uvm_counts *out)
{
	uint64_t v;
	struct watched *w;
	bool bound;

	if (!u || !u64_map_remove(&u->procs, pid, &v))
		return false;
	w = (void *)(uintptr_t)v;
	/* one that exited before the first tick may still be bound, now that nothing waits */
	if (!w->bound) {
		w->next_try_ns = 0;
		try_bind(u, w, 0);
	}
	bound = w->bound;
	if (bound) {
		/* events of GPU work that finished just before the exit */
		if (w->uvm_fd >= 0)
			uvm_flush_events(w->uvm_fd);
		drain(u, w);
		*out = w->counts;
	}
	release(w);
	return bound;
}

uint64_t uvm_counter_lost(const struct uvm_counter *u)
{
	return u ? u->lost : 0;
}

void uvm_counter_stop(struct uvm_counter *u)
{
	uint64_t v;

	if (!u)
		return;
	for (size_t i = 0; u64_map_iter(&u->procs, &i, NULL, &v);)
		release((void *)(uintptr_t)v);
	u64_map_destroy(&u->procs);
	uvm_capture_free(&u->capture);
	free(u);
}
