/* Dependencies between streams (cuStreamWaitEvent): which job a wait waits for, and when it ended. */
#include <stdlib.h>
#include "analysis/jobs/builder_internal.h"
#include "common/grow_array.h"

bool jb_device_given_up(const struct job_builder *b, const struct bjob *j)
{
	return !b->expect_device || (j->job.flags & JOB_F_FAILED) ||
	       j->stream->max_device_cover > j->cover;
}

/*
 * What a new job's wait on an event depends on: the last job of the event's
 * stream submitted before the event was recorded. Resolved when the job
 * opens if that job is done; otherwise the producer calls back (jb_settle_deps).
 */
void jb_resolve_dep(struct job_builder *b, struct bjob *owner, uint32_t idx)
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
		} else if (jb_device_given_up(b, found)) {
			d->state = DEP_UNKNOWN;
		} else if (!grt_grow_array((void **)&found->dependents, &found->cap_dependents,
				       sizeof(*found->dependents), found->n_dependents + 1)) {
			found->dependents[found->n_dependents++] = (struct dependent){ owner, idx };
			d->producer = found;
			d->state = DEP_PENDING;
		} else {
			b->stats.alloc_failures++;
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
void jb_settle_deps(struct job_builder *b, struct bjob *producer)
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
		jb_want_check(b, dp->job->stream);
	}
	producer->n_dependents = 0;
}

/* A job finished before its producer (forced): the producer must forget it. */
void jb_drop_pending_deps(struct bjob *j)
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

int jb_dep_state_of(struct bjob *j)
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
 * since its launch: fetching what head_ready() and jb_prune_marks() read while
 * j is finalized hides most of the wait for it.
 */
