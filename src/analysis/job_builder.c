/* Job builder: host calls become jobs, device records give START/END, syncs give COMPLETE. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/job_builder.h"
#include "analysis/pid_key_map.h"
#include "common/grow_array.h"
#include "common/min_heap.h"
#include "common/u64_map.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"
#include "trace/records_kernel.h"
#include "trace/records_uvm.h"
#include "trace/trace_names.h"

#define JOB_MAX_DEPS 4
#define OFFCPU_RING 32		/* recent off-CPU intervals kept per thread */
#define END_RING 64		/* recent finished jobs kept per stream, for event dependencies */
#define UVM_MAX_EVENTS (1u << 20)
#define ADVANCE_EVERY 1024	/* records between frontier updates */
#define POOL_CHUNK 1024

#define CU_STREAM_LEGACY 0x1ull
#define CU_STREAM_PER_THREAD 0x2ull
#define PER_THREAD_KEY (1ull << 63) /* stream key of a thread's per-thread default stream */
#define COPY_KEY (1ull << 62)	    /* kernel_key of copies: one pseudo-kernel per direction */
#define HANDLE_KEY (1ull << 61)	    /* kernel_key of kernels known only by handle */

struct jstream;
struct jthread;

struct graph_node {
	uint64_t start;
	uint64_t end;
	uint64_t kernel_key;
	const char *name;
	uint32_t device;
	uint32_t probe;
};

struct bjob;

enum dep_state { DEP_NONE, DEP_READY, DEP_UNKNOWN, DEP_PENDING };

struct dep_ref {
	struct jstream *stream;	/* where the event was recorded */
	uint64_t cover;		/* jobs of that stream submitted up to here */
	struct bjob *producer;	/* while DEP_PENDING: the job whose END this waits for */
	uint64_t ready;		/* DEP_READY: that END */
	uint32_t state;		/* enum dep_state */
};

/* A job of another stream waiting for this one's END. */
struct dependent {
	struct bjob *job;
	uint32_t dep;		/* index in job->deps */
};

/* An open job and what the builder needs to finish it. */
struct bjob {
	struct job job;
	struct bjob *next;	/* stream queue, by cover */
	struct bjob *prev;
	uint64_t dev_enter;	/* the API entry time its device records carry */
	struct bjob *u_next;	/* the stream's untimed jobs, by API entry */
	struct bjob *u_prev;
	bool in_untimed;
	struct jstream *stream;
	struct jthread *thread;
	struct graph_node *nodes;
	uint32_t n_nodes;
	uint32_t cap_nodes;
	struct dep_ref deps[JOB_MAX_DEPS];
	uint32_t n_deps;
	struct dependent *dependents;
	uint32_t n_dependents;
	uint32_t cap_dependents;
	uint64_t cover;		/* SUBMIT, or API_ENTER when there is none: what syncs compare */
	bool has_device;
};

struct cover_mark {
	uint64_t cover;		/* a sync covered jobs submitted up to here */
	uint64_t complete;	/* ... and returned then */
};

struct end_entry {
	uint64_t cover;
	uint64_t end;		/* 0 when the job had no device timing */
};

#define TIMED_RING 16

struct timed_ref {
	uint64_t dev_enter;
	uint64_t id;		/* the job's id when remembered: a finished job's slot is reused */
	struct bjob *job;
};

struct jstream {
	struct jproc *proc;
	uint32_t pid;
	uint32_t index;
	uint64_t key;
	uint64_t handle;
	struct bjob *head;
	struct bjob *tail;
	struct bjob *untimed_head; /* jobs still without device timing (graphs: until finished) */
	struct bjob *untimed_tail;
	struct cover_mark *marks;
	uint32_t n_marks;
	uint32_t cap_marks;
	uint64_t max_device_cover; /* cover of the latest job that got device timing */
	uint64_t last_end;	   /* END of the last finished job */
	struct end_entry ends[END_RING];
	uint64_t n_ends;
	struct dep_ref pending[JOB_MAX_DEPS]; /* waits for the next job */
	uint32_t n_pending;
	struct timed_ref timed[TIMED_RING]; /* recently timed calls, by their device API entry time */
	uint32_t n_timed;
	struct jstream *proc_next;
	struct jstream *all_next;
	bool in_heap;
	bool in_checks;
};

struct offcpu {
	uint64_t off;
	uint64_t on;
};

struct jthread {
	uint32_t tid;
	uint32_t pid;
	char *comm;
	struct offcpu ring[OFFCPU_RING];
	uint32_t n_ring;
	struct bjob *last_job;
	struct jstream *last_stream;
	uint64_t last_submit;
	uint64_t batch_id;
};

struct uvm_ev {
	uint64_t ts;
	uint64_t end;
};

struct jproc {
	uint32_t pid;
	uint32_t n_streams;
	struct cover_mark *marks; /* context syncs: they cover every stream of the process */
	uint32_t n_marks;
	uint32_t cap_marks;
	char *comm;
	struct jstream *streams;
	struct uvm_ev *uvm;	/* ring, sorted by ts */
	uint32_t uvm_head;
	uint32_t uvm_len;
	uint32_t uvm_cap;
	uint64_t uvm_max_span;
};

struct jevent {
	struct jstream *stream;
	uint64_t cover;
};

struct orphan {
	struct graph_node dev;	/* the device record */
	uint64_t api_enter;
	uint64_t stream;
	uint64_t graph_id;
	uint64_t arrived;	/* builder's clock when it came */
	uint32_t pid;
	uint32_t tid;
	uint32_t kind;		/* JOB_KERNEL, JOB_MEMCPY, JOB_MEMSET */
	struct orphan *next;	/* arrival order */
	struct orphan *prev;
};

struct heap_entry {
	uint64_t deadline;
	struct jstream *stream;
};

