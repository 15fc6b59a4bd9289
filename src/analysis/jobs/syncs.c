/* What a sync covers: completion marks per stream and context, events, waits. */
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/builder_internal.h"
#include "common/grow_array.h"
#include "trace/records_cuda.h"

static uint64_t marks_lookup(const struct cover_mark *marks, uint32_t n, uint64_t cover)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (marks[mid].cover < cover)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n ? marks[lo].complete : 0;
}

/* COMPLETE of a job submitted at cover: the first sync of its stream or context covering it. */
uint64_t jb_mark_lookup(const struct jstream *s, uint64_t cover)
{
	uint64_t own = marks_lookup(s->marks, s->n_marks, cover);
	uint64_t ctx = s->proc ? marks_lookup(s->proc->marks, s->proc->n_marks, cover) : 0;

	if (!own || (ctx && ctx < own))
		return ctx;
	return own;
}

#define CTX_MARKS_KEPT 64

/* Context syncs are kept per process, so they also cover streams seen after them. */
static void add_ctx_mark(struct job_builder *b, struct jproc *p, uint64_t cover, uint64_t complete)
{
	if (!p || (p->n_marks && p->marks[p->n_marks - 1].cover >= cover))
		return;
	if (p->n_marks == 2 * CTX_MARKS_KEPT) {
		memmove(p->marks, p->marks + CTX_MARKS_KEPT, CTX_MARKS_KEPT * sizeof(*p->marks));
		p->n_marks = CTX_MARKS_KEPT;
	}
	if (grt_grow_array((void **)&p->marks, &p->cap_marks, sizeof(*p->marks), p->n_marks + 1)) {
		b->stats.alloc_failures++;
		return;
	}
	p->marks[p->n_marks++] = (struct cover_mark){ cover, complete };
	for (struct jstream *s = p->streams; s; s = s->proc_next)
		jb_want_check(b, s);
}

static void add_mark(struct job_builder *b, struct jstream *s, uint64_t cover, uint64_t complete)
{
	if (!s)
		return;
	if (s->n_marks && s->marks[s->n_marks - 1].cover >= cover)
		return; /* an earlier sync already covers these jobs */
	if (grt_grow_array((void **)&s->marks, &s->cap_marks, sizeof(*s->marks), s->n_marks + 1)) {
		b->stats.alloc_failures++;
		return;
	}
	s->marks[s->n_marks++] = (struct cover_mark){ cover, complete };
	jb_want_check(b, s);
}

/* Marks below the head's cover can no longer apply; keep one for stragglers. */
void jb_prune_marks(struct jstream *s)
{
	uint32_t drop = 0;

	if (s->head) {
		while (drop < s->n_marks && s->marks[drop].cover < s->head->cover)
			drop++;
	} else if (s->n_marks > 1) {
		drop = s->n_marks - 1;
	}
	if (!drop)
		return;
	memmove(s->marks, s->marks + drop, (s->n_marks - drop) * sizeof(*s->marks));
	s->n_marks -= drop;
}

void jb_on_sync(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_sync_rec *y = rec->payload;
	bool returned = grt_cuda_call_returned(&y->call) && y->call.return_ns;
	bool ok = returned && y->call.ret == 0;
	bool own = y->call.flags & GRT_CUDA_F_OWN;
	bool per_thread = y->call.api < GRT_CUDA_API_COUNT && b->ptsz_api[y->call.api];
	uint32_t pid = rec->hdr.pid, tid = rec->hdr.tid;
	uint64_t skey = stream_key(y->stream, per_thread, tid), ts = rec->hdr.ts_ns;
	struct jthread *t = jb_thread_get(b, tid, pid);
	struct jevent *ev;
	struct jproc *p;

	if (t)
		t->last_submit = 0; /* a sync ends a batch */
	switch (y->kind) {
	case GRT_SYNC_CTX:
		b->stats.syncs++;
		p = jb_proc_get(b, pid);
		/* grtrace's own thread waiting is no application thread noticing its work done */
		if (ok && !own)
			add_ctx_mark(b, p, ts, y->call.return_ns);
		break;
	case GRT_SYNC_STREAM:
	case GRT_SYNC_STREAM_QUERY:
		b->stats.syncs += y->kind == GRT_SYNC_STREAM;
		if (ok)
			add_mark(b, jb_stream_get(b, pid, skey, y->stream), ts, y->call.return_ns);
		break;
	case GRT_SYNC_EVENT:
	case GRT_SYNC_EVENT_QUERY:
		b->stats.syncs += y->kind == GRT_SYNC_EVENT;
		ev = pid_key_map_get(&b->events, pid, y->event);
		if (!ev && y->kind == GRT_SYNC_EVENT)
			b->stats.unknown_event_syncs++;
		if (ev && ok)
			add_mark(b, ev->stream, ev->cover, y->call.return_ns);
		break;
	case GRT_SYNC_EVENT_RECORD:
		ev = pid_key_map_get(&b->events, pid, y->event);
		if (!ev) {
			ev = calloc(1, sizeof(*ev));
			if (!ev || pid_key_map_put(&b->events, pid, y->event, ev)) {
				free(ev);
				b->stats.alloc_failures++;
				return;
			}
		}
		ev->stream = jb_stream_get(b, pid, skey, y->stream);
		ev->cover = ts;
		return;
	case GRT_SYNC_STREAM_WAIT_EVENT: {
		struct jstream *s = jb_stream_get(b, pid, skey, y->stream);

		ev = pid_key_map_get(&b->events, pid, y->event);
		if (!s || !ev || !ev->stream || ev->stream == s)
			return;
		if (s->n_pending == JOB_MAX_DEPS) {
			b->stats.deps_dropped++;
			return;
		}
		s->pending[s->n_pending++] = (struct dep_ref){ ev->stream, ev->cover };
		return;
	}
	default:
		return;
	}
	/* blocking kinds: the thread waited for the GPU */
	if (returned && b->ops.host_wait && !own &&
	    (y->kind == GRT_SYNC_CTX || y->kind == GRT_SYNC_STREAM || y->kind == GRT_SYNC_EVENT))
		b->ops.host_wait(b->ctx, pid, tid, ts, y->call.return_ns);
}
