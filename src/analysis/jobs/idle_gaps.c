/* Idle gaps per device: busy intervals merged in START order once the builder's frontier passes. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/idle_gaps.h"
#include "common/grow_array.h"
#include "common/min_heap.h"
#include "common/u64_map.h"

struct busy {
	uint64_t start;
	uint64_t end;
	uint64_t submit;	/* SUBMIT, or API_ENTER, or 0 when neither is known */
	uint64_t job_id;	/* 0: no user job (grtrace's own work, an unmatched device record) */
	uint32_t pid;
	uint32_t tid;
};

struct span {
	uint64_t start;
	uint64_t end;
};

struct device_state {
	struct device_idle out;
	struct busy *heap;	/* pending intervals, min-heap by start */
	uint32_t heap_len;
	uint32_t heap_cap;
	uint64_t cur_end;	/* end of the merged busy time so far */
	uint64_t user_end;	/* end of the busy time up to the latest user job: idle starts here */
	uint64_t judged;	/* starts before this were merged already */
	/*
	 * Work of no user job after user_end: busy time inside the gap that the
	 * next job ends, subtracted from its idle time, never a gap of its own
	 * (grtrace's collection work between a job and the next must not change
	 * what held the next one back). Its busy time counts once a job follows.
	 */
	struct span *anon;
	uint32_t n_anon;
	uint32_t cap_anon;
	uint64_t pending_busy;
	bool started;
};

struct wait {
	uint64_t start;
	uint64_t end;
};

struct proc_waits {
	struct wait *w;
	uint32_t len;
	uint32_t cap;
	uint32_t compact_at;
};

struct thread_idle {
	uint32_t tid;
	uint32_t pid;
	uint64_t ns[GAP_CLASSES];
};

struct idle_gaps {
	unsigned top_n;
	struct device_state *devs;
	uint32_t n_devs;
	uint32_t cap_devs;
	struct u64_map waits;	/* pid -> struct proc_waits * */
	struct u64_map threads;	/* tid -> struct thread_idle * */
	struct uvm_activity *uvm;
	uint64_t frontier;
	uint64_t alloc_failures;	/* memory ran out: some busy time, waits or gaps are missing */
};

static const char *const class_names[] = { "host-bound", "sync-bound", "other", "uvm-bound" };

const char *gap_class_name(enum gap_class c)
{
	return c < GAP_CLASSES ? class_names[c] : "?";
}

struct idle_gaps *idle_gaps_new(unsigned top_n)
{
	struct idle_gaps *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->top_n = top_n ? top_n : 10;
	u64_map_init(&g->waits);
	u64_map_init(&g->threads);
	g->uvm = uvm_activity_new();
	if (!g->uvm) {
		idle_gaps_free(g);
		return NULL;
	}
	return g;
}

void idle_gaps_free(struct idle_gaps *g)
{
	size_t i = 0;
	uint64_t k, v;

	if (!g)
		return;
	for (uint32_t d = 0; d < g->n_devs; d++) {
		free(g->devs[d].heap);
		free(g->devs[d].anon);
		free(g->devs[d].out.longest);
	}
	free(g->devs);
	while (u64_map_iter(&g->waits, &i, &k, &v)) {
		free(((struct proc_waits *)(uintptr_t)v)->w);
		free((void *)(uintptr_t)v);
	}
	for (i = 0; u64_map_iter(&g->threads, &i, &k, &v);)
		free((void *)(uintptr_t)v);
	u64_map_destroy(&g->waits);
	u64_map_destroy(&g->threads);
	uvm_activity_free(g->uvm);
	free(g);
}

static struct device_state *device_get(struct idle_gaps *g, uint32_t device)
{
	struct device_state *d;

	for (uint32_t i = 0; i < g->n_devs; i++)
		if (g->devs[i].out.device == device)
			return &g->devs[i];
	if (grt_grow_array((void **)&g->devs, &g->cap_devs, sizeof(*g->devs), g->n_devs + 1)) {
		g->alloc_failures++;
		return NULL;
	}
	d = &g->devs[g->n_devs++];
	memset(d, 0, sizeof(*d));
	d->out.device = device;
	d->out.longest = calloc(g->top_n, sizeof(*d->out.longest));
	if (!d->out.longest) {
		g->n_devs--;
		g->alloc_failures++;
		return NULL;
	}
	return d;
}

