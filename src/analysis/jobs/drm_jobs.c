/* The DRM feeder of the job analysis: drm records (and fence waits) become jobs. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/drm_jobs.h"
#include "analysis/jobs/builder.h"
#include "common/grow_array.h"
#include "common/min_heap.h"
#include "common/u64_map.h"
#include "trace/records_drm.h"
#include "trace/records_kernel.h"

#define NO_SLOT UINT32_MAX
#define MAX_OPEN 65536u		/* open jobs kept before the oldest is handed out as it is */

/*
 * An in-order engine: a scheduler ring, an i915 engine, a virtqueue. Allocated one by one and
 * kept as long as the analysis: jobs point at its name.
 */
struct drm_ring {
	char name[48];		/* the ring string, or "engine CLASS:INSTANCE" for i915 */
	uint32_t index;
	uint64_t last_end;	/* END of the last job that completed on it */
	uint32_t fifo_head;	/* commands awaiting their response, oldest first (kernels without seqno) */
	uint32_t fifo_tail;
};

struct djob {
	struct job j;
	uint32_t ring;
	uint32_t next;		/* in the ring's FIFO, or in the free list */
	uint32_t done_next;	/* in the list of completed jobs, by completion */
	uint64_t done_at;
	uint64_t keys[4];	/* what maps to this job, forgotten when it goes */
	uint8_t nkeys;
	bool in_use;
	bool done;
	bool in_done_list;	/* its slot is reused only once the list let go of it */
};

/* A drm or fence record waiting for the records written after it but older (DRM_JOB_REORDER_NS). */
struct held_record {
	uint64_t ts;		/* the heap's key */
	struct grt_record_header hdr;
	union {
		struct grt_drm_job_rec drm;
		struct grt_fence_rec fence;
	} payload;
};

struct drm_jobs {
	void (*emit)(void *ctx, struct job *j);
	void *ctx;
	struct djob *jobs;
	uint32_t cap, used, free_head, open;
	uint32_t done_head, done_tail;
	uint32_t oldest;	/* a hint: no open job has a smaller slot-creation order */
	struct u64_map by_key;	/* job_key() -> slot */
	struct drm_ring **rings;
	uint32_t nrings, rings_cap;
	struct u64_map ring_of;	/* ring key -> index */
	struct u64_map streams;	/* pid << 32 | ring -> stream index within the process, + 1 */
	struct u64_map streams_per_pid;
	struct held_record *held;	/* a min-heap by time */
	uint32_t nheld, held_cap;
	const struct grt_strings *strings;	/* the reader's, valid until drm_jobs_finish */
	uint64_t newest;	/* the newest time read */
	uint64_t now;		/* the time of the record handled last */
	uint64_t next_id;
	uint64_t handed_out;
};

/*
 * Keys of the map from an event to its job, one space per kind of identity (the high byte),
 * so that a fence address and an i915 (context, seqno) never meet.
 */
enum key_kind { KEY_FENCE = 1, KEY_SCHED_ID, KEY_REQUEST, KEY_VIRTQUEUE, KEY_VIRTIO_FENCE, KEY_FENCE_SEQNO };

static uint64_t mix(uint64_t a, uint64_t b)
{
	return (a * 0x9e3779b97f4a7c15ull) ^ b;
}

static uint64_t job_key(enum key_kind kind, uint64_t value)
{
	return (uint64_t)kind << 56 | (value & ((1ull << 56) - 1));
}

struct drm_jobs *drm_jobs_new(void (*emit)(void *ctx, struct job *j), void *ctx)
{
	struct drm_jobs *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->emit = emit;
	d->ctx = ctx;
	d->free_head = d->done_head = d->done_tail = NO_SLOT;
	d->next_id = DRM_JOB_ID_BASE;
	u64_map_init(&d->by_key);
	u64_map_init(&d->ring_of);
	u64_map_init(&d->streams);
	u64_map_init(&d->streams_per_pid);
	return d;
}