struct job_builder {
	struct job_thresholds t;
	struct job_builder_ops ops;
	void *ctx;
	bool expect_device;
	uint64_t now;		/* latest host timestamp seen */
	uint64_t next_id;
	uint64_t opened_id;	/* the job the current record opened, 0 when none */
	uint64_t records;
	uint64_t open;
	struct job_builder_stats stats;
	struct pid_key_map streams;
	struct pid_key_map events;
	struct orphan *orphans_head;
	struct orphan *orphans_tail;
	uint32_t n_orphans;
	struct u64_map threads;	/* tid -> struct jthread * */
	struct u64_map procs;	/* pid -> struct jproc * */
	struct u64_map names;	/* kernel_key -> char * */
	/*
	 * Device API entry times of calls that got device timing, the last
	 * RECENT_TIMED of them: a twin record (CUPTI and block probe of one
	 * launch) drained after its job finished is recognised, not orphaned.
	 */
	struct u64_map recent_timed;	/* key of (pid, dev_enter) -> 1 */
	uint64_t *recent_ring;
	uint64_t n_recent;
	struct jstream *all_streams;
	struct heap_entry *heap;
	uint32_t heap_len;
	uint32_t heap_cap;
	struct jstream **checks;
	uint32_t n_checks;
	uint32_t cap_checks;
	struct bjob *pool;	/* free jobs */
	void **chunks;
	uint32_t n_chunks;
	uint32_t cap_chunks;
	bool ptsz_api[GRT_CUDA_API_COUNT];
	const struct grt_strings *strings;
};

/* ---- small containers ---- */

static void heap_push(struct job_builder *b, uint64_t deadline, struct jstream *s)
{
	if (grt_grow_array((void **)&b->heap, &b->heap_cap, sizeof(*b->heap), b->heap_len + 1))
		return; /* the stream is found again by the next check or at finish */
	b->heap[b->heap_len++] = (struct heap_entry){ deadline, s };
	s->in_heap = true;
	grt_min_heap_up(b->heap, b->heap_len, sizeof(*b->heap),
			offsetof(struct heap_entry, deadline));
}

static struct jstream *heap_pop(struct job_builder *b)
{
	struct heap_entry top;

	grt_min_heap_pop(b->heap, &b->heap_len, sizeof(*b->heap),
			 offsetof(struct heap_entry, deadline), &top);
	top.stream->in_heap = false;
	return top.stream;
}

static void want_check(struct job_builder *b, struct jstream *s)
{
	if (s->in_checks || !s->head)
		return;
	if (grt_grow_array((void **)&b->checks, &b->cap_checks, sizeof(*b->checks), b->n_checks + 1))
		return;
	b->checks[b->n_checks++] = s;
	s->in_checks = true;
}

static struct bjob *job_alloc(struct job_builder *b)
{
	struct bjob *j;

	if (!b->pool) {
		struct bjob *chunk = malloc(POOL_CHUNK * sizeof(*chunk));

		if (!chunk ||
		    grt_grow_array((void **)&b->chunks, &b->cap_chunks, sizeof(void *),
			       b->n_chunks + 1)) {
			free(chunk);
			return NULL;
		}
		b->chunks[b->n_chunks++] = chunk;
		for (int i = 0; i < POOL_CHUNK; i++) {
			chunk[i].next = b->pool;
			b->pool = &chunk[i];
		}
	}
	j = b->pool;
	b->pool = j->next;
	memset(j, 0, sizeof(*j));
	j->job.device = JOB_NO_DEVICE;
	return j;
}

static void job_release(struct job_builder *b, struct bjob *j)
{
	free(j->nodes);
	free(j->dependents);
	j->job.id = 0; /* stale references (timed_ref) see it is gone */
	j->next = b->pool;
	b->pool = j;
}

/* ---- processes, threads, streams, names ---- */

static void set_name(char **slot, const char *name)
{
	char *copy;

	if (!name || (*slot && !strcmp(*slot, name)))
		return;
	copy = strdup(name);
	if (copy) {
		free(*slot);
		*slot = copy;
	}
}

static struct jproc *proc_get(struct job_builder *b, uint32_t pid)
{
	struct jproc *p;
	uint64_t v;

	if (u64_map_get(&b->procs, pid, &v))
		return (struct jproc *)(uintptr_t)v;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (u64_map_put(&b->procs, pid, (uintptr_t)p)) {
		free(p);
		return NULL;
	}
	return p;
}

static struct jthread *thread_get(struct job_builder *b, uint32_t tid, uint32_t pid)
{
	struct jthread *t;
	uint64_t v;

	if (u64_map_get(&b->threads, tid, &v))
		return (struct jthread *)(uintptr_t)v;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = pid;
	if (u64_map_put(&b->threads, tid, (uintptr_t)t)) {
		free(t);
		return NULL;
	}
	return t;
}

/* Legacy and per-thread default streams have several spellings; one key each. */
static uint64_t stream_key(uint64_t handle, bool per_thread_api, uint32_t tid)
{
	if (handle == CU_STREAM_LEGACY)
		return 0;
	if (handle == CU_STREAM_PER_THREAD || (handle == 0 && per_thread_api))
		return PER_THREAD_KEY | tid;
	return handle;
}

static struct jstream *stream_find(struct job_builder *b, uint32_t pid, uint64_t key)
{
	return pid_key_map_get(&b->streams, pid, key);
}

static struct jstream *stream_get(struct job_builder *b, uint32_t pid, uint64_t key,
				  uint64_t handle)
{
	struct jstream *s = stream_find(b, pid, key);
	struct jproc *p;

	if (s)
		return s;
	p = proc_get(b, pid);
	s = calloc(1, sizeof(*s));
	if (!p || !s || pid_key_map_put(&b->streams, pid, key, s)) {
		free(s);
		return NULL;
	}
	s->proc = p;
	s->pid = pid;
	s->key = key;
	s->handle = handle;
	s->index = p->n_streams++;
	s->proc_next = p->streams;
	p->streams = s;
	s->all_next = b->all_streams;
	b->all_streams = s;
	return s;
}

/* Kernel names live as long as the builder; jobs point at them. */
static const char *name_of(struct job_builder *b, uint64_t key, const char *fallback)
{
	uint64_t v;
	char *copy;

	if (u64_map_get(&b->names, key, &v))
		return (const char *)(uintptr_t)v;
	copy = strdup(fallback);
	if (!copy || u64_map_put(&b->names, key, (uintptr_t)copy)) {
		free(copy);
		return "?";
	}
	return copy;
}

static void kernel_identity(struct job_builder *b, uint32_t name_str, uint64_t function,
			    uint64_t *key, const char **name)
{
	const char *text = name_str ? grt_strings_get(b->strings, name_str) : NULL;
	char buf[48];

	if (text) {
		*key = name_str;
		*name = name_of(b, *key, text);
		return;
	}
	*key = HANDLE_KEY | (function & (HANDLE_KEY - 1));
	if (function)
		snprintf(buf, sizeof(buf), "function 0x%llx", (unsigned long long)function);
	else
		snprintf(buf, sizeof(buf), "[unknown kernel]");
	*name = name_of(b, *key, buf);
}

