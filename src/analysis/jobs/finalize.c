/* When a job is done, its derived durations, hand-out, and the frontier for idle gaps. */
#include <stddef.h>
#include <stdlib.h>
#include "analysis/jobs/builder_internal.h"
#include "common/grow_array.h"
#include "common/min_heap.h"

static void heap_push(struct job_builder *b, uint64_t deadline, struct jstream *s)
{
	if (grt_grow_array((void **)&b->heap, &b->heap_cap, sizeof(*b->heap), b->heap_len + 1)) {
		b->stats.alloc_failures++; /* found again by the next check or at finish, maybe later */
		return;
	}
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

void jb_want_check(struct job_builder *b, struct jstream *s)
{
	if (s->in_checks || !s->head)
		return;
	if (grt_grow_array((void **)&b->checks, &b->cap_checks, sizeof(*b->checks), b->n_checks + 1)) {
		b->stats.alloc_failures++;
		return;
	}
	b->checks[b->n_checks++] = s;
	s->in_checks = true;
}

/* ---- finishing a job ---- */

static uint64_t sat_sub(uint64_t a, uint64_t b, struct job *j)
{
	if (a >= b)
		return a - b;
	j->flags |= JOB_F_CLAMPED;
	return 0;
}

void jb_derive(struct job *j, uint64_t prev_end, int dep_state)
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

uint32_t jb_device_of(struct job_builder *b, uint32_t pid, uint32_t device)
{
	uint64_t v;
	const struct jproc *p;

	if (device != JOB_NO_DEVICE || !u64_map_get(&b->procs, pid, &v))
		return device;
	p = (const struct jproc *)(uintptr_t)v;
	return p->several_devices ? JOB_NO_DEVICE : p->device;
}

void jb_busy(struct job_builder *b, uint32_t pid, uint32_t device, uint64_t start, uint64_t end)
{
	if (b->ops.busy && start && end >= start)
		b->ops.busy(b->ctx, jb_device_of(b, pid, device), start, end);
}

/* Hands a finished job out; grtrace's own work, unless asked for, leaves only its busy time. */
void jb_emit(struct job_builder *b, struct job *j)
{
	if ((j->flags & JOB_F_OWN) && !b->t.show_own) {
		b->stats.own_jobs++;
		if (j->known & JOB_K_EXEC)
			jb_busy(b, j->pid, j->device, j->start, j->end);
		return;
	}
	b->stats.jobs++;
	b->ops.job(b->ctx, j);
}

static void emit_nodes(struct job_builder *b, struct bjob *bj, uint64_t prev_end, int dep_state)
{
	struct jproc *p = jb_proc_get(b, bj->job.pid);

	for (uint32_t i = 0; i < bj->n_nodes; i++) {
		struct job node = bj->job;
		const struct graph_node *n = &bj->nodes[i];

		node.id = ++b->next_id;
		node.group_id = bj->job.id;
		node.kind = JOB_KERNEL;
		node.start = n->start;
		node.end = n->end;
		node.device = jb_device_of(b, bj->job.pid, n->device);
		node.kernel_key = n->kernel_key;
		node.name = n->name;
		node.graph_nodes = bj->n_nodes;
		if (n->probe)
			node.flags |= JOB_F_PROBE;
		node.vm_faults = 0;
		node.t_vm_fault = 0;
		jb_uvm_window(p, &node);
		jb_derive(&node, prev_end, dep_state);
		jb_emit(b, &node);
	}
}

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

void jb_finalize(struct job_builder *b, struct bjob *j, bool forced)
{
	struct jstream *s = j->stream;
	struct job *job = &j->job;
	uint64_t prev_end = s->last_end;
	int dep_state;

	prefetch_next_head(j);
	jb_drop_pending_deps(j);
	dep_state = jb_dep_state_of(j);
	jb_queue_unlink(s, j);
	jb_untimed_remove(s, j);
	if (!job->complete)
		job->complete = jb_mark_lookup(s, j->cover);
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
	jb_thread_open_remove(j);
	if (job->kind == JOB_GRAPH && j->n_nodes) {
		emit_nodes(b, j, prev_end, dep_state);
	} else {
		if (j->has_device)
			job->device = jb_device_of(b, job->pid, job->device);
		jb_uvm_window(jb_proc_get(b, job->pid), job);
		jb_derive(job, prev_end, dep_state);
		jb_emit(b, job);
	}
	if (j->thread && j->thread->last_job == j)
		j->thread->last_job = NULL;
	jb_settle_deps(b, j);
	jb_job_release(b, j);
	b->open--;
	jb_prune_marks(s);
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
	complete = j->job.complete ? j->job.complete : jb_mark_lookup(s, j->cover);
	if (!complete)
		return false;
	if (!j->has_device && !jb_device_given_up(b, j))
		return false;
	for (uint32_t i = 0; i < j->n_deps; i++)
		if (j->deps[i].state == DEP_PENDING)
			return false;
	end = job_end(j);
	*deadline = (complete > end ? complete : end) + b->t.late_window_ns;
	return true;
}

/*
 * Device records come in bursts (CUPTI hands its buffers over when they fill
 * or on a timer), per calling thread: on the H100, a JAX program's records
 * of one thread came 185 ms of trace time after records of its other threads,
 * past the late window. A job whose device record is still missing at its
 * deadline therefore also waits until device records naming its thread's
 * calls (format 1.1 brackets) reach calls entered after that deadline, or the
 * trace ends: only then is its record known not to come. Traces without
 * brackets keep the late window alone.
 */
static bool device_behind(struct job_builder *b, const struct bjob *j, uint64_t deadline)
{
	const struct jthread *t = j->thread;
	const struct jproc *p;

	if (!t || j->has_device || !b->expect_device || (j->job.flags & JOB_F_FAILED) ||
	    b->now == UINT64_MAX || t->device_seen >= deadline)
		return false;
	/* a thread whose first burst is still to come waits too, once the process has brackets */
	p = jb_proc_get(b, j->job.pid);
	return t->device_records || (p && p->device_brackets);
}

static void wait_device(struct job_builder *b, struct jstream *s)
{
	struct jthread *t = s->head->thread;

	if (grt_grow_array((void **)&t->device_waiters, &t->cap_device_waiters,
			   sizeof(*t->device_waiters), t->n_device_waiters + 1)) {
		b->stats.alloc_failures++;
		jb_finalize(b, s->head, false);
		return;
	}
	s->waits_device = true;
	t->device_waiters[t->n_device_waiters++] = s;
}

void jb_device_progress(struct job_builder *b, struct jthread *t)
{
	for (uint32_t i = 0; i < t->n_device_waiters; i++) {
		t->device_waiters[i]->waits_device = false;
		jb_want_check(b, t->device_waiters[i]);
	}
	t->n_device_waiters = 0;
}

static void check_stream(struct job_builder *b, struct jstream *s)
{
	uint64_t deadline;

	while (s->head && !s->in_heap && !s->waits_device && head_ready(b, s, &deadline)) {
		if (deadline > b->now) {
			heap_push(b, deadline, s);
			return;
		}
		if (device_behind(b, s->head, deadline)) {
			wait_device(b, s);
			return;
		}
		jb_finalize(b, s->head, false);
	}
}

void jb_run_checks(struct job_builder *b)
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

void jb_enforce_open_limit(struct job_builder *b, struct jstream *s)
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
		jb_finalize(b, victim->head, true);
}

/* ---- the frontier for idle gaps ---- */

void jb_advance(struct job_builder *b)
{
	uint64_t frontier = b->now > b->t.late_window_ns ? b->now - b->t.late_window_ns : 0;
	uint64_t entered = frontier; /* no job handed out later was entered before it */

	for (struct jstream *s = b->all_streams; s; s = s->all_next) {
		struct bjob *h = s->head;
		uint64_t lb;

		if (!h)
			continue;
		lb = h->has_device && h->job.kind != JOB_GRAPH ? h->job.start : h->job.api_enter;
		if (lb < frontier)
			frontier = lb;
		if (h->job.api_enter < entered)
			entered = h->job.api_enter;
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
	if (b->ops.settled)
		b->ops.settled(b->ctx, entered);
}

void job_derive_nodeps(struct job *j)
{
	jb_derive(j, 0, DEP_UNKNOWN);
}