void drm_jobs_free(struct drm_jobs *d)
{
	if (!d)
		return;
	u64_map_destroy(&d->by_key);
	u64_map_destroy(&d->ring_of);
	u64_map_destroy(&d->streams);
	u64_map_destroy(&d->streams_per_pid);
	for (uint32_t i = 0; i < d->nrings; i++)
		free(d->rings[i]);
	free(d->rings);
	free(d->jobs);
	free(d->held);
	free(d);
}

uint64_t drm_jobs_count(const struct drm_jobs *d)
{
	return d->handed_out;
}

static struct drm_ring *ring_of(struct drm_jobs *d, const struct grt_drm_job_rec *r,
				const struct grt_strings *strings)
{
	bool engine = r->driver == GRT_DRM_I915;
	uint64_t key = engine ? mix(GRT_DRM_I915, (uint64_t)r->arg0 << 16 | r->arg1)
			      : (uint64_t)r->driver << 56 | r->ring_str;
	struct drm_ring *ring;
	uint64_t v;

	if (u64_map_get(&d->ring_of, key, &v))
		return d->rings[v];
	if (grt_grow_array((void **)&d->rings, &d->rings_cap, sizeof(*d->rings), d->nrings + 1))
		return NULL;
	ring = calloc(1, sizeof(*ring));
	if (!ring || u64_map_put(&d->ring_of, key, d->nrings)) {
		free(ring);
		return NULL;
	}
	ring->index = d->nrings;
	ring->fifo_head = ring->fifo_tail = NO_SLOT;
	if (engine)
		snprintf(ring->name, sizeof(ring->name), "engine %u:%u", r->arg0, r->arg1);
	else if (grt_strings_get(strings, r->ring_str))
		snprintf(ring->name, sizeof(ring->name), "%s", grt_strings_get(strings, r->ring_str));
	d->rings[d->nrings++] = ring;
	return ring;
}

static struct djob *slot(struct drm_jobs *d, uint32_t i)
{
	return i == NO_SLOT ? NULL : &d->jobs[i];
}

static void remember(struct drm_jobs *d, uint32_t i, uint64_t key)
{
	struct djob *j = &d->jobs[i];

	if (j->nkeys < sizeof(j->keys) / sizeof(j->keys[0]) && !u64_map_put(&d->by_key, key, i))
		j->keys[j->nkeys++] = key;
}

static uint32_t find(struct drm_jobs *d, uint64_t key)
{
	uint64_t v;

	return u64_map_get(&d->by_key, key, &v) ? (uint32_t)v : NO_SLOT;
}

/* The stream of a job: its ring, numbered per process in order of first use. */
static uint32_t stream_index(struct drm_jobs *d, uint32_t pid, uint32_t ring)
{
	uint64_t key = (uint64_t)pid << 32 | ring, v, n = 0;

	if (u64_map_get(&d->streams, key, &v))
		return (uint32_t)v;
	u64_map_get(&d->streams_per_pid, pid, &n);
	u64_map_put(&d->streams_per_pid, pid, n + 1);
	u64_map_put(&d->streams, key, n);
	return (uint32_t)n;
}

static uint32_t open_job(struct drm_jobs *d, const struct grt_record *rec, const struct grt_drm_job_rec *r,
			 const struct drm_ring *ring)
{
	uint32_t i;
	struct djob *j;

	if (d->free_head != NO_SLOT) {
		i = d->free_head;
		d->free_head = d->jobs[i].next;
	} else {
		if (grt_grow_array((void **)&d->jobs, &d->cap, sizeof(*d->jobs), d->used + 1))
			return NO_SLOT;
		i = d->used++;
	}
	j = &d->jobs[i];
	*j = (struct djob){ .ring = ring->index, .next = NO_SLOT, .done_next = NO_SLOT, .in_use = true };
	j->j.id = d->next_id++;
	j->j.pid = rec->hdr.pid;
	j->j.tid = rec->hdr.tid;
	j->j.kind = JOB_DRM;
	j->j.device = DRM_JOB_DEVICE_BASE + ring->index;
	j->j.stream = ring->index;
	j->j.stream_index = stream_index(d, rec->hdr.pid, ring->index);
	if (r->driver == GRT_DRM_VIRTIO_GPU && grt_virtio_gpu_cmd_name(r->arg0))
		j->j.name = grt_virtio_gpu_cmd_name(r->arg0);
	else
		j->j.name = ring->name[0] ? ring->name : grt_drm_driver_name(r->driver);
	j->j.kernel_key = (uintptr_t)j->j.name;
	j->j.flags = JOB_F_TAIL_UNCHECKED;
	d->open++;
	return i;
}