static void copy_identity(struct job_builder *b, uint32_t kind, uint32_t copy_kind,
			  uint64_t *key, const char **name)
{
	char buf[48];
	uint64_t v;

	*key = COPY_KEY | ((uint64_t)kind << 16) | copy_kind;
	if (u64_map_get(&b->names, *key, &v)) {
		*name = (const char *)(uintptr_t)v;
		return;
	}
	if (kind == JOB_MEMSET)
		snprintf(buf, sizeof(buf), "[memset]");
	else
		snprintf(buf, sizeof(buf), "[memcpy %s]", grt_copy_kind_name(copy_kind));
	*name = name_of(b, *key, buf);
}

/* ---- the stream queue ---- */

static void queue_insert(struct jstream *s, struct bjob *j)
{
	struct bjob *after = s->tail;

	/* records may arrive a little out of order: keep the queue sorted by cover */
	while (after && after->cover > j->cover)
		after = after->prev;
	j->prev = after;
	j->next = after ? after->next : s->head;
	if (j->next)
		j->next->prev = j;
	else
		s->tail = j;
	if (after)
		after->next = j;
	else
		s->head = j;
}

static void queue_unlink(struct jstream *s, struct bjob *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		s->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		s->tail = j->prev;
	j->next = j->prev = NULL;
}

static void untimed_insert(struct jstream *s, struct bjob *j)
{
	struct bjob *after = s->untimed_tail;

	while (after && after->job.api_enter > j->job.api_enter)
		after = after->u_prev;
	j->u_prev = after;
	j->u_next = after ? after->u_next : s->untimed_head;
	if (j->u_next)
		j->u_next->u_prev = j;
	else
		s->untimed_tail = j;
	if (after)
		after->u_next = j;
	else
		s->untimed_head = j;
	j->in_untimed = true;
}

static void untimed_remove(struct jstream *s, struct bjob *j)
{
	if (!j->in_untimed)
		return;
	if (j->u_prev)
		j->u_prev->u_next = j->u_next;
	else
		s->untimed_head = j->u_next;
	if (j->u_next)
		j->u_next->u_prev = j->u_prev;
	else
		s->untimed_tail = j->u_prev;
	j->u_next = j->u_prev = NULL;
	j->in_untimed = false;
}

/* ---- completion marks ---- */

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
static uint64_t mark_lookup(const struct jstream *s, uint64_t cover)
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
	if (grt_grow_array((void **)&p->marks, &p->cap_marks, sizeof(*p->marks), p->n_marks + 1))
		return;
	p->marks[p->n_marks++] = (struct cover_mark){ cover, complete };
	for (struct jstream *s = p->streams; s; s = s->proc_next)
		want_check(b, s);
}

static void add_mark(struct job_builder *b, struct jstream *s, uint64_t cover, uint64_t complete)
{
	if (!s)
		return;
	if (s->n_marks && s->marks[s->n_marks - 1].cover >= cover)
		return; /* an earlier sync already covers these jobs */
	if (grt_grow_array((void **)&s->marks, &s->cap_marks, sizeof(*s->marks), s->n_marks + 1))
		return;
	s->marks[s->n_marks++] = (struct cover_mark){ cover, complete };
	want_check(b, s);
}

/* Marks below the head's cover can no longer apply; keep one for stragglers. */
static void prune_marks(struct jstream *s)
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

/* ---- dependencies (cuStreamWaitEvent) ---- */

static bool device_given_up(const struct job_builder *b, const struct bjob *j)
{
	return !b->expect_device || (j->job.flags & JOB_F_FAILED) ||
	       j->stream->max_device_cover > j->cover;
}

static uint64_t job_end(const struct bjob *j)
{
	uint64_t end = j->job.end;

	for (uint32_t i = 0; i < j->n_nodes; i++)
		if (j->nodes[i].end > end)
			end = j->nodes[i].end;
	return end;
}

/*
 * What a new job's wait on an event depends on: the last job of the event's
 * stream submitted before the event was recorded. Resolved when the job
 * opens if that job is done; otherwise the producer calls back (settle_deps).
 */
static void resolve_dep(struct job_builder *b, struct bjob *owner, uint32_t idx)
{
	struct dep_ref *d = &owner->deps[idx];
	struct jstream *s = d->stream;
	struct bjob *j, *found = NULL;
	uint64_t n;

	/* the event was usually recorded just now: search from the tail */
	for (j = s->tail; j && j->cover > d->cover; j = j->prev)
		;
	found = j;
	if (found) {
		if (found->has_device) {
			d->state = DEP_READY;
			d->ready = job_end(found);
		} else if (device_given_up(b, found)) {
			d->state = DEP_UNKNOWN;
		} else if (!grt_grow_array((void **)&found->dependents, &found->cap_dependents,
				       sizeof(*found->dependents), found->n_dependents + 1)) {
			found->dependents[found->n_dependents++] = (struct dependent){ owner, idx };
			d->producer = found;
			d->state = DEP_PENDING;
		} else {
			d->state = DEP_UNKNOWN;
		}
		return;
	}
	/* already finished: the stream's recent ends */
	n = s->n_ends < END_RING ? s->n_ends : END_RING;
	for (uint64_t i = 0; i < n; i++) {
		const struct end_entry *e = &s->ends[(s->n_ends - 1 - i) % END_RING];

		if (e->cover <= d->cover) {
			d->state = e->end ? DEP_READY : DEP_UNKNOWN;
			d->ready = e->end;
			return;
		}
	}
	/* nothing was submitted before the event: it was reached at once */
	d->state = s->n_ends <= END_RING ? DEP_NONE : DEP_UNKNOWN;
}

/* The producer's END is known (or never will be): its dependents learn it. */
static void settle_deps(struct job_builder *b, struct bjob *producer)
{
	for (uint32_t i = 0; i < producer->n_dependents; i++) {
		struct dependent *dp = &producer->dependents[i];
		struct dep_ref *d;

		if (!dp->job)
			continue;
		d = &dp->job->deps[dp->dep];
		if (d->producer != producer)
			continue;
		d->producer = NULL;
		d->state = producer->has_device ? DEP_READY : DEP_UNKNOWN;
		d->ready = producer->has_device ? job_end(producer) : 0;
		want_check(b, dp->job->stream);
	}
	producer->n_dependents = 0;
}

/* A job finished before its producer (forced): the producer must forget it. */
static void drop_pending_deps(struct bjob *j)
{
	for (uint32_t i = 0; i < j->n_deps; i++) {
		struct dep_ref *d = &j->deps[i];

		if (d->state != DEP_PENDING || !d->producer)
			continue;
		for (uint32_t k = 0; k < d->producer->n_dependents; k++)
			if (d->producer->dependents[k].job == j && d->producer->dependents[k].dep == i)
				d->producer->dependents[k].job = NULL;
		d->producer = NULL;
		d->state = DEP_UNKNOWN;
	}
}

