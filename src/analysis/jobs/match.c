/* Matching device records (START/END) to the host calls they time. */
#include <stdio.h>
#include <stdlib.h>
#include "analysis/jobs/builder_internal.h"
#include "common/grow_array.h"
#include "trace/records_gpu.h"

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
}

static void attach(struct job_builder *b, struct bjob *j, const struct graph_node *dev,
		   bool by_order)
{
	struct jstream *s = j->stream;

	if (j->job.kind == JOB_GRAPH) {
		if (grt_grow_array((void **)&j->nodes, &j->cap_nodes, sizeof(*j->nodes), j->n_nodes + 1))
			return;
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
		b->stats.device_by_order++;
	}
	j->has_device = true;
	if (j->job.kind != JOB_GRAPH)
		jb_untimed_remove(s, j);
	if (j->cover > s->max_device_cover)
		s->max_device_cover = j->cover;
	jb_want_check(b, s);
	jb_settle_deps(b, j);
}

/* A device record no host call claimed: a job of its own, known only on the GPU. */
static void emit_device_only(struct job_builder *b, const struct orphan *o)
{
	struct jstream *s = jb_stream_get(b, o->pid, stream_key(o->stream, false, o->tid), o->stream);
	struct job j = { 0 };

	b->stats.device_orphans++;
	j.id = ++b->next_id;
	j.pid = o->pid;
	j.tid = o->tid;
	j.kind = (uint16_t)o->kind;
	j.stream = o->stream;
	j.stream_index = s ? s->index : 0;
	j.api_enter = o->api_enter;
	j.start = o->dev.start;
	j.end = o->dev.end;
	j.device = o->dev.device;
	j.kernel_key = o->dev.kernel_key;
	j.name = o->dev.name;
	j.missing = JOB_MISS_HOST | JOB_MISS_SUBMIT | JOB_MISS_COMPLETE;
	if (o->dev.probe)
		j.flags |= JOB_F_PROBE;
	jb_uvm_window(jb_proc_get(b, o->pid), &j);
	jb_derive(&j, 0, DEP_NONE);
	jb_emit(b, &j);
}

#define NEAR_NS 20000	/* how far a device record's API entry time may be from its call's */
#define MAX_ORPHANS 65536

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

#define RECENT_TIMED 65536

static uint64_t recent_key(uint32_t pid, uint64_t dev_enter)
{
	return dev_enter ^ ((uint64_t)pid << 48) ^ ((uint64_t)pid * 0x9e3779b97f4a7c15ULL);
}