static void free_slot(struct drm_jobs *d, uint32_t i)
{
	d->jobs[i].next = d->free_head;
	d->free_head = i;
}

/* Hands a job out, marked with what it misses. */
static void hand_out(struct drm_jobs *d, uint32_t i, bool forced)
{
	struct djob *dj = &d->jobs[i];
	struct job *j = &dj->j;

	if (!j->submit)
		j->missing |= JOB_MISS_SUBMIT;
	if (!j->end)
		j->missing |= JOB_MISS_DEVICE;
	if (!j->complete)
		j->missing |= JOB_MISS_COMPLETE;
	if (forced)
		j->flags |= JOB_F_FORCED;
	job_derive_nodeps(j);
	d->emit(d->ctx, j);
	d->handed_out++;
	for (uint8_t k = 0; k < dj->nkeys; k++)
		u64_map_remove(&d->by_key, dj->keys[k], NULL);
	dj->in_use = false;
	d->open--;
	if (!dj->in_done_list)
		free_slot(d, i);
}

/* The hardware finished job i: its END, and its START where only the ring's order tells. */
static void completed(struct drm_jobs *d, uint32_t i, uint64_t ts)
{
	struct djob *dj = &d->jobs[i];
	struct drm_ring *ring = d->rings[dj->ring];

	if (dj->done)
		return;
	dj->j.end = ts;
	if (!dj->j.start && dj->j.submit) {
		/* a ring runs its jobs in order: this one began when it was there and the previous had ended */
		dj->j.start = dj->j.submit > ring->last_end ? dj->j.submit : ring->last_end;
		dj->j.flags |= JOB_F_RING_ORDER;
	}
	if (ts > ring->last_end)
		ring->last_end = ts;
	dj->done = true;
	dj->done_at = d->now;
	dj->in_done_list = true;
	if (d->done_tail == NO_SLOT)
		d->done_head = i;
	else
		d->jobs[d->done_tail].done_next = i;
	d->done_tail = i;
}

/* Jobs completed long enough ago that no wait for them will come any more go out. */
static void settle(struct drm_jobs *d)
{
	while (d->done_head != NO_SLOT) {
		uint32_t i = d->done_head;
		struct djob *dj = &d->jobs[i];

		if (dj->in_use && d->now - dj->done_at < DRM_JOB_SETTLE_NS)
			break;
		d->done_head = dj->done_next;
		if (d->done_head == NO_SLOT)
			d->done_tail = NO_SLOT;
		dj->in_done_list = false;
		if (dj->in_use)
			hand_out(d, i, false);
		else
			free_slot(d, i);
	}
}

/* The job an event is about, opened when the event can begin one. */
static uint32_t job_of(struct drm_jobs *d, const struct grt_record *rec, const struct grt_drm_job_rec *r,
		       struct drm_ring *ring)
{
	bool begins = r->event == GRT_DRM_ALLOC || r->event == GRT_DRM_COMMIT ||
		      (r->event == GRT_DRM_SUBMIT && r->driver != GRT_DRM_AMDGPU);
	uint32_t i = NO_SLOT;

