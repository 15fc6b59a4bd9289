/* Block probes as an instrumentation: rewrite with ptx_rewrite, a probe buffer per launch. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "inject/block_probes.h"
#include "inject/channel.h"
#include "inject/inject.h"
#include "inject/module_jit.h"
#include "inject/own_thread.h"
#include "inject/ptx_rewrite.h"
#include "inject/twin.h"

#define EVENT_EVERY 64 /* launches per stream between completion events (syncs say more) */
/*
 * Completion events made ahead of need per context, when it opens and then
 * by the collection thread (at its ticks and between the batches it reads
 * back, topped up below three quarters): a launch that finds none free
 * hands cuEventCreate to the worker thread and waits for it (the cost line's
 * "driver calls handed to the worker"), a thread's wake-up and back: 30-50
 * us on the H100 machines. 128 events are 8,192 launches of a stream, what a
 * vector add launches in 45 ms. With 32, topped up below half at the ticks
 * only, a collection reading back for milliseconds left 15-27 launches of
 * 10,000 waiting there (bench/RESULTS.md, run 71); with 64, topped up below
 * 48 between read-back batches too, 0 and 5 (runs 72, 74).
 */
#define EVENT_RESERVE 128
/*
 * A context whose events cannot be made (the driver out of resources, the
 * context gone) is left alone for a while, 100 ms doubling to 5 s, rather
 * than asked again at every collection tick and every due launch.
 */
#define EVENT_REST_FIRST_MS 100u
#define EVENT_REST_MOST_MS 5000u
#define POOL_WAIT_NS 1000000000ULL
#define PENDING_CHUNK 256

/*
 * SM slots worth reading back: the device's SM count rounded up to 16 (SM ids
 * may run a little past the count), all of them when it cannot be asked. A
 * block on an SM beyond stays uncounted and shows as a lost block.
 */
static unsigned device_sm_slots(struct inject_state *st)
{
	CUdevice dev;
	int sms = 0;

	if (st->drv.cuCtxGetDevice(&dev) ||
	    st->drv.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) ||
	    sms <= 0 || sms > (int)GRT_PROBE_SM_SLOTS - 16)
		return GRT_PROBE_SM_SLOTS;
	return ((unsigned)sms + 15) / 16 * 16;
}

struct driver_job {
	struct inject_driver *drv;
	CUevent event;
	CUdeviceptr dptr;
	uint64_t bytes;
	CUresult res;
};

static void event_job(void *arg)
{
	struct driver_job *j = arg;

	/* blocking-sync: the collection thread sleeps on one when the pool runs low */
	j->res = j->drv->cuEventCreate(&j->event, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING);
}

/*
 * The pool's budget when GRTRACE_GPU_POOL_MB does not set it: 1/64 of the
 * device's memory, from 256 MiB to 1 GiB. Arenas are made as launches wait
 * for the GPU, so a program that never runs far ahead of it never takes it
 * all; one that does (the vector add queues ~2,500 launches of 72 KiB) needs
 * it to keep every launch probed (bench/RESULTS.md).
 */
#define POOL_DEFAULT_MIN (256ull << 20)
#define POOL_DEFAULT_MAX (1024ull << 20)

static uint64_t default_pool_bytes(struct inject_state *st)
{
	CUdevice dev;
	size_t total = 0;
	uint64_t bytes;

	if (!st->drv.cuDeviceTotalMem_v2 || st->drv.cuCtxGetDevice(&dev) ||
	    st->drv.cuDeviceTotalMem_v2(&total, dev))
		return POOL_DEFAULT_MIN;
	bytes = (uint64_t)total / 64;
	return bytes < POOL_DEFAULT_MIN ? POOL_DEFAULT_MIN
	       : bytes > POOL_DEFAULT_MAX ? POOL_DEFAULT_MAX
					  : bytes >> 20 << 20;
}

/* Device memory for probe buffers: below the tag bits of the probe parameter, or none. */
static void alloc_job(void *arg)
{
	struct driver_job *j = arg;

	j->res = j->drv->cuMemAlloc_v2(&j->dptr, j->bytes);
	if (!j->res && (j->dptr + j->bytes - 1) & ~GRT_PROBE_ADDR_MASK) {
		j->drv->cuMemFree_v2(j->dptr);
		j->res = CUDA_ERROR_INVALID_VALUE;
	}
}