/* Bounded: the oldest key leaves when a new one comes past RECENT_TIMED. */
static void recent_add(struct job_builder *b, uint32_t pid, uint64_t dev_enter)
{
	uint64_t key = recent_key(pid, dev_enter), *slot;

	if (!b->recent_ring && !(b->recent_ring = calloc(RECENT_TIMED, sizeof(uint64_t))))
		return;
	slot = &b->recent_ring[b->n_recent++ % RECENT_TIMED];
	if (b->n_recent > RECENT_TIMED)
		u64_map_remove(&b->recent_timed, *slot, NULL);
	*slot = key;
	u64_map_put(&b->recent_timed, key, 1);
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

static void matched(struct job_builder *b, struct bjob *j, const struct graph_node *dev,
		    uint64_t api_enter, uint64_t d)
{
	if (d) {
		j->job.flags |= JOB_F_NEAR;
		b->stats.device_near++;
	}
	if (!j->dev_enter)
		timed_remember(b, j->stream, j, api_enter);
	attach(b, j, dev, false);
}

static void orphan_add(struct job_builder *b, const struct grt_record *rec,
		       const struct graph_node *dev, uint64_t api_enter, uint64_t stream,
		       uint64_t graph_id, uint32_t kind)
{
	struct orphan *o = calloc(1, sizeof(*o));

	if (!o)
		return;
	*o = (struct orphan){ .dev = *dev, .api_enter = api_enter, .stream = stream,
			      .graph_id = graph_id, .arrived = b->now, .pid = rec->hdr.pid,
			      .tid = rec->hdr.tid, .kind = kind };
	if (!api_enter) {
		emit_device_only(b, o);
		free(o);
		return;
	}
	o->prev = b->orphans_tail;
	if (b->orphans_tail)
		b->orphans_tail->next = o;
	else
		b->orphans_head = o;
	b->orphans_tail = o;
	if (++b->n_orphans > MAX_ORPHANS) {
		struct orphan *old = b->orphans_head;

		orphan_unlink(b, old);
		emit_device_only(b, old);
		free(old);
	}
}

static bool orphan_fits(const struct orphan *o, const struct bjob *j)
{
	uint64_t key = j->stream->key;

	return o->pid == j->job.pid && distance(o->api_enter, j->job.api_enter) <= NEAR_NS &&
	       (stream_key(o->stream, false, o->tid) == key ||
		(o->stream == 0 && key == (PER_THREAD_KEY | o->tid))) &&
	       kind_fits(j, o->graph_id ? JOB_GRAPH : o->kind);
}

/* A new host call takes the device records that came before it: the nearest, and its twins. */
void jb_claim_orphans(struct job_builder *b, struct bjob *j)
{
	struct orphan *o, *next, *best = NULL;
	uint64_t best_d = NEAR_NS + 1, enter;

	for (o = b->orphans_head; o; o = o->next)
		if (orphan_fits(o, j) && distance(o->api_enter, j->job.api_enter) < best_d) {
			best = o;
			best_d = distance(o->api_enter, j->job.api_enter);
		}
	if (!best)
		return;
	enter = best->api_enter;
	for (o = b->orphans_head; o; o = next) {
		next = o->next;
		if (o->api_enter != enter || !orphan_fits(o, j))
			continue;
		matched(b, j, &o->dev, enter, best_d);
		orphan_unlink(b, o);
		free(o);
	}
}

void jb_expire_orphans(struct job_builder *b, bool all)
{
	while (b->orphans_head &&
	       (all || b->orphans_head->arrived + 2 * b->t.late_window_ns < b->now)) {
		struct orphan *o = b->orphans_head;

		orphan_unlink(b, o);
		emit_device_only(b, o);
		free(o);
	}
}

static void on_device(struct job_builder *b, const struct grt_record *rec,
		      const struct graph_node *dev, uint64_t api_enter, uint64_t stream,
		      uint64_t graph_id, uint32_t kind)
{
	struct jstream *cand[2];
	uint32_t n = device_streams(b, rec->hdr.pid, rec->hdr.tid, stream, cand);
	uint64_t best_d = NEAR_NS + 1;
	struct bjob *j, *best = NULL;

	b->stats.device_records++;
	if (graph_id)
		kind = JOB_GRAPH;
	if (api_enter) {
		for (uint32_t i = 0; i < n; i++) {
			j = timed_find(cand[i], api_enter);
			if (j && kind_fits(j, kind)) {
				attach(b, j, dev, false);
				return;
			}
			j = untimed_find(cand[i], api_enter, kind, &best_d);
			if (j)
				best = j;
		}
		if (best) {
			matched(b, best, dev, api_enter, best_d);
			return;
		}
	} else if (kind != JOB_GRAPH) {
		/* no API entry time: the oldest untimed call of the same kind on the stream */
		for (uint32_t i = 0; i < n; i++)
			for (j = cand[i]->untimed_head; j; j = j->u_next)
				if (!j->has_device && kind_fits(j, kind)) {
					attach(b, j, dev, true);
					return;
				}
	}
	if (api_enter && recent_has(b, rec->hdr.pid, api_enter)) {
		/* the twin of a call whose job already finished with device timing */
		b->stats.device_duplicates++;
		return;
	}
	orphan_add(b, rec, dev, api_enter, stream, graph_id, kind);
}

void jb_on_gpu_kernel(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_kernel_rec *k = rec->payload;
	struct graph_node dev = { .start = k->start_ns, .end = k->end_ns, .device = k->device };

	jb_kernel_identity(b, k->kernel_str, 0, &dev.kernel_key, &dev.name);
	on_device(b, rec, &dev, k->api_enter_ns, k->stream, k->graph_id, JOB_KERNEL);
}

void jb_on_gpu_launch(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_launch_rec *l = rec->payload;
	struct graph_node dev = { .start = l->start_ns, .end = l->end_ns, .device = JOB_NO_DEVICE,
				  .probe = 1 };

	jb_kernel_identity(b, l->kernel_str, 0, &dev.kernel_key, &dev.name);
	on_device(b, rec, &dev, l->api_enter_ns, l->stream, 0, JOB_KERNEL);
}

void jb_on_gpu_copy(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_copy_rec *c = rec->payload;
	uint32_t kind = c->kind == GRT_GPU_COPY_MEMSET ? JOB_MEMSET : JOB_MEMCPY;
	struct graph_node dev = { .start = c->start_ns, .end = c->end_ns, .device = c->device };

	jb_copy_identity(b, kind, kind == JOB_MEMSET ? 0 : c->kind, &dev.kernel_key, &dev.name);
	on_device(b, rec, &dev, c->api_enter_ns, c->stream, 0, kind);
}