/* ---- host waits ---- */

static struct proc_waits *waits_of(struct idle_gaps *g, uint32_t pid, bool create)
{
	struct proc_waits *p;
	uint64_t v;

	if (u64_map_get(&g->waits, pid, &v))
		return (struct proc_waits *)(uintptr_t)v;
	if (!create)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p || u64_map_put(&g->waits, pid, (uintptr_t)p)) {
		free(p);
		g->alloc_failures++;
		return NULL;
	}
	return p;
}

/*
 * Host activity (waits, UVM) that ended before every device's judged time,
 * and before the frontier (no device seen yet starts earlier), can no longer
 * fall in a gap still to be judged.
 */
static uint64_t horizon_of(const struct idle_gaps *g)
{
	uint64_t horizon = g->frontier;

	for (uint32_t i = 0; i < g->n_devs; i++)
		if (g->devs[i].user_end < horizon)
			horizon = g->devs[i].user_end;
	return horizon;
}

static void compact_waits(struct idle_gaps *g, struct proc_waits *p)
{
	uint64_t horizon = horizon_of(g);
	uint32_t kept = 0;

	for (uint32_t i = 0; i < p->len; i++)
		if (p->w[i].end >= horizon)
			p->w[kept++] = p->w[i];
	p->len = kept;
	p->compact_at = kept * 2 > 64 ? kept * 2 : 64;
}

void idle_gaps_host_wait(struct idle_gaps *g, uint32_t pid, uint32_t tid, uint64_t start,
			 uint64_t end)
{
	struct proc_waits *p = waits_of(g, pid, true);

	if (!p || end < start)
		return;
	if (p->len >= p->compact_at)
		compact_waits(g, p);
	if (grt_grow_array((void **)&p->w, &p->cap, sizeof(*p->w), p->len + 1)) {
		g->alloc_failures++;
		return;
	}
	p->w[p->len++] = (struct wait){ start, end };
}

void idle_gaps_uvm(struct idle_gaps *g, uint32_t pid, uint64_t ts, const struct grt_uvm_event_rec *u)
{
	uvm_activity_event(g->uvm, pid, ts, u, horizon_of(g));
}

const struct uvm_totals *idle_gaps_uvm_totals(const struct idle_gaps *g, uint32_t pid)
{
	return uvm_activity_totals(g->uvm, pid);
}

static bool waiting_at(struct idle_gaps *g, uint32_t pid, uint64_t t)
{
	struct proc_waits *p = waits_of(g, pid, false);

	for (uint32_t i = 0; p && i < p->len; i++)
		if (p->w[i].start <= t && t <= p->w[i].end)
			return true;
	return false;
}

/* ---- busy intervals ---- */

static void heap_push(struct idle_gaps *g, struct device_state *d, const struct busy *b)
{
	if (grt_grow_array((void **)&d->heap, &d->heap_cap, sizeof(*d->heap), d->heap_len + 1)) {
		g->alloc_failures++;
		return;
	}
	d->heap[d->heap_len++] = *b;
	grt_min_heap_up(d->heap, d->heap_len, sizeof(*d->heap), offsetof(struct busy, start));
}

static struct busy heap_pop(struct device_state *d)
{
	struct busy top;

	grt_min_heap_pop(d->heap, &d->heap_len, sizeof(*d->heap), offsetof(struct busy, start), &top);
	return top;
}

static struct thread_idle *thread_of(struct idle_gaps *g, uint32_t tid, uint32_t pid)
{
	struct thread_idle *t;
	uint64_t v;

	if (u64_map_get(&g->threads, tid, &v))
		return (struct thread_idle *)(uintptr_t)v;
	t = calloc(1, sizeof(*t));
	if (!t || u64_map_put(&g->threads, tid, (uintptr_t)t)) {
		free(t);
		g->alloc_failures++;
		return NULL;
	}
	t->tid = tid;
	t->pid = pid;
	return t;
}