	switch (r->driver) {
	case GRT_DRM_SCHED:
	case GRT_DRM_XE:
		i = find(d, job_key(KEY_FENCE, r->fence));
		break;
	case GRT_DRM_AMDGPU:
		i = r->fence ? find(d, job_key(KEY_FENCE, r->fence)) : NO_SLOT;
		if (i == NO_SLOT)
			i = find(d, job_key(KEY_SCHED_ID, r->job));
		break;
	case GRT_DRM_I915:
		i = find(d, job_key(KEY_REQUEST, mix(r->context, r->seqno)));
		break;
	case GRT_DRM_VIRTIO_GPU:
		if (r->event == GRT_DRM_SUBMIT)
			break;	/* every command is a job of its own */
		if (r->job)
			i = find(d, job_key(KEY_VIRTQUEUE, mix(ring->index, r->job)));
		else if ((i = ring->fifo_head) != NO_SLOT)
			ring->fifo_head = d->jobs[i].next;	/* responses come in the order commands went */
		if (ring->fifo_head == NO_SLOT)
			ring->fifo_tail = NO_SLOT;
		break;
	}
	if (i != NO_SLOT || !begins)
		return i;
	i = open_job(d, rec, r, ring);
	if (i == NO_SLOT)
		return i;
	/* every identity this event carries leads to the job from now on */
	if (r->fence)
		remember(d, i, job_key(KEY_FENCE, r->fence));
	if (r->job && r->driver != GRT_DRM_VIRTIO_GPU)
		remember(d, i, job_key(KEY_SCHED_ID, r->job));
	if (r->driver == GRT_DRM_I915)
		remember(d, i, job_key(KEY_REQUEST, mix(r->context, r->seqno)));
	if (r->driver == GRT_DRM_AMDGPU)	/* its finished fence's (context, seqno): the host's waits */
		remember(d, i, job_key(KEY_FENCE_SEQNO, mix(r->context, r->seqno)));
	if (r->driver == GRT_DRM_VIRTIO_GPU) {
		if (r->job) {
			remember(d, i, job_key(KEY_VIRTQUEUE, mix(ring->index, r->job)));
		} else {
			if (ring->fifo_tail == NO_SLOT)
				ring->fifo_head = i;
			else
				d->jobs[ring->fifo_tail].next = i;
			ring->fifo_tail = i;
		}
		if (r->arg1 & 1)	/* VIRTIO_GPU_FLAG_FENCE: fence id = the dma_fence seqno */
			remember(d, i, job_key(KEY_VIRTIO_FENCE, r->seqno));
	}
	return i;
}

static void on_drm(struct drm_jobs *d, const struct grt_record *rec, const struct grt_strings *strings)
{
	const struct grt_drm_job_rec *r = rec->payload;
	struct drm_ring *ring = ring_of(d, r, strings);
	uint64_t ts = rec->hdr.ts_ns;
	struct djob *dj;
	uint32_t i;

	if (!ring || (i = job_of(d, rec, r, ring)) == NO_SLOT)
		return;
	dj = &d->jobs[i];
	switch (r->event) {
	case GRT_DRM_ALLOC:
	case GRT_DRM_COMMIT:
		if (!dj->j.api_enter)
			dj->j.api_enter = ts;
		break;
	case GRT_DRM_SUBMIT:
		if (!dj->j.api_enter)
			dj->j.api_enter = ts;
		if (!dj->j.submit)
			dj->j.submit = ts;
		if (r->job && r->driver == GRT_DRM_AMDGPU)
			remember(d, i, job_key(KEY_SCHED_ID, r->job));
		break;
	case GRT_DRM_RUNNING:
		if (!dj->j.start)
			dj->j.start = ts;
		break;
	case GRT_DRM_COMPLETE:
		completed(d, i, ts);
		break;
	case GRT_DRM_RETIRE:
		completed(d, i, ts);	/* where no event says the hardware finished, retiring does */
		break;
	case GRT_DRM_WAIT_END:
		if (!dj->j.complete && dj->done && rec->hdr.pid == dj->j.pid) {
			dj->j.complete = ts;
			hand_out(d, i, false);
		}
		break;
	default:
		break;
	}
}

