/* Job builder registries: processes, threads, streams, kernel names; the stream queues. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/builder_internal.h"
#include "common/grow_array.h"
#include "trace/grt_reader.h"
#include "trace/trace_names.h"

struct bjob *jb_job_alloc(struct job_builder *b)
{
	struct bjob *j;

	if (!b->pool) {
		struct bjob *chunk = malloc(POOL_CHUNK * sizeof(*chunk));

		if (!chunk ||
		    grt_grow_array((void **)&b->chunks, &b->cap_chunks, sizeof(void *),
			       b->n_chunks + 1)) {
			free(chunk);
			b->stats.alloc_failures++;
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

void jb_job_release(struct job_builder *b, struct bjob *j)
{
	free(j->nodes);
	free(j->dependents);
	j->job.id = 0; /* stale references (timed_ref) see it is gone */
	j->next = b->pool;
	b->pool = j;
}

/* ---- processes, threads, streams, names ---- */

void jb_set_name(struct job_builder *b, char **slot, const char *name)
{
	char *copy;

	if (!name || (*slot && !strcmp(*slot, name)))
		return;
	copy = strdup(name);
	if (!copy) {
		b->stats.alloc_failures++;
		return;
	}
	free(*slot);
	*slot = copy;
}

struct jproc *jb_proc_get(struct job_builder *b, uint32_t pid)
{
	struct jproc *p;
	uint64_t v;

	if (u64_map_get(&b->procs, pid, &v))
		return (struct jproc *)(uintptr_t)v;
	p = calloc(1, sizeof(*p));
	if (!p || u64_map_put(&b->procs, pid, (uintptr_t)p)) {
		free(p);
		b->stats.alloc_failures++;
		return NULL;
	}
	p->pid = pid;
	p->device = JOB_NO_DEVICE;
	return p;
}

struct jthread *jb_thread_get(struct job_builder *b, uint32_t tid, uint32_t pid)
{
	struct jthread *t;
	uint64_t v;

	if (u64_map_get(&b->threads, tid, &v))
		return (struct jthread *)(uintptr_t)v;
	t = calloc(1, sizeof(*t));
	if (!t) {
		b->stats.alloc_failures++;
		return NULL;
	}
	t->tid = tid;
	t->pid = pid;
	if (u64_map_put(&b->threads, tid, (uintptr_t)t)) {
		free(t);
		b->stats.alloc_failures++;
		return NULL;
	}
	return t;
}

struct jstream *jb_stream_find(struct job_builder *b, uint32_t pid, uint64_t key)
{
	return pid_key_map_get(&b->streams, pid, key);
}

struct jstream *jb_stream_get(struct job_builder *b, uint32_t pid, uint64_t key,
				  uint64_t handle)
{
	struct jstream *s = jb_stream_find(b, pid, key);
	struct jproc *p;

	if (s)
		return s;
	p = jb_proc_get(b, pid);
	s = calloc(1, sizeof(*s));
	if (!p || !s || pid_key_map_put(&b->streams, pid, key, s)) {
		free(s);
		b->stats.alloc_failures++;
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
const char *jb_name_of(struct job_builder *b, uint64_t key, const char *fallback)
{
	uint64_t v;
	char *copy;

	if (u64_map_get(&b->names, key, &v))
		return (const char *)(uintptr_t)v;
	copy = strdup(fallback);
	if (!copy || u64_map_put(&b->names, key, (uintptr_t)copy)) {
		free(copy);
		b->stats.alloc_failures++;
		return "?";
	}
	return copy;
}

void jb_kernel_identity(struct job_builder *b, uint32_t name_str, uint64_t function,
			    uint64_t *key, const char **name)
{
	const char *text = name_str ? grt_strings_get(b->strings, name_str) : NULL;
	char buf[48];

	if (text) {
		*key = name_str;
		*name = jb_name_of(b, *key, text);
		return;
	}
	*key = HANDLE_KEY | (function & (HANDLE_KEY - 1));
	*name = jb_name_of(b, *key, grt_unknown_kernel_name(function, buf, sizeof(buf)));
}

void jb_copy_identity(struct job_builder *b, uint32_t kind, uint32_t copy_kind,
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
	*name = jb_name_of(b, *key, buf);
}

/* ---- the sorted lists of open jobs ---- */

/*
 * An open job is on up to three lists, each sorted and walked from its tail
 * (records come nearly in order): its stream's queue by cover, its stream's
 * untimed jobs and its thread's open jobs by API entry. One insert and one
 * unlink serve them all, named by their head, tail and link fields.
 */
#define LIST_INSERT_SORTED(head, tail, j, next, prev, key)                                      \
	do {                                                                                    \
		struct bjob *after_ = (tail);                                                   \
                                                                                                \
		while (after_ && after_->key > (j)->key)                                        \
			after_ = after_->prev;                                                  \
		(j)->prev = after_;                                                             \
		(j)->next = after_ ? after_->next : (head);                                     \
		if ((j)->next)                                                                  \
			(j)->next->prev = (j);                                                  \
		else                                                                            \
			(tail) = (j);                                                           \
		if (after_)                                                                     \
			after_->next = (j);                                                     \
		else                                                                            \
			(head) = (j);                                                           \
	} while (0)

#define LIST_UNLINK(head, tail, j, next, prev)                                                  \
	do {                                                                                    \
		if ((j)->prev)                                                                  \
			(j)->prev->next = (j)->next;                                            \
		else                                                                            \
			(head) = (j)->next;                                                     \
		if ((j)->next)                                                                  \
			(j)->next->prev = (j)->prev;                                            \
		else                                                                            \
			(tail) = (j)->prev;                                                     \
		(j)->next = (j)->prev = NULL;                                                   \
	} while (0)

void jb_queue_insert(struct jstream *s, struct bjob *j)
{
	LIST_INSERT_SORTED(s->head, s->tail, j, next, prev, cover);
}

void jb_queue_unlink(struct jstream *s, struct bjob *j)
{
	LIST_UNLINK(s->head, s->tail, j, next, prev);
}

void jb_untimed_insert(struct jstream *s, struct bjob *j)
{
	LIST_INSERT_SORTED(s->untimed_head, s->untimed_tail, j, u_next, u_prev, job.api_enter);
	j->in_untimed = true;
}

void jb_untimed_remove(struct jstream *s, struct bjob *j)
{
	if (!j->in_untimed)
		return;
	LIST_UNLINK(s->untimed_head, s->untimed_tail, j, u_next, u_prev);
	j->in_untimed = false;
}

void jb_thread_open_insert(struct jthread *t, struct bjob *j)
{
	LIST_INSERT_SORTED(t->open_head, t->open_tail, j, t_next, t_prev, job.api_enter);
	j->in_thread = true;
}

void jb_thread_open_remove(struct bjob *j)
{
	struct jthread *t = j->thread;

	if (!j->in_thread)
		return;
	if (t->cursor == j)
		t->cursor = j->t_prev ? j->t_prev : j->t_next;
	LIST_UNLINK(t->open_head, t->open_tail, j, t_next, t_prev);
	j->in_thread = false;
	t->done[t->n_done++ % DONE_RING] =
		(struct done_ref){ .api_enter = j->job.api_enter, .kind = j->job.kind,
				   .had_device = j->has_device };
	if (t->n_done == 2 * DONE_RING)
		t->n_done = DONE_RING; /* every slot stays valid; keeps the index small */
}