/* A driver call of the launch path made on the worker thread, its wait counted. */
static void worker_call(struct block_probes *bp, CUcontext ctx, void (*job)(void *),
			struct driver_job *j)
{
	uint64_t start = inject_now_ns();

	own_thread_run(ctx, job, j);
	stat_add(&bp->st->stats.probe_worker_calls, 1);
	stat_add(&bp->st->stats.probe_worker_ns, inject_now_ns() - start);
}

/* Up to n new completion events into out, in the current context: how many were made. */
static unsigned events_make(struct inject_driver *drv, CUevent *out, unsigned n)
{
	struct driver_job j = {.drv = drv};
	unsigned made = 0;

	while (made < n) {
		event_job(&j);
		if (j.res != CUDA_SUCCESS)
			break;
		out[made++] = j.event;
	}
	return made;
}

/* Whether r's events are resting after a failure (EVENT_REST_*); under the lock. */
static bool events_resting(const struct probe_ctx *r, uint64_t now)
{
	return now < r->events_retry_ns;
}

/* What the last try to make r's events gave: all it wanted, or a rest before the next. */
static void events_tried(struct probe_ctx *r, bool all, uint64_t now)
{
	if (all) {
		r->events_rest_ms = 0;
		return;
	}
	r->events_rest_ms = !r->events_rest_ms ? EVENT_REST_FIRST_MS
			    : r->events_rest_ms >= EVENT_REST_MOST_MS / 2 ? EVENT_REST_MOST_MS
								       : r->events_rest_ms * 2;
	r->events_retry_ns = now + r->events_rest_ms * 1000000ull;
}

/* A context's first reserve of events, on the worker with its context current. */
static void events_reserve_first(struct block_probes *bp, struct probe_ctx *r)
{
	CUevent made[EVENT_RESERVE];
	unsigned n = events_make(&bp->st->drv, made, EVENT_RESERVE);

	for (unsigned k = 0; k < n; k++)
		probes_event_put(r, made[k]);
}

/*
 * The collection thread, under the lock: a context whose free events ran
 * below three quarters of the reserve gets them made again, the lock
 * dropped meanwhile (the launch path takes events while they are made).
 */
void probes_events_top_up(struct block_probes *bp)
{
	for (unsigned i = 0; i < bp->nctxs; i++) {
		struct probe_ctx *r = bp->ctxs[i];
		CUevent made[EVENT_RESERVE];
		unsigned n = 0, want;
		uint64_t now = inject_now_ns();
		CUcontext popped;

		if (r->nfree_events >= EVENT_RESERVE * 3 / 4 || events_resting(r, now))
			continue;
		want = EVENT_RESERVE - r->nfree_events;
		pthread_mutex_unlock(&bp->is->lock);
		if (!bp->st->drv.cuCtxPushCurrent_v2(r->pool.ctx)) {
			n = events_make(&bp->st->drv, made, want);
			bp->st->drv.cuCtxPopCurrent_v2(&popped);
		}
		pthread_mutex_lock(&bp->is->lock);
		for (unsigned k = 0; k < n; k++)
			probes_event_put(r, made[k]);
		events_tried(r, n == want, now);
	}
}

/*
 * A completion event from the free list, or a new one (made on the worker
 * thread), or NULL while the context's events rest after a failure.
 */
static CUevent event_get(struct block_probes *bp, struct probe_ctx *r)
{
	struct driver_job j = {.drv = &bp->st->drv};
	uint64_t now;

	if (r->nfree_events)
		return r->free_events[--r->nfree_events];
	/* none left, and none could be made a moment ago: the launch goes without */
	now = inject_now_ns();
	if (events_resting(r, now))
		return NULL;
	worker_call(bp, r->pool.ctx, event_job, &j);
	events_tried(r, j.res == CUDA_SUCCESS, now);
	return j.res == CUDA_SUCCESS ? j.event : NULL;
}