static void keep_longest(struct idle_gaps *g, struct device_idle *out, const struct idle_gap *gap)
{
	uint32_t at = out->n_longest;

	if (at == g->top_n) {
		if (out->longest[at - 1].end - out->longest[at - 1].start >= gap->end - gap->start)
			return;
		at--;
	} else {
		out->n_longest++;
	}
	while (at && out->longest[at - 1].end - out->longest[at - 1].start < gap->end - gap->start) {
		out->longest[at] = out->longest[at - 1];
		at--;
	}
	out->longest[at] = *gap;
}

/* Idle time in [from, to): the span less the work of no user job inside it. */
static uint64_t idle_within(const struct device_state *d, uint64_t from, uint64_t to)
{
	uint64_t idle = to > from ? to - from : 0;

	for (uint32_t i = 0; i < d->n_anon && idle; i++) {
		uint64_t s = d->anon[i].start > from ? d->anon[i].start : from;
		uint64_t e = d->anon[i].end < to ? d->anon[i].end : to;

		if (e > s)
			idle -= e - s;
	}
	return idle;
}

/*
 * The gap [user_end, next START) as a whole, judged by what held the next job
 * back (docs/jobs.md, "Idle gaps"); busy time of no user job inside it is
 * left out of each part.
 */
static void judge_gap(struct idle_gaps *g, struct device_state *d, const struct busy *next)
{
	struct idle_gap gap = { .start = d->user_end, .end = next->start, .device = d->out.device,
				.pid = next->pid, .tid = next->tid, .job_id = next->job_id };
	uint64_t held_until = next->submit && next->submit < gap.end ? next->submit : gap.end;
	uint64_t total = 0, from, to;
	struct thread_idle *t;

	if (held_until < gap.start)
		held_until = gap.start;
	gap.split[GAP_OTHER] = idle_within(d, held_until, gap.end);
	if (held_until > gap.start) {
		enum gap_class c = waiting_at(g, next->pid, gap.start) ? GAP_SYNC_BOUND : GAP_HOST_BOUND;

		if (uvm_activity_within(g->uvm, next->pid, gap.start, held_until, &from, &to))
			gap.split[GAP_UVM_BOUND] = idle_within(d, from, to);
		gap.split[c] = idle_within(d, gap.start, held_until) - gap.split[GAP_UVM_BOUND];
	}
	for (int c = 0; c < GAP_CLASSES; c++)
		total += gap.split[c];
	if (!total)
		return; /* work of no user job filled it */
	for (int c = 0; c < GAP_CLASSES; c++)
		d->out.idle[c] += gap.split[c];
	d->out.gaps++;
	t = thread_of(g, next->tid, next->pid);
	if (t)
		for (int c = 0; c < GAP_CLASSES; c++)
			t->ns[c] += gap.split[c];
	keep_longest(g, &d->out, &gap);
}

/*
 * Work that is no user job (busy.job_id 0) keeps the device busy inside the
 * program's span, but does not stretch it: before the first job it is left
 * out, and after the latest one it stays pending until a job follows (the
 * calibration at exit is not the program's idle time).
 */
static void merge_anonymous(struct idle_gaps *g, struct device_state *d, const struct busy *b)
{
	uint64_t from = b->start > d->cur_end ? b->start : d->cur_end;

	if (!d->started)
		return;
	d->judged = b->start;
	if (b->end <= d->cur_end)
		return;
	d->pending_busy += b->end - from;
	d->cur_end = b->end;
	if (grt_grow_array((void **)&d->anon, &d->cap_anon, sizeof(*d->anon), d->n_anon + 1)) {
		g->alloc_failures++;
		return;
	}
	d->anon[d->n_anon++] = (struct span){ from, b->end };
}

