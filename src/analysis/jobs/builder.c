/* Job builder entry points: records in, host calls open jobs; the other parts are named in builder_internal.h. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/builder_internal.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"
#include "trace/records_kernel.h"
#include "trace/records_uvm.h"
#include "trace/trace_names.h"

static struct bjob *new_job(struct job_builder *b, const struct grt_record *rec,
			    const struct grt_cuda_call *call, uint32_t kind, uint64_t stream)
{
	bool returned = grt_cuda_call_returned(call) && call->return_ns;
	bool per_thread = call->api < GRT_CUDA_API_COUNT && b->ptsz_api[call->api];
	struct jstream *s = jb_stream_get(b, rec->hdr.pid, stream_key(stream, per_thread, rec->hdr.tid),
				       stream);
	struct jthread *t = jb_thread_get(b, rec->hdr.tid, rec->hdr.pid);
	struct bjob *j;

	if (!s || !t)
		return NULL;
	j = jb_job_alloc(b);
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
	if (call->flags & GRT_CUDA_F_OWN)
		j->job.flags |= JOB_F_OWN;
	jb_set_name(b, &t->comm, grt_strings_get(b->strings, call->comm_str));
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
		jb_resolve_dep(b, j, i);
	/* newest first; the ring is in time order, so stop at the first one before the call */
	for (uint32_t i = 0; i < t->n_ring && i < OFFCPU_RING; i++) {
		const struct offcpu *o = &t->ring[(t->n_ring - 1 - i) % OFFCPU_RING];

		if (o->on < j->job.api_enter)
			break;
		jb_add_offcpu(j, o);
	}
	if (t->last_stream == s && t->last_submit && j->job.api_enter >= t->last_submit &&
	    j->job.api_enter - t->last_submit <= b->t.batch_gap_ns)
		j->job.batch_id = t->batch_id;
	else
		j->job.batch_id = t->batch_id = j->job.id;
	t->last_stream = s;
	t->last_submit = j->cover;
	t->last_job = j;
	jb_queue_insert(s, j);
	if (!(j->job.flags & JOB_F_FAILED)) {
		jb_untimed_insert(s, j);
		jb_thread_open_insert(t, j);
		jb_claim_orphans(b, j);
	}
	b->open++;
	if (b->open > b->stats.max_open)
		b->stats.max_open = b->open;
	jb_want_check(b, s);
	jb_enforce_open_limit(b, s);
}

static void on_launch(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_launch_rec *l = rec->payload;
	struct bjob *j = new_job(b, rec, &l->call, JOB_KERNEL, l->stream);

	if (!j)
		return;
	jb_kernel_identity(b, l->kernel_str, l->function, &j->job.kernel_key, &j->job.name);
	/* traces from before the own flag: grtrace's kernels are known by their names */
	if (!(j->job.kernel_key & HANDLE_KEY) &&
	    !strncmp(j->job.name, GRT_OWN_KERNEL_PREFIX, strlen(GRT_OWN_KERNEL_PREFIX)))
		j->job.flags |= JOB_F_OWN;
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
	j->job.name = jb_name_of(b, j->job.kernel_key, buf);
	open_job(b, j);
}

static void on_memcpy(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_memcpy_rec *m = rec->payload;
	struct bjob *j;

	/* no bytes, no work on the GPU and no device record (XLA copies 0 bytes): no job */
	if (!m->bytes)
		return;
	j = new_job(b, rec, &m->call, JOB_MEMCPY, m->is_async ? m->stream : 0);
	if (!j)
		return;
	j->job.copy_kind = m->kind;
	j->job.bytes = m->bytes;
	jb_copy_identity(b, JOB_MEMCPY, m->kind, &j->job.kernel_key, &j->job.name);
	if (!m->is_async) {
		/* the call returns when the copy is done: its return is the COMPLETE */
		j->job.flags |= JOB_F_SYNC_CALL;
		j->job.missing &= ~JOB_MISS_SUBMIT;
		j->job.complete = j->job.submit;
		j->job.submit = 0;
		if (j->job.complete && b->ops.host_wait && !(j->job.flags & JOB_F_OWN))
			b->ops.host_wait(b->ctx, rec->hdr.pid, rec->hdr.tid, rec->hdr.ts_ns,
					 j->job.complete);
	}
	open_job(b, j);
}