void probes_event_put(struct probe_ctx *r, CUevent e)
{
	if (r->nfree_events == r->cap_events) {
		unsigned cap = r->cap_events ? r->cap_events * 2 : 64;
		CUevent *bigger = realloc(r->free_events, cap * sizeof(*bigger));

		if (!bigger)
			return; /* leaks one event handle; harmless */
		r->free_events = bigger;
		r->cap_events = cap;
	}
	r->free_events[r->nfree_events++] = e;
}

/*
 * Whether to record a completion event after this launch; under the lock.
 * Every EVENT_EVERY launches per stream, or every eighth of the slots of its
 * size the budget holds when that is fewer: the collection recycles a bounded
 * pool in steps of the launches between two events, so a small pool needs
 * them closer.
 */
static bool event_due(struct block_probes *bp, uint64_t key, const struct pool_slot *slot)
{
	struct stream_count *c = &bp->streams[handle_hash(key) % PROBE_STREAM_SLOTS];
	uint64_t every = bp->pool.budget / slot->size >> 3;

	if (c->key != key) {
		c->key = key;
		c->since_event = 0;
	}
	if (++c->since_event >= (every < EVENT_EVERY ? (every ? every : 1) : EVENT_EVERY)) {
		c->since_event = 0;
		return true;
	}
	return false;
}

/*
 * A pending entry from the free list, refilled a chunk at a time (entries
 * are never freed: the launch path does no malloc); the caller sets every
 * field (no memset of the whole entry per launch). Under the lock.
 */
static struct pending *pending_new(struct block_probes *bp)
{
	struct pending *p = bp->free_pending;

	if (!p) {
		struct pending *chunk = calloc(PENDING_CHUNK, sizeof(*chunk));

		if (!chunk)
			return NULL;
		for (unsigned i = PENDING_CHUNK; i-- > 1;) {
			chunk[i].next = bp->free_pending;
			bp->free_pending = &chunk[i];
		}
		return &chunk[0];
	}
	bp->free_pending = p->next;
	return p;
}

void probes_pending_free(struct block_probes *bp, struct pending *p)
{
	p->next = bp->free_pending;
	bp->free_pending = p;
}

/*
 * A completion event behind the launch, in its stream's order: recorded on
 * the launching thread itself (a per-thread default stream is only that
 * thread's), lent to grtrace for the call (own_thread.h). A launch on the
 * per-thread default stream records on that stream: the NULL stream of
 * cuEventRecord would be the legacy one, which waits for every blocking
 * stream and makes them wait for it.
 */
static bool record_completion(struct block_probes *bp, CUevent e, const struct instr_launch *l)
{
	CUstream stream = l->cfg->hStream;

	if (!stream && l->ptsz)
		stream = CU_STREAM_PER_THREAD;
	return own_thread_record_event(e, stream, true) == CUDA_SUCCESS;
}

/* Waits (pool_wait mode) for the collection to free a slot; under the lock. */
static struct pool_slot *slot_wait(struct block_probes *bp, struct probe_ctx *r, uint64_t bytes,
				   const struct instr_launch *l)
{
	uint64_t deadline = inject_now_ns() + POOL_WAIT_NS;
	struct pool_slot *slot = NULL;
	CUevent e = event_get(bp, r);
	struct pending *last = NULL;

	/* make sure what holds the slots can complete: an event after this stream's launches */
	for (struct pending *p = bp->head; p; p = p->next)
		if (p->stream_key == l->stream_key &&
		    atomic_load_explicit(&p->launched, memory_order_acquire))
			last = p;
	if (e && last && !last->event && record_completion(bp, e, l)) {
		last->event = e;
		last->event_recorded = true;
	} else if (e) {
		probes_event_put(r, e);
	}
	pthread_cond_signal(&bp->is->wake);
	while (!slot && bp->npending && inject_now_ns() < deadline) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&bp->slot_freed, &bp->is->lock, &ts);
		slot = pool_slot_get(&bp->pool, &r->pool, bytes);
	}
	return slot;
}