/* Keeps the anonymous work after user_end (it may outlast the job that moved user_end). */
static void trim_anonymous(struct device_state *d)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < d->n_anon; i++) {
		if (d->anon[i].end <= d->user_end)
			continue;
		d->anon[kept] = d->anon[i];
		if (d->anon[kept].start < d->user_end)
			d->anon[kept].start = d->user_end;
		kept++;
	}
	d->n_anon = kept;
}

static void merge(struct idle_gaps *g, struct device_state *d, const struct busy *b)
{
	if (!b->job_id) {
		merge_anonymous(g, d, b);
		return;
	}
	d->out.busy += d->pending_busy;
	d->pending_busy = 0;
	if (!d->started) {
		d->started = true;
		d->out.first_start = b->start;
		d->cur_end = d->user_end = b->start;
	} else if (b->start > d->user_end) {
		judge_gap(g, d, b);
	}
	if (b->end > d->cur_end) {
		d->out.busy += b->end - (b->start > d->cur_end ? b->start : d->cur_end);
		d->cur_end = b->end;
	}
	if (b->end > d->user_end)
		d->user_end = b->end;
	trim_anonymous(d);
	if (d->cur_end > d->out.last_end)
		d->out.last_end = d->cur_end;
	d->judged = b->start;
}

static void add_busy(struct idle_gaps *g, uint32_t device, const struct busy *b)
{
	struct device_state *d = device_get(g, device);

	if (!d)
		return;
	if (d->started && b->start < d->judged) {
		/* its time was judged already: count its busy part, note it */
		d->out.late_jobs += b->job_id != 0;
		merge(g, d, &(struct busy){ .start = d->judged, .end = b->end > d->judged ? b->end : d->judged,
					    .job_id = b->job_id });
		return;
	}
	if (b->start < g->frontier)
		merge(g, d, b);
	else
		heap_push(g, d, b);
}

void idle_gaps_job(struct idle_gaps *g, const struct job *j)
{
	struct busy b;

	if (!(j->known & JOB_K_EXEC) || !j->start)
		return;
	b = (struct busy){ .start = j->start, .end = j->end, .job_id = j->id, .pid = j->pid,
			   .tid = j->tid };
	b.submit = (j->flags & JOB_F_SYNC_CALL) ? j->api_enter : (j->submit ? j->submit : j->api_enter);
	add_busy(g, j->device, &b);
}

void idle_gaps_busy(struct idle_gaps *g, uint32_t device, uint64_t start, uint64_t end)
{
	if (start && end >= start)
		add_busy(g, device, &(struct busy){ .start = start, .end = end });
}

void idle_gaps_advance(struct idle_gaps *g, uint64_t frontier)
{
	g->frontier = frontier;
	for (uint32_t i = 0; i < g->n_devs; i++) {
		struct device_state *d = &g->devs[i];

		while (d->heap_len && d->heap[0].start <= frontier) {
			struct busy b = heap_pop(d);

			merge(g, d, &b);
		}
	}
}

uint64_t idle_gaps_alloc_failures(const struct idle_gaps *g)
{
	return g->alloc_failures + uvm_activity_alloc_failures(g->uvm);
}

uint32_t idle_gaps_devices(const struct idle_gaps *g)
{
	return g->n_devs;
}

const struct device_idle *idle_gaps_device(const struct idle_gaps *g, uint32_t i)
{
	return i < g->n_devs ? &g->devs[i].out : NULL;
}

uint64_t idle_gaps_top_thread(const struct idle_gaps *g, enum gap_class cls, uint32_t *tid,
			      uint32_t *pid)
{
	uint64_t best = 0, k, v;

	*tid = *pid = 0;
	for (size_t i = 0; u64_map_iter(&g->threads, &i, &k, &v);) {
		const struct thread_idle *t = (const struct thread_idle *)(uintptr_t)v;

		if (t->ns[cls] > best || (t->ns[cls] == best && best && t->tid < *tid)) {
			best = t->ns[cls];
			*tid = t->tid;
			*pid = t->pid;
		}
	}
	return best;
}

uint64_t idle_gaps_total(const struct idle_gaps *g, enum gap_class cls)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < g->n_devs; i++)
		total += g->devs[i].out.idle[cls];
	return total;
}