/* ---- finishing a job ---- */

static uint64_t sat_sub(uint64_t a, uint64_t b, struct job *j)
{
	if (a >= b)
		return a - b;
	j->flags |= JOB_F_CLAMPED;
	return 0;
}

static void derive(struct job *j, uint64_t prev_end, int dep_state)
{
	uint64_t queue_from =
	    (j->flags & (JOB_F_SYNC_CALL | JOB_F_RETURN_UNSAMPLED)) ? j->api_enter : j->submit;
	uint64_t finish = j->complete ? j->complete : j->end;

	j->known = 0;
	if (j->submit && j->api_enter && !(j->flags & JOB_F_SYNC_CALL)) {
		j->t_submit_host = sat_sub(j->submit, j->api_enter, j);
		j->known |= JOB_K_SUBMIT_HOST;
	}
	if (j->start && queue_from) {
		j->t_queue = sat_sub(j->start, queue_from, j);
		j->known |= JOB_K_QUEUE;
		if (dep_state == DEP_NONE) {
			j->t_gpu_wait = 0;
			j->known |= JOB_K_GPU_WAIT;
		} else if (dep_state == DEP_READY) {
			/* waiting for the event while the stream itself had nothing left to run */
			uint64_t from = queue_from > prev_end ? queue_from : prev_end;
			uint64_t until = j->dep_ready < j->start ? j->dep_ready : j->start;

			j->t_gpu_wait = until > from ? until - from : 0;
			j->known |= JOB_K_GPU_WAIT;
		}
	}
	if (j->start && j->end) {
		j->t_exec = sat_sub(j->end, j->start, j);
		j->known |= JOB_K_EXEC;
	}
	if (j->complete && j->end) {
		j->t_complete = sat_sub(j->complete, j->end, j);
		j->known |= JOB_K_COMPLETE;
	}
	if (j->api_enter && finish) {
		j->t_total = sat_sub(finish, j->api_enter, j);
		j->known |= JOB_K_TOTAL;
	}
}

void job_derive_nodeps(struct job *j)
{
	derive(j, 0, DEP_UNKNOWN);
}

/* UVM activity that touches a running job: GPU-side faults and the memory movement they cause. */
static bool is_fault_kind(uint32_t kind)
{
	switch (kind) {
	case GRT_UVM_GPU_FAULT:
	case GRT_UVM_GPU_FAULT_REPLAY:
	case GRT_UVM_MIGRATION:
	case GRT_UVM_EVICTION:
	case GRT_UVM_THRASHING:
	case GRT_UVM_THROTTLING_START:
	case GRT_UVM_THROTTLING_END:
	case GRT_UVM_MAP_REMOTE:
	case GRT_UVM_READ_DUPLICATE:
	case GRT_UVM_READ_DUPLICATE_INVALIDATE:
	case GRT_UVM_FATAL_FAULT:
		return true;
	default:
		return false; /* CPU faults, queue/buffer overflows, page size changes */
	}
}