/*
 * Thread mode's launches whose records are not read (all but the first of
 * each kernel) all write one scratch buffer per context, grown to the
 * largest launch: the probe runs in full, nothing is collected, and the
 * buffer, rewritten launch after launch, tends to stay in the GPU's L2
 * cache. Buffers outgrown stay allocated (a launch may still be writing
 * one). Fills *out; NULL when over the pool budget. Under the lock.
 */
static struct pending *launch_scratch(struct block_probes *bp, struct probe_ctx *r,
				      const struct instr_launch *l, uint64_t spans,
				      struct pending *out)
{
	uint64_t bytes = grt_probe_buffer_size(GRT_PROBE_THREAD, spans);
	struct driver_job j = {.drv = &bp->st->drv, .bytes = bytes};
	CUdeviceptr d;

	if (spans > r->scratch_spans) {
		if (bp->pool.used + bytes > bp->pool.budget)
			return NULL;
		worker_call(bp, r->pool.ctx, alloc_job, &j);
		if (j.res != CUDA_SUCCESS)
			return NULL;
		d = j.dptr;
		bp->pool.used += bytes;
		r->scratch = d;
		r->scratch_spans = spans;
	}
	memset(out, 0, sizeof(*out));
	out->unlisted = true;
	out->fn = l->fn;
	out->seq = l->seq;
	out->param = grt_probe_param(r->scratch, 1);
	return out;
}

/* Thread mode's unlisted launches: one entry per thread, used between begin and end only. */
static __thread struct pending scratch_pending;

/*
 * The launch's probe buffer and its pending entry, appended to the list in
 * launch order but not yet `launched` (the collection skips it until then):
 * one critical section per launch. Under the lock.
 */
/*
 * The first launch that found no buffer: the trace says where the probes'
 * records started to be lost, since this is a capacity limit and not a kernel
 * the probes do not cover (CUPTI's kernel timing stays as it was).
 */
static void say_pool_dry(struct block_probes *bp, const struct instr_launch *l)
{
	struct inject_state *st = bp->st;

	channel_status(&st->chan, INJ_PART_PROBES, 0,
		       "block probes: the buffer pool (%llu MiB) ran dry at launch %llu (kernel %s); "
		       "launches run unprobed until collection frees buffers, each counted lost "
		       "(GRTRACE_GPU_POOL_MB, GRTRACE_GPU_POOL_WAIT=1)",
		       (unsigned long long)(bp->pool.budget >> 20), (unsigned long long)l->seq,
		       l->fn->name);
}