/* A wait of the submitter's process on a job's fence ending: the host woken. */
static void on_fence(struct drm_jobs *d, const struct grt_record *rec, const struct grt_strings *strings)
{
	const struct grt_fence_rec *f = rec->payload;
	const char *driver = grt_strings_get(strings, f->driver_str);
	uint32_t i;
	struct djob *dj;

	if (f->event != GRT_FENCE_WAIT_END || !(f->flags & GRT_FENCE_F_WAIT_MATCHED))
		return;
	if (driver && !strcmp(driver, "virtio_gpu"))
		i = find(d, job_key(KEY_VIRTIO_FENCE, f->seqno));
	else
		i = find(d, job_key(KEY_FENCE_SEQNO, mix(f->context, f->seqno)));
	if (!(dj = slot(d, i)) || dj->j.complete || rec->hdr.pid != dj->j.pid)
		return;
	if (!dj->done)
		completed(d, i, rec->hdr.ts_ns);	/* woken, so done: its signal went unseen */
	dj->j.complete = rec->hdr.ts_ns;
	hand_out(d, i, false);
}

static void handle(struct drm_jobs *d, const struct grt_record *rec, const struct grt_strings *strings)
{
	if (rec->hdr.ts_ns > d->now)
		d->now = rec->hdr.ts_ns;
	if (rec->hdr.type == GRT_REC_DRM_JOB)
		on_drm(d, rec, strings);
	else
		on_fence(d, rec, strings);
	settle(d);
	if (d->open > MAX_OPEN) {
		/* bounded memory: the oldest open job goes out as it is */
		for (uint32_t i = d->oldest; i < d->used; i++)
			if (d->jobs[i].in_use && !d->jobs[i].done) {
				hand_out(d, i, true);
				d->oldest = i + 1;
				break;
			}
	}
}

/* Handles the held records older than until, oldest first. */
static void release_held(struct drm_jobs *d, uint64_t until, const struct grt_strings *strings)
{
	struct held_record h;
	struct grt_record rec;

	while (d->nheld && d->held[0].ts < until) {
		grt_min_heap_pop(d->held, &d->nheld, sizeof(*d->held), offsetof(struct held_record, ts), &h);
		rec = (struct grt_record){ .hdr = h.hdr, .payload = &h.payload };
		handle(d, &rec, strings);
	}
}

void drm_jobs_record(struct drm_jobs *d, const struct grt_record *rec, const struct grt_strings *strings)
{
	size_t need = rec->hdr.type == GRT_REC_DRM_JOB ? sizeof(struct grt_drm_job_rec)
		      : rec->hdr.type == GRT_REC_FENCE ? sizeof(struct grt_fence_rec) : 0;

	d->strings = strings;
	if (rec->hdr.ts_ns > d->newest)
		d->newest = rec->hdr.ts_ns;
	if (!need || rec->hdr.payload_len < need) {
		/* not ours: it only moves the time on */
	} else if (grt_grow_array((void **)&d->held, &d->held_cap, sizeof(*d->held), d->nheld + 1)) {
		handle(d, rec, strings);	/* no memory to hold it: handled in file order */
	} else {
		struct held_record *h = &d->held[d->nheld++];

		h->ts = rec->hdr.ts_ns;
		h->hdr = rec->hdr;
		h->hdr.payload_len = (uint32_t)need;
		memcpy(&h->payload, rec->payload, need);
		grt_min_heap_up(d->held, d->nheld, sizeof(*d->held), offsetof(struct held_record, ts));
	}
	if (d->newest > DRM_JOB_REORDER_NS)
		release_held(d, d->newest - DRM_JOB_REORDER_NS, strings);
}

void drm_jobs_finish(struct drm_jobs *d)
{
	release_held(d, UINT64_MAX, d->strings);
	for (uint32_t i = 0; i < d->used; i++) {
		d->jobs[i].in_done_list = false;
		if (d->jobs[i].in_use)
			hand_out(d, i, false);
	}
	d->done_head = d->done_tail = NO_SLOT;
}

uint64_t drm_jobs_frontier(const struct drm_jobs *d)
{
	/* a held record may still open a job, no earlier than its own time */
	uint64_t frontier = d->nheld ? d->held[0].ts : UINT64_MAX;

	for (uint32_t i = 0; i < d->used && d->open; i++) {
		const struct djob *dj = &d->jobs[i];
		uint64_t earliest = dj->j.start ? dj->j.start : dj->j.submit ? dj->j.submit : dj->j.api_enter;

		if (dj->in_use && earliest && earliest < frontier)
			frontier = earliest;
	}
	return frontier;
}