static void on_memset(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_cuda_memset_rec *m = rec->payload;
	struct bjob *j;

	if (!m->bytes)
		return; /* as a copy of no bytes */
	j = new_job(b, rec, &m->call, JOB_MEMSET, m->stream);
	if (!j)
		return;
	j->job.bytes = m->bytes;
	jb_copy_identity(b, JOB_MEMSET, 0, &j->job.kernel_key, &j->job.name);
	open_job(b, j);
}

static void on_process(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_process_rec *pr = rec->payload;
	struct jproc *p = jb_proc_get(b, rec->hdr.pid);

	if (p)
		jb_set_name(b, &p->comm, grt_strings_get(b->strings, pr->comm_str));
}

/*
 * The gpu source's status records come from two places. The recorder writes
 * those of the source itself (skipped, never reported): no thread. The
 * injected library writes those of its parts (CUPTI, block probes,
 * calibration) from a thread of the target: a part that failed leaves the
 * others timing the device, so only the first kind stops jobs from waiting.
 */
static void on_source_status(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_source_status_rec *st = rec->payload;
	const char *why;

	if (st->source != GRT_SRC_GPU || st->status >= 0 || !b->expect_device || rec->hdr.tid)
		return;
	/* the gpu source did not run: no job waits for device timing any more */
	b->expect_device = false;
	why = grt_strings_get(b->strings, st->message_str);
	snprintf(b->gpu_not_running, sizeof(b->gpu_not_running), "%s", why ? why : "no reason given");
	for (struct jstream *s = b->all_streams; s; s = s->all_next)
		jb_want_check(b, s);
}

/* ---- entry points ---- */

/*
 * The reader hands out payloads of described records zero-extended to their
 * current size: device records of older traces, shorter, read with their
 * later fields 0 (unknown). So their older size is what must be there.
 */
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
			jb_on_sync(b, rec);
		break;
	case GRT_REC_GPU_KERNEL:
		if (payload_fits(rec, GRT_GPU_KERNEL_REC_V1_0_LEN))
			jb_on_gpu_kernel(b, rec);
		break;
	case GRT_REC_GPU_LAUNCH:
		if (payload_fits(rec, GRT_GPU_LAUNCH_REC_V1_0_LEN))
			jb_on_gpu_launch(b, rec);
		break;
	case GRT_REC_GPU_COPY:
		if (payload_fits(rec, GRT_GPU_COPY_REC_V1_0_LEN))
			jb_on_gpu_copy(b, rec);
		break;
	case GRT_REC_SCHED_OFFCPU:
		if (payload_fits(rec, sizeof(struct grt_sched_offcpu_rec)))
			jb_on_offcpu(b, rec);
		break;
	case GRT_REC_UVM_EVENT:
		if (payload_fits(rec, sizeof(struct grt_uvm_event_rec)))
			jb_on_uvm(b, rec);
		break;
	case GRT_REC_PROCESS:
		if (payload_fits(rec, sizeof(struct grt_process_rec)))
			on_process(b, rec);
		break;
	case GRT_REC_DROP:
		if (payload_fits(rec, sizeof(struct grt_drop_rec)) &&
		    ((const struct grt_drop_rec *)rec->payload)->source == GRT_SRC_CUDA)
			b->stats.cuda_drops += ((const struct grt_drop_rec *)rec->payload)->count;
		break;
	case GRT_REC_SOURCE_STATUS:
		if (payload_fits(rec, sizeof(struct grt_source_status_rec)))
			on_source_status(b, rec);
		break;
	default:
		break;
	}
	jb_run_checks(b);
	if (++b->records % ADVANCE_EVERY == 0) {
		jb_expire_orphans(b, false);
		jb_run_checks(b);
		jb_advance(b);
	}
}

void job_builder_finish(struct job_builder *b)
{
	jb_expire_orphans(b, true);
	b->now = UINT64_MAX;
	jb_run_checks(b);
	/* what is still open now never got all its events */
	for (struct jstream *s = b->all_streams; s; s = s->all_next)
		while (s->head)
			jb_finalize(b, s->head, false);
	if (b->ops.advance)
		b->ops.advance(b->ctx, UINT64_MAX);
	if (b->ops.settled)
		b->ops.settled(b->ctx, UINT64_MAX);
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
		free(((struct jthread *)(uintptr_t)v)->device_waiters);
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

const char *job_builder_gpu_not_running(const struct job_builder *b)
{
	return b->gpu_not_running[0] ? b->gpu_not_running : NULL;
}

uint64_t job_builder_process_device_records(const struct job_builder *b, uint32_t pid)
{
	uint64_t v;

	return u64_map_get(&b->procs, pid, &v) ? ((struct jproc *)(uintptr_t)v)->device_records : 0;
}