static int probes_launch_begin(void *self, struct instr_launch *l, unsigned index,
			       uint64_t *params)
{
	struct block_probes *bp = self;
	struct inject_state *st = bp->st;
	struct probe_ctx *r = l->context->priv[index];
	const CUlaunchConfig *cfg = l->cfg;
	uint64_t slots = (uint64_t)cfg->gridDimX * cfg->gridDimY * cfg->gridDimZ;
	struct pool_slot *slot;
	struct pending *p;
	bool wanted;

	/* past its first launches, a kernel's count is no longer written (a locked add saved) */
	wanted = st->cfg.block_launches < 0 ||
		 (atomic_load_explicit(&l->fn->launches, memory_order_relaxed) <
		      (unsigned)st->cfg.block_launches &&
		  atomic_fetch_add(&l->fn->launches, 1) < (unsigned)st->cfg.block_launches);
	if (bp->mode == GRT_PROBE_THREAD)
		slots *= (uint64_t)cfg->blockDimX * cfg->blockDimY * cfg->blockDimZ;
	if (bp->mode == GRT_PROBE_THREAD && !wanted) {
		p = launch_scratch(bp, r, l, slots, &scratch_pending);
		if (!p) {
			atomic_fetch_add(&bp->no_buffer, 1); /* runs unchanged; counted as lost */
			return -ENOSPC;
		}
		l->priv[index] = p;
		*params = p->param;
		return 0;
	}
	slot = pool_slot_get(&bp->pool, &r->pool, grt_probe_buffer_size(bp->mode, slots));
	/* a long GRTRACE_GPU_DRAIN_MS must not let the pool run dry: wake the collection, once,
	 * as the class crosses its low-water mark (a wake is a system call) */
	if (slot && pool_class_low(&bp->pool, slot))
		pthread_cond_signal(&bp->is->wake);
	/* nothing frees a slot before exit when collection waits for it */
	if (!slot && st->cfg.pool_wait && !st->cfg.collect_at_exit)
		slot = slot_wait(bp, r, grt_probe_buffer_size(bp->mode, slots), l);
	if (!slot || !(p = pending_new(bp))) {
		if (slot)
			pool_slot_put(&bp->pool, slot);
		if (!atomic_fetch_add(&bp->no_buffer, 1))
			say_pool_dry(bp, l);
		return -ENOSPC; /* runs unchanged; counted as lost */
	}
	p->next = NULL;
	p->event = NULL;
	p->event_recorded = p->failed = p->unlisted = p->complete = p->summarized = false;
	atomic_store_explicit(&p->launched, false, memory_order_relaxed);
	p->seq = l->seq;
	p->launch_id = ((uint64_t)st->pid << 32) | (p->seq & 0xffffffffu);
	p->stream_key = l->stream_key;
	p->stream = (uint64_t)(uintptr_t)cfg->hStream;
	p->ctx = l->context->ctx;
	p->res = r;
	p->fn = l->fn;
	p->slot = slot;
	p->tid = l->tid;
	/* never 0: that is what fresh memory holds */
	p->tag = slot->tag = slot->tag == UINT16_MAX ? 1 : slot->tag + 1;
	p->param = grt_probe_param(slot->dptr, p->tag);
	p->grid[0] = cfg->gridDimX, p->grid[1] = cfg->gridDimY, p->grid[2] = cfg->gridDimZ;
	p->block[0] = cfg->blockDimX, p->block[1] = cfg->blockDimY, p->block[2] = cfg->blockDimZ;
	p->blocks_wanted = wanted;
	if (event_due(bp, p->stream_key, slot))
		p->event = event_get(bp, r);
	if (bp->tail)
		bp->tail->next = p;
	else
		bp->head = p;
	bp->tail = p;
	if (++bp->npending > bp->most_pending)
		bp->most_pending = bp->npending;
	l->priv[index] = p;
	*params = p->param;
	return 0;
}

/* After the launch: its completion event, then the collection may take it. No lock. */
static void probes_launch_end(void *self, struct instr_launch *l, unsigned index, CUresult res)
{
	struct block_probes *bp = self;
	struct pending *p = l->priv[index];

	if (res != CUDA_SUCCESS)
		p->failed = true;
	else
		p->event_recorded = p->event && record_completion(bp, p->event, l);
	p->api_enter_ns = l->api_enter_ns;
	p->api_return_ns = l->api_return_ns;
	if (!p->unlisted)
		atomic_store_explicit(&p->launched, true, memory_order_release);
}

static int probes_rewrite(void *self, const char *ptx, size_t len, struct ptx_rewrite_result *res)
{
	struct block_probes *bp = self;
	struct ptx_rewrite_opts opts = {
	    .mode = bp->mode,
	    .kernel_regex = bp->st->cfg.kernels[0] ? bp->st->cfg.kernels : NULL,
	};

	return ptx_rewrite(ptx, len, &opts, res);
}

/*
 * The context's stream, the summarizer and the collection's pinned buffers,
 * made at its first instrumented launch (which compiles modules anyway): a
 * JIT or pinning later, on the collection thread, would hold the driver while
 * the application launches. Under the lock.
 */