/* First event (logical index) whose ts is at or after from. */
static uint32_t uvm_lower_bound(const struct jproc *p, uint64_t from)
{
	uint32_t lo = 0, hi = p->uvm_len;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (p->uvm[(p->uvm_head + mid) % p->uvm_cap].ts < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void uvm_window(struct jproc *p, struct job *j)
{
	uint64_t a, z, covered_to = 0, from;

	if (!p || !p->uvm_len)
		return;
	if (j->start && j->end) {
		a = j->start;
		z = j->end;
	} else if (j->complete) {
		a = j->submit ? j->submit : j->api_enter;
		z = j->complete;
	} else {
		return;
	}
	from = a > p->uvm_max_span ? a - p->uvm_max_span : 0;
	for (uint32_t i = uvm_lower_bound(p, from); i < p->uvm_len; i++) {
		const struct uvm_ev *e = &p->uvm[(p->uvm_head + i) % p->uvm_cap];
		uint64_t s, t;

		if (e->ts > z)
			break;
		if (e->end < a)
			continue;
		j->vm_faults++;
		/* the union of the events' spans, clipped to the window */
		s = e->ts > a ? e->ts : a;
		t = e->end < z ? e->end : z;
		if (s < covered_to)
			s = covered_to;
		if (t > s)
			j->t_vm_fault += t - s;
		if (t > covered_to)
			covered_to = t;
	}
}

static void emit(struct job_builder *b, struct job *j)
{
	b->stats.jobs++;
	b->ops.job(b->ctx, j);
}

static void emit_nodes(struct job_builder *b, struct bjob *bj, uint64_t prev_end, int dep_state)
{
	struct jproc *p = proc_get(b, bj->job.pid);

	for (uint32_t i = 0; i < bj->n_nodes; i++) {
		struct job node = bj->job;
		const struct graph_node *n = &bj->nodes[i];

		node.id = ++b->next_id;
		node.group_id = bj->job.id;
		node.kind = JOB_KERNEL;
		node.start = n->start;
		node.end = n->end;
		node.device = n->device;
		node.kernel_key = n->kernel_key;
		node.name = n->name;
		node.graph_nodes = bj->n_nodes;
		if (n->probe)
			node.flags |= JOB_F_PROBE;
		node.vm_faults = 0;
		node.t_vm_fault = 0;
		uvm_window(p, &node);
		derive(&node, prev_end, dep_state);
		emit(b, &node);
	}
}

static int dep_state_of(struct bjob *j)
{
	int state = DEP_NONE;

	j->job.dep_ready = 0;
	for (uint32_t i = 0; i < j->n_deps; i++) {
		const struct dep_ref *d = &j->deps[i];

		if (d->state == DEP_READY) {
			if (d->ready > j->job.dep_ready)
				j->job.dep_ready = d->ready;
			if (state == DEP_NONE)
				state = DEP_READY;
		} else if (d->state != DEP_NONE) {
			state = DEP_UNKNOWN;
		}
	}
	return state;
}

/*
 * The job after j on its stream is checked next, and it has sat in memory
 * since its launch: fetching what head_ready() and prune_marks() read while
 * j is finalized hides most of the wait for it.
 */
static inline void prefetch_next_head(const struct bjob *j)
{
	const struct bjob *next = j->next;

	if (!next)
		return;
	__builtin_prefetch(&next->job.complete);
	__builtin_prefetch(&next->job.flags);
	__builtin_prefetch(&next->n_nodes);
	__builtin_prefetch(&next->n_deps);
	__builtin_prefetch(&next->cover);
}

static void finalize(struct job_builder *b, struct bjob *j, bool forced)
{
	struct jstream *s = j->stream;
	struct job *job = &j->job;
	uint64_t prev_end = s->last_end;
	int dep_state;

	prefetch_next_head(j);
	drop_pending_deps(j);
	dep_state = dep_state_of(j);
	queue_unlink(s, j);
	untimed_remove(s, j);
	if (!job->complete)
		job->complete = mark_lookup(s, j->cover);
	if (!(job->flags & JOB_F_FAILED)) {
		if (!j->has_device)
			job->missing |= JOB_MISS_DEVICE;
		if (!job->complete)
			job->missing |= JOB_MISS_COMPLETE;
		if (dep_state == DEP_UNKNOWN)
			job->missing |= JOB_MISS_DEPENDENCY;
	}
	if (forced) {
		job->flags |= JOB_F_FORCED;
		b->stats.forced++;
	}
	s->ends[s->n_ends++ % END_RING] = (struct end_entry){ j->cover, j->has_device ? job_end(j) : 0 };
	if (j->has_device)
		s->last_end = job_end(j);
	if (job->kind == JOB_GRAPH && j->n_nodes) {
		emit_nodes(b, j, prev_end, dep_state);
	} else {
		uvm_window(proc_get(b, job->pid), job);
		derive(job, prev_end, dep_state);
		emit(b, job);
	}
	if (j->thread && j->thread->last_job == j)
		j->thread->last_job = NULL;
	settle_deps(b, j);
	job_release(b, j);
	b->open--;
	prune_marks(s);
}

/* Whether the head of s can be finished, and from when. */
static bool head_ready(struct job_builder *b, struct jstream *s, uint64_t *deadline)
{
	struct bjob *j = s->head;
	uint64_t complete, end;

	if (j->job.flags & JOB_F_FAILED) {
		*deadline = 0;
		return true;
	}
	complete = j->job.complete ? j->job.complete : mark_lookup(s, j->cover);
	if (!complete)
		return false;
	if (!j->has_device && !device_given_up(b, j))
		return false;
	for (uint32_t i = 0; i < j->n_deps; i++)
		if (j->deps[i].state == DEP_PENDING)
			return false;
	end = job_end(j);
	*deadline = (complete > end ? complete : end) + b->t.late_window_ns;
	return true;
}

static void check_stream(struct job_builder *b, struct jstream *s)
{
	uint64_t deadline;

	while (s->head && !s->in_heap && head_ready(b, s, &deadline)) {
		if (deadline > b->now) {
			heap_push(b, deadline, s);
			return;
		}
		finalize(b, s->head, false);
	}
}

static void run_checks(struct job_builder *b)
{
	while (b->n_checks) {
		struct jstream *s = b->checks[--b->n_checks];

		s->in_checks = false;
		check_stream(b, s);
	}
	while (b->heap_len && b->heap[0].deadline <= b->now) {
		check_stream(b, heap_pop(b));
		while (b->n_checks) {
			struct jstream *s = b->checks[--b->n_checks];

			s->in_checks = false;
			check_stream(b, s);
		}
	}
}

/* ---- device records ---- */

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
		untimed_remove(s, j);
	if (j->cover > s->max_device_cover)
		s->max_device_cover = j->cover;
	want_check(b, s);
	settle_deps(b, j);
}

/* A device record no host call claimed: a job of its own, known only on the GPU. */
static void emit_device_only(struct job_builder *b, const struct orphan *o)
{
	struct jstream *s = stream_get(b, o->pid, stream_key(o->stream, false, o->tid), o->stream);
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
	uvm_window(proc_get(b, o->pid), &j);
	derive(&j, 0, DEP_NONE);
	emit(b, &j);
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

	out[n] = stream_find(b, pid, stream_key(stream, false, tid));
	n += out[n] != NULL;
	if (stream == 0) {
		out[n] = stream_find(b, pid, PER_THREAD_KEY | tid);
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
static void claim_orphans(struct job_builder *b, struct bjob *j)
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

static void expire_orphans(struct job_builder *b, bool all)
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

static void on_gpu_kernel(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_kernel_rec *k = rec->payload;
	struct graph_node dev = { .start = k->start_ns, .end = k->end_ns, .device = k->device };

	kernel_identity(b, k->kernel_str, 0, &dev.kernel_key, &dev.name);
	on_device(b, rec, &dev, k->api_enter_ns, k->stream, k->graph_id, JOB_KERNEL);
}

static void on_gpu_launch(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_launch_rec *l = rec->payload;
	struct graph_node dev = { .start = l->start_ns, .end = l->end_ns, .device = JOB_NO_DEVICE,
				  .probe = 1 };

	kernel_identity(b, l->kernel_str, 0, &dev.kernel_key, &dev.name);
	on_device(b, rec, &dev, l->api_enter_ns, l->stream, 0, JOB_KERNEL);
}

static void on_gpu_copy(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_gpu_copy_rec *c = rec->payload;
	uint32_t kind = c->kind == GRT_GPU_COPY_MEMSET ? JOB_MEMSET : JOB_MEMCPY;
	struct graph_node dev = { .start = c->start_ns, .end = c->end_ns, .device = c->device };

	copy_identity(b, kind, kind == JOB_MEMSET ? 0 : c->kind, &dev.kernel_key, &dev.name);
	on_device(b, rec, &dev, c->api_enter_ns, c->stream, 0, kind);
}

/* ---- host records ---- */

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;

	return e > s ? e - s : 0;
}

static void add_offcpu(struct bjob *j, const struct offcpu *o)
{
	uint64_t ov;

	if (!j->job.submit || (j->job.flags & JOB_F_SYNC_CALL))
		return;
	ov = overlap(j->job.api_enter, j->job.submit, o->off, o->on);
	if (ov || (o->off >= j->job.api_enter && o->off <= j->job.submit)) {
		j->job.t_offcpu += ov;
		j->job.offcpu_count++;
	}
}

static void enforce_open_limit(struct job_builder *b, struct jstream *s)
{
	struct jstream *victim = s, *it;
	uint32_t most = 0;

	if (b->open <= b->t.max_open_jobs)
		return;
	if (!s->head || s->head == s->tail) {
		for (it = b->all_streams; it; it = it->all_next) {
			uint32_t n = 0;

			for (struct bjob *j = it->head; j && n <= most; j = j->next)
				n++;
			if (n > most) {
				most = n;
				victim = it;
			}
		}
	}
	if (victim->head)
		finalize(b, victim->head, true);
}

static struct bjob *new_job(struct job_builder *b, const struct grt_record *rec,
			    const struct grt_cuda_call *call, uint32_t kind, uint64_t stream)
{
	bool returned = grt_cuda_call_returned(call) && call->return_ns;
	bool per_thread = call->api < GRT_CUDA_API_COUNT && b->ptsz_api[call->api];
	struct jstream *s = stream_get(b, rec->hdr.pid, stream_key(stream, per_thread, rec->hdr.tid),
				       stream);
	struct jthread *t = thread_get(b, rec->hdr.tid, rec->hdr.pid);
	struct bjob *j;

	if (!s || !t)
		return NULL;
	j = job_alloc(b);
	if (!j)
		return NULL;
	j->stream = s;
	j->thread = t;
	j->job.id = ++b->next_id;
	j->job.pid = rec->hdr.pid;
	j->job.tid = rec->hdr.tid;
	j->job.kind = (uint16_t)kind;
	j->job.api = call->api;
	j->job.ret = call->ret;
	j->job.stream = stream;
	j->job.stream_index = s->index;
	j->job.api_enter = rec->hdr.ts_ns;
	if (returned)
		j->job.submit = call->return_ns;
	else if (call->flags & GRT_CUDA_F_RETURN_UNSAMPLED)
		j->job.flags |= JOB_F_RETURN_UNSAMPLED; /* not seen by choice: the entry stands in */
	else
		j->job.missing |= JOB_MISS_SUBMIT;
	if (returned && call->ret != 0) {
		j->job.flags |= JOB_F_FAILED;
		b->stats.failed_calls++;
	}
	set_name(&t->comm, grt_strings_get(b->strings, call->comm_str));
	return j;
}

/* Puts a new job in its stream and the lookup maps. */
static void open_job(struct job_builder *b, struct bjob *j)
{
	struct jstream *s = j->stream;
	struct jthread *t = j->thread;

	b->opened_id = j->job.id;
	j->cover = j->job.submit ? j->job.submit : j->job.api_enter;
	memcpy(j->deps, s->pending, s->n_pending * sizeof(*s->pending));
	j->n_deps = s->n_pending;
	s->n_pending = 0;
	for (uint32_t i = 0; i < j->n_deps; i++)
		resolve_dep(b, j, i);
	/* newest first; the ring is in time order, so stop at the first one before the call */
	for (uint32_t i = 0; i < t->n_ring && i < OFFCPU_RING; i++) {
		const struct offcpu *o = &t->ring[(t->n_ring - 1 - i) % OFFCPU_RING];

		if (o->on < j->job.api_enter)
			break;
		add_offcpu(j, o);
	}
	if (t->last_stream == s && t->last_submit && j->job.api_enter >= t->last_submit &&
	    j->job.api_enter - t->last_submit <= b->t.batch_gap_ns)
		j->job.batch_id = t->batch_id;
	else
		j->job.batch_id = t->batch_id = j->job.id;
	t->last_stream = s;
	t->last_submit = j->cover;
	t->last_job = j;
	queue_insert(s, j);
	if (!(j->job.flags & JOB_F_FAILED)) {
		untimed_insert(s, j);
		claim_orphans(b, j);
	}
	b->open++;
	if (b->open > b->stats.max_open)
		b->stats.max_open = b->open;
	want_check(b, s);
	enforce_open_limit(b, s);
}

static void on_launch(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_launch_rec *l = rec->payload;
	struct bjob *j = new_job(b, rec, &l->call, JOB_KERNEL, l->stream);

	if (!j)
		return;
	kernel_identity(b, l->kernel_str, l->function, &j->job.kernel_key, &j->job.name);
	open_job(b, j);
}

static void on_graph_launch(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_graph_launch_rec *g = rec->payload;
	struct bjob *j = new_job(b, rec, &g->call, JOB_GRAPH, g->stream);
	char buf[48];

	if (!j)
		return;
	b->stats.graph_launches++;
	j->job.group_id = j->job.id;
	j->job.kernel_key = HANDLE_KEY | (g->graph_exec & (HANDLE_KEY - 1));
	snprintf(buf, sizeof(buf), "graph 0x%llx", (unsigned long long)g->graph_exec);
	j->job.name = name_of(b, j->job.kernel_key, buf);
	open_job(b, j);
}

static void on_memcpy(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_memcpy_rec *m = rec->payload;
	struct bjob *j = new_job(b, rec, &m->call, JOB_MEMCPY, m->is_async ? m->stream : 0);

	if (!j)
		return;
	j->job.copy_kind = m->kind;
	j->job.bytes = m->bytes;
	copy_identity(b, JOB_MEMCPY, m->kind, &j->job.kernel_key, &j->job.name);
	if (!m->is_async) {
		/* the call returns when the copy is done: its return is the COMPLETE */
		j->job.flags |= JOB_F_SYNC_CALL;
		j->job.missing &= ~JOB_MISS_SUBMIT;
		j->job.complete = j->job.submit;
		j->job.submit = 0;
		if (j->job.complete && b->ops.host_wait)
			b->ops.host_wait(b->ctx, rec->hdr.pid, rec->hdr.tid, rec->hdr.ts_ns,
					 j->job.complete);
	}
	open_job(b, j);
}

static void on_memset(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_memset_rec *m = rec->payload;
	struct bjob *j = new_job(b, rec, &m->call, JOB_MEMSET, m->stream);

	if (!j)
		return;
	j->job.bytes = m->bytes;
	copy_identity(b, JOB_MEMSET, 0, &j->job.kernel_key, &j->job.name);
	open_job(b, j);
}

static void on_sync(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_sync_rec *y = rec->payload;
	bool returned = grt_cuda_call_returned(&y->call) && y->call.return_ns;
	bool ok = returned && y->call.ret == 0;
	bool per_thread = y->call.api < GRT_CUDA_API_COUNT && b->ptsz_api[y->call.api];
	uint32_t pid = rec->hdr.pid, tid = rec->hdr.tid;
	uint64_t skey = stream_key(y->stream, per_thread, tid), ts = rec->hdr.ts_ns;
	struct jthread *t = thread_get(b, tid, pid);
	struct jevent *ev;
	struct jproc *p;

	if (t)
		t->last_submit = 0; /* a sync ends a batch */
	switch (y->kind) {
	case GRT_SYNC_CTX:
		b->stats.syncs++;
		p = proc_get(b, pid);
		if (ok)
			add_ctx_mark(b, p, ts, y->call.return_ns);
		break;
	case GRT_SYNC_STREAM:
	case GRT_SYNC_STREAM_QUERY:
		b->stats.syncs += y->kind == GRT_SYNC_STREAM;
		if (ok)
			add_mark(b, stream_get(b, pid, skey, y->stream), ts, y->call.return_ns);
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
				return;
			}
		}
		ev->stream = stream_get(b, pid, skey, y->stream);
		ev->cover = ts;
		return;
	case GRT_SYNC_STREAM_WAIT_EVENT: {
		struct jstream *s = stream_get(b, pid, skey, y->stream);

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
	if (returned && b->ops.host_wait &&
	    (y->kind == GRT_SYNC_CTX || y->kind == GRT_SYNC_STREAM || y->kind == GRT_SYNC_EVENT))
		b->ops.host_wait(b->ctx, pid, tid, ts, y->call.return_ns);
}

static void on_offcpu(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_sched_offcpu_rec *o = rec->payload;
	struct jthread *t = thread_get(b, rec->hdr.tid, rec->hdr.pid);
	struct offcpu iv = { rec->hdr.ts_ns, o->on_cpu_ns > rec->hdr.ts_ns ? o->on_cpu_ns : rec->hdr.ts_ns };

	b->stats.offcpu_records++;
	if (!t)
		return;
	t->ring[t->n_ring % OFFCPU_RING] = iv;
	if (++t->n_ring == 2 * OFFCPU_RING)
		t->n_ring = OFFCPU_RING; /* all slots stay valid; keeps the index small */
	/* a switch recorded after the launch it interrupted */
	if (t->last_job)
		add_offcpu(t->last_job, &iv);
}

static void uvm_push(struct jproc *p, uint64_t ts, uint64_t end, struct job_builder_stats *st)
{
	uint32_t at;

	if (p->uvm_len == p->uvm_cap) {
		uint32_t cap = p->uvm_cap ? p->uvm_cap * 2 : 256;
		struct uvm_ev *n;

		if (cap > UVM_MAX_EVENTS) {
			/* bounded: the oldest event falls out */
			p->uvm_head = (p->uvm_head + 1) % p->uvm_cap;
			p->uvm_len--;
			st->uvm_dropped++;
		} else {
			n = malloc(cap * sizeof(*n));
			if (!n)
				return;
			for (uint32_t i = 0; i < p->uvm_len; i++)
				n[i] = p->uvm[(p->uvm_head + i) % p->uvm_cap];
			free(p->uvm);
			p->uvm = n;
			p->uvm_cap = cap;
			p->uvm_head = 0;
		}
	}
	/* sorted by ts; events come nearly in order, so the walk back is short */
	at = p->uvm_len;
	while (at && p->uvm[(p->uvm_head + at - 1) % p->uvm_cap].ts > ts) {
		p->uvm[(p->uvm_head + at) % p->uvm_cap] = p->uvm[(p->uvm_head + at - 1) % p->uvm_cap];
		at--;
	}
	p->uvm[(p->uvm_head + at) % p->uvm_cap] = (struct uvm_ev){ ts, end };
	p->uvm_len++;
	if (end - ts > p->uvm_max_span)
		p->uvm_max_span = end - ts;
}

static void on_uvm(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_uvm_event_rec *u = rec->payload;
	struct jproc *p;

	if (!is_fault_kind(u->kind))
		return;
	p = proc_get(b, rec->hdr.pid);
	if (!p)
		return;
	b->stats.uvm_events++;
	uvm_push(p, rec->hdr.ts_ns, u->end_ns > rec->hdr.ts_ns ? u->end_ns : rec->hdr.ts_ns, &b->stats);
}

static void on_process(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_process_rec *pr = rec->payload;
	struct jproc *p = proc_get(b, rec->hdr.pid);

	if (p)
		set_name(&p->comm, grt_strings_get(b->strings, pr->comm_str));
}

static void on_source_status(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_source_status_rec *st = rec->payload;

	if (st->source != GRT_SRC_GPU || st->status >= 0 || !b->expect_device)
		return;
	/* the gpu source did not run: no job waits for device timing any more */
	b->expect_device = false;
	for (struct jstream *s = b->all_streams; s; s = s->all_next)
		want_check(b, s);
}

/* ---- the frontier for idle gaps ---- */

static void advance(struct job_builder *b)
{
	uint64_t frontier = b->now > b->t.late_window_ns ? b->now - b->t.late_window_ns : 0;

	for (struct jstream *s = b->all_streams; s; s = s->all_next) {
		struct bjob *h = s->head;
		uint64_t lb;

		if (!h)
			continue;
		lb = h->has_device && h->job.kind != JOB_GRAPH ? h->job.start : h->job.api_enter;
		if (lb < frontier)
			frontier = lb;
	}
	for (struct orphan *o = b->orphans_head; o; o = o->next)
		if (o->dev.start < frontier)
			frontier = o->dev.start;
	for (size_t i = 0;;) {
		uint64_t pid, v;
		struct jproc *p;

		if (!u64_map_iter(&b->procs, &i, &pid, &v))
			break;
		p = (struct jproc *)(uintptr_t)v;
		while (p->uvm_len && p->uvm[p->uvm_head].end < frontier) {
			p->uvm_head = (p->uvm_head + 1) % p->uvm_cap;
			p->uvm_len--;
		}
	}
	if (b->ops.advance)
		b->ops.advance(b->ctx, frontier);
}

/* ---- entry points ---- */

static bool payload_fits(const struct grt_record *rec, size_t need)
{
	return rec->hdr.payload_len >= need;
}

static bool is_host_clock(uint16_t type)
{
	return type >= GRT_REC_CUDA_LAUNCH && type < GRT_REC_GPU_FIRST;
}

void job_builder_record(struct job_builder *b, const struct grt_record *rec,
			const struct grt_strings *strings)
{
	uint16_t type = rec->hdr.type;

	b->strings = strings;
	b->opened_id = 0;
	if (is_host_clock(type) && rec->hdr.ts_ns > b->now)
		b->now = rec->hdr.ts_ns;
	switch (type) {
	case GRT_REC_CUDA_LAUNCH:
		if (payload_fits(rec, sizeof(struct grt_cuda_launch_rec)))
			on_launch(b, rec);
		break;
	case GRT_REC_CUDA_GRAPH_LAUNCH:
		if (payload_fits(rec, sizeof(struct grt_cuda_graph_launch_rec)))
			on_graph_launch(b, rec);
		break;
	case GRT_REC_CUDA_MEMCPY:
		if (payload_fits(rec, sizeof(struct grt_cuda_memcpy_rec)))
			on_memcpy(b, rec);
		break;
	case GRT_REC_CUDA_MEMSET:
		if (payload_fits(rec, sizeof(struct grt_cuda_memset_rec)))
			on_memset(b, rec);
		break;
	case GRT_REC_CUDA_SYNC:
		if (payload_fits(rec, sizeof(struct grt_cuda_sync_rec)))
			on_sync(b, rec);
		break;
	case GRT_REC_GPU_KERNEL:
		if (payload_fits(rec, sizeof(struct grt_gpu_kernel_rec)))
			on_gpu_kernel(b, rec);
		break;
	case GRT_REC_GPU_LAUNCH:
		if (payload_fits(rec, sizeof(struct grt_gpu_launch_rec)))
			on_gpu_launch(b, rec);
		break;
	case GRT_REC_GPU_COPY:
		if (payload_fits(rec, sizeof(struct grt_gpu_copy_rec)))
			on_gpu_copy(b, rec);
		break;
	case GRT_REC_SCHED_OFFCPU:
		if (payload_fits(rec, sizeof(struct grt_sched_offcpu_rec)))
			on_offcpu(b, rec);
		break;
	case GRT_REC_UVM_EVENT:
		if (payload_fits(rec, sizeof(struct grt_uvm_event_rec)))
			on_uvm(b, rec);
		break;
	case GRT_REC_PROCESS:
		if (payload_fits(rec, sizeof(struct grt_process_rec)))
			on_process(b, rec);
		break;
	case GRT_REC_SOURCE_STATUS:
		if (payload_fits(rec, sizeof(struct grt_source_status_rec)))
			on_source_status(b, rec);
		break;
	default:
		break;
	}
	run_checks(b);
	if (++b->records % ADVANCE_EVERY == 0) {
		expire_orphans(b, false);
		run_checks(b);
		advance(b);
	}
}

void job_builder_finish(struct job_builder *b)
{
	expire_orphans(b, true);
	b->now = UINT64_MAX;
	run_checks(b);
	/* what is still open now never got all its events */
	for (struct jstream *s = b->all_streams; s; s = s->all_next)
		while (s->head)
			finalize(b, s->head, false);
	if (b->ops.advance)
		b->ops.advance(b->ctx, UINT64_MAX);
}

struct job_builder *job_builder_new(const struct grt_file_header *hdr,
				    const struct job_thresholds *t,
				    const struct job_builder_ops *ops, void *ctx)
{
	struct job_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->t = *t;
	b->ops = *ops;
	b->ctx = ctx;
	b->expect_device = hdr && (hdr->sources_mask & (1u << GRT_SRC_GPU));
	if (b->t.late_window_ns == JOB_LATE_WINDOW_AUTO)
		b->t.late_window_ns = hdr && (hdr->sources_mask & (1u << GRT_SRC_UVM | 1u << GRT_SRC_GPU))
					      ? JOB_LATE_WINDOW_UVM_NS : JOB_LATE_WINDOW_NS;
	pid_key_map_init(&b->streams);
	pid_key_map_init(&b->events);
	u64_map_init(&b->threads);
	u64_map_init(&b->procs);
	u64_map_init(&b->names);
	u64_map_init(&b->recent_timed);
	for (uint32_t api = 1; api < GRT_CUDA_API_COUNT; api++) {
		const char *name = grt_cuda_api_name(api);
		size_t len = strlen(name);

		b->ptsz_api[api] = len > 5 && (!strcmp(name + len - 5, "_ptsz") ||
					       !strcmp(name + len - 5, "_ptds"));
	}
	return b;
}

static void free_stream(struct jstream *s)
{
	free(s->marks);
	free(s);
}

void job_builder_free(struct job_builder *b)
{
	size_t i = 0;
	uint64_t k, v;
	void *p;

	if (!b)
		return;
	while (b->all_streams) {
		struct jstream *s = b->all_streams;

		b->all_streams = s->all_next;
		for (struct bjob *j = s->head; j; j = j->next) {
			free(j->nodes);
			free(j->dependents);
		}
		free_stream(s);
	}
	for (i = 0; (p = pid_key_map_iter(&b->events, &i));)
		free(p);
	while (b->orphans_head) {
		struct orphan *o = b->orphans_head;

		b->orphans_head = o->next;
		free(o);
	}
	for (i = 0; u64_map_iter(&b->threads, &i, &k, &v);) {
		free(((struct jthread *)(uintptr_t)v)->comm);
		free((void *)(uintptr_t)v);
	}
	for (i = 0; u64_map_iter(&b->procs, &i, &k, &v);) {
		struct jproc *pr = (struct jproc *)(uintptr_t)v;

		free(pr->comm);
		free(pr->uvm);
		free(pr->marks);
		free(pr);
	}
	for (i = 0; u64_map_iter(&b->names, &i, &k, &v);)
		free((void *)(uintptr_t)v);
	for (uint32_t c = 0; c < b->n_chunks; c++)
		free(b->chunks[c]);
	free(b->chunks);
	free(b->heap);
	free(b->checks);
	pid_key_map_destroy(&b->streams);
	pid_key_map_destroy(&b->events);
	u64_map_destroy(&b->threads);
	u64_map_destroy(&b->procs);
	u64_map_destroy(&b->names);
	u64_map_destroy(&b->recent_timed);
	free(b->recent_ring);
	free(b);
}

uint64_t job_builder_opened_id(const struct job_builder *b)
{
	return b->opened_id;
}

const struct job_builder_stats *job_builder_stats(const struct job_builder *b)
{
	return &b->stats;
}

const char *job_builder_thread_name(const struct job_builder *b, uint32_t tid)
{
	uint64_t v;

	return u64_map_get(&b->threads, tid, &v) ? ((struct jthread *)(uintptr_t)v)->comm : NULL;
}

const char *job_builder_process_name(const struct job_builder *b, uint32_t pid)
{
	uint64_t v;
	const char *comm;

	if (u64_map_get(&b->procs, pid, &v) && ((struct jproc *)(uintptr_t)v)->comm)
		return ((struct jproc *)(uintptr_t)v)->comm;
	comm = job_builder_thread_name(b, pid);
	return comm;
}

int job_builder_expects_device(const struct job_builder *b)
{
	return b->expect_device;
}
