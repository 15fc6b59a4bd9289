/* Matching device records (START/END) to the host calls they time: by identity, else by time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/builder_internal.h"
#include "common/grow_array.h"
#include "trace/records_gpu.h"

/*
 * A device record of trace format 1.1 names its host call: the thread that
 * made it and the bracket [enter, return] the injected library stamped
 * around the driver call it forwarded. Calls on one thread do not overlap, so
 * the one job of that thread entered inside the bracket is the match, found
 * without any window of time (identity_find). The record may come before the
 * call's own cuda record (each side drains on its own tick): it then waits
 * on the thread (an orphan) until that call opens its job.
 *
 * Records without a bracket (older traces) fall back to the untimed call of
 * the same kind on the record's stream with the nearest API entry time within
 * NEAR_NS, or to stream order when they carry no API entry time either; the
 * report counts both. A record nothing claims within twice the late window
 * becomes no job: its execution still keeps the device busy (jb_busy).
 */

#define NEAR_NS 20000	/* how far a device record's API entry time may be from its call's */
#define MAX_ORPHANS 65536
#define RECENT_TIMED 65536

static bool kind_fits(const struct bjob *j, uint32_t kind)
{
	if (kind == JOB_GRAPH)
		return j->job.kind == JOB_GRAPH;
	if (kind == JOB_KERNEL)
		return j->job.kind == JOB_KERNEL;
	return j->job.kind == JOB_MEMCPY || j->job.kind == JOB_MEMSET;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/*
 * Counts how a device record was matched, in the application's notes or,
 * for grtrace's own records (calibration and collection calls carry no call
 * bracket), only in own_device_records: they are no application record that
 * failed to match by identity.
 */
static void count_match(struct job_builder *b, const struct graph_node *dev, uint64_t *stat)
{
	if (!dev->own)
		(*stat)++;
}

static void attach(struct job_builder *b, struct bjob *j, const struct graph_node *dev,
		   bool by_order)
{
	struct jstream *s = j->stream;

	if (dev->own)
		j->job.flags |= JOB_F_OWN;
	if (j->job.kind == JOB_GRAPH) {
		if (grt_grow_array((void **)&j->nodes, &j->cap_nodes, sizeof(*j->nodes), j->n_nodes + 1)) {
			b->stats.alloc_failures++;
			return;
		}
		j->nodes[j->n_nodes++] = *dev;
		if (!j->job.start || dev->start < j->job.start)
			j->job.start = dev->start;
		if (dev->end > j->job.end)
			j->job.end = dev->end;
	} else if (j->has_device) {
		/* CUPTI and the block probes may both time one launch: the probes win */
		if (!dev->probe || (j->job.flags & JOB_F_PROBE)) {
			b->stats.device_duplicates++;
			return;
		}
		j->job.start = dev->start;
		j->job.end = dev->end;
		j->job.flags |= JOB_F_PROBE;
	} else {
		j->job.start = dev->start;
		j->job.end = dev->end;
		if (dev->device != JOB_NO_DEVICE)
			j->job.device = dev->device;
		if (dev->probe)
			j->job.flags |= JOB_F_PROBE;
		if ((j->job.kernel_key & HANDLE_KEY) && !(dev->kernel_key & HANDLE_KEY)) {
			j->job.kernel_key = dev->kernel_key;
			j->job.name = dev->name;
		}
	}
	if (dev->device != JOB_NO_DEVICE && j->job.device == JOB_NO_DEVICE)
		j->job.device = dev->device;
	if (by_order) {
		j->job.flags |= JOB_F_BY_ORDER;
		count_match(b, dev, &b->stats.device_by_order);
	}
	j->has_device = true;
	if (j->job.kind != JOB_GRAPH)
		jb_untimed_remove(s, j);
	if (j->cover > s->max_device_cover)
		s->max_device_cover = j->cover;
	jb_want_check(b, s);
	jb_settle_deps(b, j);
}

/* ---- by identity: the thread and the bracket of the call ---- */

/* The open job of thread t entered inside the bracket, of a fitting kind; NULL when none. */
static struct bjob *identity_find(struct jthread *t, const struct call_bracket *c, uint32_t kind)
{
	struct bjob *j = t->cursor ? t->cursor : t->open_tail;

	/* device records of a thread come nearly in call order: start where the last one matched */
	while (j && j->t_next && j->t_next->job.api_enter <= c->ret)
		j = j->t_next;
	while (j && j->job.api_enter > c->ret)
		j = j->t_prev;
	for (; j && j->job.api_enter >= c->enter; j = j->t_prev) {
		if (kind_fits(j, kind)) {
			t->cursor = j;
			return j;
		}
	}
	return NULL;
}

enum done_match { DONE_NONE, DONE_TIMED, DONE_UNTIMED };

/* Whether the call the bracket names finished already, and whether it had its device timing. */
static enum done_match identity_done(const struct jthread *t, const struct call_bracket *c,
				     uint32_t kind)
{
	uint32_t n = t->n_done < DONE_RING ? t->n_done : DONE_RING;

	for (uint32_t i = 0; i < n; i++) {
		const struct done_ref *d = &t->done[(t->n_done - 1 - i) % DONE_RING];

		if (d->api_enter < c->enter || d->api_enter > c->ret)
			continue;
		if (kind == JOB_GRAPH || d->kind == JOB_GRAPH)
			return DONE_UNTIMED; /* a graph's node after its launch's job was handed out */
		return d->had_device ? DONE_TIMED : DONE_UNTIMED;
	}
	return DONE_NONE;
}

/* ---- by time: records without a bracket (older traces) ---- */

/* The streams a device record may belong to: its handle, and a thread's own default stream. */
static uint32_t device_streams(struct job_builder *b, uint32_t pid, uint32_t tid, uint64_t stream,
			       struct jstream *out[2])
{
	uint32_t n = 0;

	out[n] = jb_stream_find(b, pid, stream_key(stream, false, tid));
	n += out[n] != NULL;
	if (stream == 0) {
		out[n] = jb_stream_find(b, pid, PER_THREAD_KEY | tid);
		n += out[n] != NULL;
	}
	return n;
}

/* A call already timed by a record with this API entry time (CUPTI and probes, graph nodes). */
static struct bjob *timed_find(struct jstream *s, uint64_t dev_enter)
{
	for (uint32_t i = 0; i < TIMED_RING; i++) {
		const struct timed_ref *t = &s->timed[i];

		if (t->job && t->dev_enter == dev_enter && t->job->job.id == t->id && t->job->stream == s)
			return t->job;
	}
	return NULL;
}

static uint64_t recent_key(uint32_t pid, uint64_t dev_enter)
{
	return dev_enter ^ ((uint64_t)pid << 48) ^ ((uint64_t)pid * 0x9e3779b97f4a7c15ULL);
}

/* Bounded: the oldest key leaves when a new one comes past RECENT_TIMED. */
static void recent_add(struct job_builder *b, uint32_t pid, uint64_t dev_enter)
{
	uint64_t key = recent_key(pid, dev_enter), *slot;

	if (!b->recent_ring && !(b->recent_ring = calloc(RECENT_TIMED, sizeof(uint64_t)))) {
		b->stats.alloc_failures++;
		return;
	}
	slot = &b->recent_ring[b->n_recent++ % RECENT_TIMED];
	if (b->n_recent > RECENT_TIMED)
		u64_map_remove(&b->recent_timed, *slot, NULL);
	*slot = key;
	if (u64_map_put(&b->recent_timed, key, 1))
		b->stats.alloc_failures++;
}

static bool recent_has(const struct job_builder *b, uint32_t pid, uint64_t dev_enter)
{
	return u64_map_get(&b->recent_timed, recent_key(pid, dev_enter), NULL);
}

static void timed_remember(struct job_builder *b, struct jstream *s, struct bjob *j,
			   uint64_t dev_enter)
{
	j->dev_enter = dev_enter;
	s->timed[s->n_timed++ % TIMED_RING] = (struct timed_ref){ dev_enter, j->job.id, j };
	recent_add(b, j->job.pid, dev_enter);
}

/*
 * The untimed call of the stream nearest to the record's API entry time,
 * within NEAR_NS: equal when both sides read the same clock, a little apart
 * when the device side reads its own around the call.
 */
static struct bjob *untimed_find(struct jstream *s, uint64_t api_enter, uint32_t kind,
				 uint64_t *best_d)
{
	struct bjob *best = NULL;

	/* in API-entry order: calls long before are lost records, skipped */
	for (struct bjob *j = s->untimed_head; j; j = j->u_next) {
		uint64_t d = distance(j->job.api_enter, api_enter);

		if (j->job.api_enter + NEAR_NS < api_enter)
			continue;
		if (j->job.api_enter > api_enter + NEAR_NS)
			break;
		if (kind_fits(j, kind) && d < *best_d) {
			*best_d = d;
			best = j;
		}
	}
	return best;
}

static void matched_by_time(struct job_builder *b, struct bjob *j, const struct graph_node *dev,
			    uint64_t api_enter, uint64_t d)
{
	if (d) {
		j->job.flags |= JOB_F_NEAR;
		count_match(b, dev, &b->stats.device_near);
	}
	if (!j->dev_enter)
		timed_remember(b, j->stream, j, api_enter);
	attach(b, j, dev, false);
}

/* ---- records that came before their call, and those nothing claims ---- */

/* No host call claimed it: not a job, but the device was busy with it. */
static void unmatched(struct job_builder *b, const struct orphan *o)
{
	if (o->dev.own)
		b->stats.own_device_unmatched++;
	else
		b->stats.device_unmatched++;
	jb_busy(b, o->pid, o->dev.device, o->dev.start, o->dev.end);
}

static void orphan_unlink(struct job_builder *b, struct orphan *o)
{
	b->n_orphans--;
	if (o->prev)
		o->prev->next = o->next;
	else
		b->orphans_head = o->next;
	if (o->next)
		o->next->prev = o->prev;
	else
		b->orphans_tail = o->prev;
	if (o->thread) {
		if (o->t_prev)
			o->t_prev->t_next = o->t_next;
		else
			o->thread->orphans = o->t_next;
		if (o->t_next)
			o->t_next->t_prev = o->t_prev;
	} else {
		b->n_orphans_by_time--;
	}
}

static void orphan_drop(struct job_builder *b, struct orphan *o, bool claimed)
{
	orphan_unlink(b, o);
	if (!claimed)
		unmatched(b, o);
	free(o);
}

static void orphan_add(struct job_builder *b, const struct orphan *from)
{
	struct orphan *o = malloc(sizeof(*o));

	if (!o) {
		b->stats.alloc_failures++;
		unmatched(b, from);
		return;
	}
	*o = *from;
	o->arrived = b->now;
	o->next = NULL;
	o->prev = b->orphans_tail;
	if (b->orphans_tail)
		b->orphans_tail->next = o;
	else
		b->orphans_head = o;
	b->orphans_tail = o;
	b->n_orphans++;
	if (o->thread) {
		o->t_prev = NULL;
		o->t_next = o->thread->orphans;
		if (o->t_next)
			o->t_next->t_prev = o;
		o->thread->orphans = o;
	} else {
		b->n_orphans_by_time++;
	}
	if (b->n_orphans > MAX_ORPHANS)
		orphan_drop(b, b->orphans_head, false);
}

static bool orphan_fits_by_time(const struct orphan *o, const struct bjob *j)
{
	uint64_t key = j->stream->key;

	return o->pid == j->job.pid && distance(o->call.enter, j->job.api_enter) <= NEAR_NS &&
	       (stream_key(o->stream, false, o->tid) == key ||
		(o->stream == 0 && key == (PER_THREAD_KEY | o->tid))) &&
	       kind_fits(j, o->graph_id ? JOB_GRAPH : o->kind);
}

static void claim_by_time(struct job_builder *b, struct bjob *j)
{
	struct orphan *o, *next, *best = NULL;
	uint64_t best_d = NEAR_NS + 1, enter;

	for (o = b->orphans_head; o; o = o->next)
		if (!o->thread && orphan_fits_by_time(o, j) &&
		    distance(o->call.enter, j->job.api_enter) < best_d) {
			best = o;
			best_d = distance(o->call.enter, j->job.api_enter);
		}
	if (!best)
		return;
	enter = best->call.enter;
	for (o = b->orphans_head; o; o = next) {
		next = o->next;
		if (o->thread || o->call.enter != enter || !orphan_fits_by_time(o, j))
			continue;
		matched_by_time(b, j, &o->dev, enter, best_d);
		orphan_drop(b, o, true);
	}
}

/* A new host call takes the device records that came before it (a launch's CUPTI and probe twins). */
void jb_claim_orphans(struct job_builder *b, struct bjob *j)
{
	struct orphan *o, *next;

	for (o = j->thread ? j->thread->orphans : NULL; o; o = next) {
		next = o->t_next;
		if (o->pid != j->job.pid || j->job.api_enter < o->call.enter ||
		    j->job.api_enter > o->call.ret || !kind_fits(j, o->graph_id ? JOB_GRAPH : o->kind))
			continue;
		count_match(b, &o->dev, &b->stats.device_by_identity);
		attach(b, j, &o->dev, false);
		orphan_drop(b, o, true);
	}
	if (b->n_orphans_by_time)
		claim_by_time(b, j);
}

void jb_expire_orphans(struct job_builder *b, bool all)
{
	while (b->orphans_head &&
	       (all || b->orphans_head->arrived + 2 * b->t.late_window_ns < b->now))
		orphan_drop(b, b->orphans_head, false);
}

/* ---- one device record ---- */

static void note_device(struct job_builder *b, uint32_t pid, uint32_t device,
			const struct call_bracket *call)
{
	struct jproc *p = jb_proc_get(b, pid);
	struct jthread *t = bracket_known(call) ? jb_thread_get(b, call->tid, pid) : NULL;

	if (t) {
		t->device_records++;
		if (call->enter > t->device_seen) {
			t->device_seen = call->enter;
			jb_device_progress(b, t);
		}
	}
	if (!p)
		return;
	p->device_records++;
	p->device_brackets |= t != NULL;
	if (device == JOB_NO_DEVICE)
		return;
	if (p->device == JOB_NO_DEVICE)
		p->device = device;
	else if (p->device != device)
		p->several_devices = true;
}

static bool match_by_identity(struct job_builder *b, const struct grt_record *rec,
			      const struct orphan *o)
{
	struct jthread *t = jb_thread_get(b, o->call.tid, rec->hdr.pid);
	uint32_t kind = o->graph_id ? JOB_GRAPH : o->kind;
	struct bjob *j;

	if (!t)
		return false;
	j = identity_find(t, &o->call, kind);
	if (j) {
		count_match(b, &o->dev, &b->stats.device_by_identity);
		attach(b, j, &o->dev, false);
		return true;
	}
	switch (identity_done(t, &o->call, kind)) {
	case DONE_TIMED:
		b->stats.device_duplicates++; /* the twin of a call timed already */
		return true;
	case DONE_UNTIMED:
		count_match(b, &o->dev, &b->stats.device_late);
		jb_busy(b, o->pid, o->dev.device, o->dev.start, o->dev.end);
		return true;
	case DONE_NONE:
		break;
	}
	orphan_add(b, &(struct orphan){ .dev = o->dev, .call = o->call, .stream = o->stream,
					.graph_id = o->graph_id, .pid = o->pid, .tid = o->call.tid,
					.kind = o->kind, .thread = t });
	return true;
}

static void match_by_time(struct job_builder *b, const struct orphan *o)
{
	struct jstream *cand[2];
	uint32_t n = device_streams(b, o->pid, o->tid, o->stream, cand);
	uint32_t kind = o->graph_id ? JOB_GRAPH : o->kind;
	uint64_t best_d = NEAR_NS + 1, api_enter = o->call.enter;
	struct bjob *j, *best = NULL;

	if (api_enter) {
		for (uint32_t i = 0; i < n; i++) {
			j = timed_find(cand[i], api_enter);
			if (j && kind_fits(j, kind)) {
				attach(b, j, &o->dev, false);
				return;
			}
			j = untimed_find(cand[i], api_enter, kind, &best_d);
			if (j)
				best = j;
		}
		if (best) {
			matched_by_time(b, best, &o->dev, api_enter, best_d);
			return;
		}
		if (recent_has(b, o->pid, api_enter)) {
			/* the twin of a call whose job already finished with device timing */
			b->stats.device_duplicates++;
			return;
		}
		orphan_add(b, o);
		return;
	}
	if (kind != JOB_GRAPH) {
		/* no API entry time: the oldest untimed call of the same kind on the stream */
		for (uint32_t i = 0; i < n; i++)
			for (j = cand[i]->untimed_head; j; j = j->u_next)
				if (!j->has_device && kind_fits(j, kind)) {
					attach(b, j, &o->dev, true);
					return;
				}
	}
	unmatched(b, o);
}

static bool own_kernel(const struct graph_node *dev)
{
	return !(dev->kernel_key & (HANDLE_KEY | COPY_KEY)) && dev->name &&
	       !strncmp(dev->name, GRT_OWN_KERNEL_PREFIX, strlen(GRT_OWN_KERNEL_PREFIX));
}

static void on_device(struct job_builder *b, const struct grt_record *rec, struct orphan *o,
		      uint32_t flags)
{
	o->pid = rec->hdr.pid;
	o->dev.own = (flags & GRT_GPU_F_OWN) || own_kernel(&o->dev);
	if (o->dev.own)
		b->stats.own_device_records++;
	else
		b->stats.device_records++;
	note_device(b, o->pid, o->dev.device, &o->call);
	if (bracket_known(&o->call) && match_by_identity(b, rec, o))
		return;
	o->call.ret = 0;
	o->call.tid = 0;
	o->tid = rec->hdr.tid;
	match_by_time(b, o);
}

void jb_on_gpu_kernel(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_kernel_rec *k = rec->payload;
	struct orphan o = {
		.dev = { .start = k->start_ns, .end = k->end_ns, .device = k->device },
		.call = { .enter = k->api_enter_ns, .ret = k->api_return_ns, .tid = k->host_tid },
		.stream = k->stream, .graph_id = k->graph_id, .kind = JOB_KERNEL,
	};

	jb_kernel_identity(b, k->kernel_str, 0, &o.dev.kernel_key, &o.dev.name);
	on_device(b, rec, &o, k->flags);
}

void jb_on_gpu_launch(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_launch_rec *l = rec->payload;
	struct orphan o = {
		.dev = { .start = l->start_ns, .end = l->end_ns, .device = JOB_NO_DEVICE, .probe = 1 },
		.call = { .enter = l->api_enter_ns, .ret = l->api_return_ns, .tid = l->host_tid },
		.stream = l->stream, .kind = JOB_KERNEL,
	};

	jb_kernel_identity(b, l->kernel_str, 0, &o.dev.kernel_key, &o.dev.name);
	on_device(b, rec, &o, l->flags);
}

void jb_on_gpu_copy(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_copy_rec *c = rec->payload;
	uint32_t kind = c->kind == GRT_GPU_COPY_MEMSET ? JOB_MEMSET : JOB_MEMCPY;
	struct orphan o = {
		.dev = { .start = c->start_ns, .end = c->end_ns, .device = c->device },
		.call = { .enter = c->api_enter_ns, .ret = c->api_return_ns, .tid = c->host_tid },
		.stream = c->stream, .kind = kind,
	};

	jb_copy_identity(b, kind, kind == JOB_MEMSET ? 0 : c->kind, &o.dev.kernel_key, &o.dev.name);
	on_device(b, rec, &o, c->flags);
}