static int probes_context_open(void *self, struct instr_context *c, void **priv)
{
	struct block_probes *bp = self;
	struct probe_ctx *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->pool.ctx = c->ctx;
	if (bp->st->drv.cuStreamCreate(&r->pool.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
		free(r);
		return -EIO;
	}
	if (!bp->sm_slots)
		bp->sm_slots = device_sm_slots(bp->st);
	if (!bp->pool.budget)
		bp->pool.budget = default_pool_bytes(bp->st);
	probes_summarizer_ready(bp, r);
	probes_collection_buffers(bp);
	events_reserve_first(bp, r);
	if (bp->nctxs < INSTR_MAX_CTXS)
		bp->ctxs[bp->nctxs++] = r;
	*priv = r;
	return 0;
}

bool probes_mark_complete(struct block_probes *bp, uint64_t key, bool all, uint64_t token)
{
	bool any = false;

	for (struct pending *p = bp->head; p && p->seq <= token; p = p->next)
		if ((all || p->stream_key == key) && !p->complete &&
		    atomic_load_explicit(&p->launched, memory_order_acquire))
			p->complete = any = true;
	if (any && token > bp->max_complete_seq)
		bp->max_complete_seq = token;
	return any;
}

static void probes_synchronized(void *self, uint64_t key, bool all, uint64_t token)
{
	struct block_probes *bp = self;

	if (probes_mark_complete(bp, key, all, token))
		pthread_cond_signal(&bp->is->wake);
}

static bool probes_pending(void *self)
{
	return ((struct block_probes *)self)->npending != 0;
}

static void probes_tick(void *self)
{
	struct block_probes *bp = self;

	pool_top_up(&bp->pool);
	probes_events_top_up(bp);
}

/* A class running low whose budget allows no more arenas: collect to free slots. */
static bool probes_collect_due(void *self)
{
	return pool_exhausted(&((struct block_probes *)self)->pool);
}

static void probes_stop(void *self)
{
	struct block_probes *bp = self;
	struct inject_state *st = bp->st;

	channel_drops(&st->chan, INJ_DROP_PROBE,
		      atomic_load(&bp->no_buffer) + atomic_load(&bp->unread));
	channel_status(&st->chan, INJ_PART_PROBES, 0,
		       "probes: %llu launches instrumented, %llu ran unchanged after a failed "
		       "instrumented launch, %llu without a probe buffer, %llu not read back, "
		       "%llu blocks lost; "
		       "%llu collected while running (buffers recycled), pool %llu of %llu MiB, "
		       "at most %u launches held buffers at once",
		       (unsigned long long)atomic_load(&st->stats.probe_launches),
		       (unsigned long long)atomic_load(&bp->is->fallbacks),
		       (unsigned long long)atomic_load(&bp->no_buffer),
		       (unsigned long long)atomic_load(&bp->unread),
		       (unsigned long long)atomic_load(&bp->lost_blocks),
		       (unsigned long long)atomic_load(&bp->recycled),
		       (unsigned long long)(bp->pool.used >> 20),
		       (unsigned long long)(bp->pool.budget >> 20), bp->most_pending);
}

int block_probes_register(struct instr_state *is, char *why, size_t why_len)
{
	struct inject_state *st = is->st;
	struct block_probes *bp = calloc(1, sizeof(*bp));
	int err;

	if (!bp) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	bp->st = st;
	bp->is = is;
	bp->mode = st->cfg.probe_mode;
	bp->pool.st = st;
	bp->pool.mode = bp->mode;
	bp->pool.budget = st->cfg.pool_bytes;
	bp->pool.lock = &is->lock;
	pthread_cond_init(&bp->pool.grown, NULL);
	pthread_cond_init(&bp->slot_freed, NULL);
	bp->ops = (struct instrumentation){
	    .name = bp->mode == GRT_PROBE_THREAD ? "thread probes" : "block probes",
	    .nr_params = 1,
	    .self = bp,
	    .rewrite = probes_rewrite,
	    .launch_begin = probes_launch_begin,
	    .launch_end = probes_launch_end,
	    .context_open = probes_context_open,
	    .synchronized = probes_synchronized,
	    .pending = probes_pending,
	    .tick = probes_tick,
	    .collect_due = probes_collect_due,
	    .collect = probes_collect,
	    .stop = probes_stop,
	};
	err = instr_register(is, &bp->ops);
	if (err) {
		snprintf(why, why_len, "too many instrumentations");
		free(bp);
		return err;
	}
	channel_status(&st->chan, INJ_PART_PROBES, 0, "%s probes on for %s (cache %s)",
		       bp->mode == GRT_PROBE_THREAD ? "thread" : "block",
		       st->cfg.kernels[0] ? st->cfg.kernels : "every kernel with PTX",
		       st->cfg.cache_dir);
	return 0;
}
