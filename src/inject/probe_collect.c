/* Block probes' collection: completed launches' buffers summarized, copied back, reported. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/block_probes.h"
#include "inject/calib.h"
#include "inject/channel.h"
#include "inject/inject.h"
#include "inject/launch_summary.h"
#include "inject/module_jit.h"
#include "inject/ptx_summarize.h"
#include "inject/twin.h"

#define MAX_BATCH_BYTES (8u << 20) /* read per batch: the staging area's first size */
#define CALIB_PERIOD_NS                                                                            \
	100000000ULL /* globaltimer re-measured this often while launches complete */
#define MAX_QUERIES 512
#define MAX_STREAMS 64
#define BLOCK_MSG_MAX 4096 /* block records per message */

struct stream_done {
	uint64_t key;
	uint64_t seq; /* launches up to here on the stream are complete */
	bool blocked; /* an event of it is not done: later ones are not either */
};

static struct stream_done *stream_done_of(struct stream_done *d, unsigned *n, uint64_t key)
{
	for (unsigned i = 0; i < *n; i++)
		if (d[i].key == key)
			return &d[i];
	if (*n == MAX_STREAMS)
		return NULL;
	d[*n] = (struct stream_done){.key = key};
	return &d[(*n)++];
}

/*
 * Marks launches complete whose stream passed a completion event. Called
 * with bp->is->lock held; the driver is queried without it. Only this thread
 * frees pending entries, so the pointers stay valid meanwhile.
 */
static void poll_events(struct block_probes *bp)
{
	struct pending *queries[MAX_QUERIES];
	struct stream_done done[MAX_STREAMS];
	unsigned nq = 0, nd = 0;
	uint64_t max_seq = 0;

	for (struct pending *p = bp->head; p && nq < MAX_QUERIES; p = p->next)
		if (!p->complete && atomic_load_explicit(&p->launched, memory_order_acquire) &&
		    p->event_recorded)
			queries[nq++] = p;
	if (!nq)
		return;
	pthread_mutex_unlock(&bp->is->lock);
	/*
	 * A stream runs in order. Its newest event first: when that one is done
	 * (the usual case once the GPU caught up) one query settles the stream;
	 * otherwise walk from the oldest until one is pending.
	 */
	for (unsigned i = nq; i-- > 0;) {
		struct stream_done *d = stream_done_of(done, &nd, queries[i]->stream_key);

		if (!d || d->seq || d->blocked)
			continue;
		if (bp->st->drv.cuEventQuery(queries[i]->event) == CUDA_SUCCESS)
			d->seq = queries[i]->seq;
		else
			d->blocked = true; /* newest pending: look at the older ones below */
	}
	for (unsigned i = 0; i < nd; i++)
		done[i].blocked = false;
	for (unsigned i = 0; i < nq; i++) {
		struct stream_done *d = stream_done_of(done, &nd, queries[i]->stream_key);

		if (!d || d->blocked || queries[i]->seq <= d->seq)
			continue;
		if (bp->st->drv.cuEventQuery(queries[i]->event) == CUDA_SUCCESS)
			d->seq = queries[i]->seq;
		else
			d->blocked = true;
	}
	pthread_mutex_lock(&bp->is->lock);
	for (unsigned i = 0; i < nd; i++)
		if (done[i].seq > max_seq)
			max_seq = done[i].seq;
	/* the list is in launch order: nothing after the newest completed launch can be complete */
	for (struct pending *p = bp->head; p && p->seq <= max_seq; p = p->next) {
		struct stream_done *d = stream_done_of(done, &nd, p->stream_key);

		if (d && p->seq <= d->seq)
			p->complete = true;
	}
	if (max_seq > bp->max_complete_seq)
		bp->max_complete_seq = max_seq;
}

/* Whether a completed (or failed) launch waits to be collected. Under the lock. */
static bool any_collectable(const struct block_probes *bp)
{
	for (const struct pending *p = bp->head; p && p->seq <= bp->max_complete_seq; p = p->next)
		if ((p->complete || p->failed) &&
		    atomic_load_explicit(&p->launched, memory_order_acquire))
			return true;
	return false;
}

/*
 * The pool runs low and nothing completed is left to collect: this thread
 * (never the application's) sleeps on the oldest completion event in flight,
 * a blocking-sync one, so that the launches before it are collected and
 * their buffers recycled as soon as the GPU is past them, without the
 * application synchronizing. Returns whether it completed. Under the lock,
 * dropped while waiting; only this thread frees entries, so p stays valid.
 */
static bool wait_oldest(struct block_probes *bp)
{
	struct pending *p;
	CUresult res;

	for (p = bp->head; p; p = p->next)
		if (!p->complete && p->event_recorded &&
		    atomic_load_explicit(&p->launched, memory_order_acquire))
			break;
	if (!p)
		return false;
	pthread_mutex_unlock(&bp->is->lock);
	res = bp->st->drv.cuEventSynchronize(p->event);
	pthread_mutex_lock(&bp->is->lock);
	if (res != CUDA_SUCCESS)
		return false;
	/* a stream runs in order: its launches up to this one are done */
	probes_mark_complete(bp, p->stream_key, false, p->seq);
	return true;
}

/*
 * At most what the collection reads of a launch: block mode's summary when the
 * device summarizes it, else the whole slot. Under the lock.
 */
static uint64_t read_bound(struct block_probes *bp, const struct pending *p)
{
	if (bp->mode == GRT_PROBE_BLOCK && !p->blocks_wanted && p->res->summarize_state > 0)
		return grt_probe_totals_bytes(bp->sm_slots);
	return p->slot->size;
}

/* Takes completed launches (oldest first, one context) off the list, up to MAX_BATCH_BYTES read. */
static struct pending *take_completed(struct block_probes *bp)
{
	struct pending *batch = NULL, **batch_tail = &batch, **at = &bp->head, *prev = NULL;
	uint64_t bytes = 0;
	CUcontext ctx = NULL;

	while (*at && (*at)->seq <= bp->max_complete_seq) {
		struct pending *p = *at;

		if (!atomic_load_explicit(&p->launched, memory_order_acquire) ||
		    (!p->complete && !p->failed) || (ctx && p->ctx != ctx) ||
		    (bytes && bytes + read_bound(bp, p) > MAX_BATCH_BYTES)) {
			prev = p;
			at = &p->next;
			continue;
		}
		ctx = p->ctx;
		bytes += read_bound(bp, p);
		*at = p->next;
		if (bp->tail == p)
			bp->tail = prev;
		bp->npending--;
		p->next = NULL;
		*batch_tail = p;
		batch_tail = &p->next;
	}
	return batch;
}

static uint64_t used_bytes(const struct block_probes *bp, const struct pending *p)
{
	uint64_t slots = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];

	if (bp->mode == GRT_PROBE_THREAD)
		slots *= (uint64_t)p->block[0] * p->block[1] * p->block[2];
	if (p->summarized)
		return grt_probe_totals_bytes(bp->sm_slots);
	if (slots > p->slot->capacity)
		slots = p->slot->capacity;
	return grt_probe_buffer_size(bp->mode, slots);
}

/*
 * The host side of the copies back: pinned, so that they are real DMA and
 * asynchronous (a pageable target makes the driver stage and wait).
 * Called on the collection thread with the context current.
 */
static int ensure_staging(struct block_probes *bp, size_t need)
{
	size_t size = MAX_BATCH_BYTES;

	if (bp->staging && bp->staging_size >= need)
		return 0;
	while (size < need)
		size *= 2;
	if (bp->staging)
		bp->st->drv.cuMemFreeHost(bp->staging);
	bp->staging = NULL;
	bp->staging_size = 0;
	if (bp->st->drv.cuMemHostAlloc(&bp->staging, size, CU_MEMHOSTALLOC_PORTABLE))
		return -ENOMEM;
	bp->staging_size = size;
	return 0;
}

static void send_blocks(struct inject_state *st, const struct pending *p,
			const struct grt_gpu_block_rec *blocks, size_t n)
{
	for (size_t done = 0; done < n;) {
		size_t chunk = n - done < BLOCK_MSG_MAX ? n - done : BLOCK_MSG_MAX;
		uint32_t len = (uint32_t)(sizeof(struct inj_blocks) + chunk * sizeof(*blocks));
		struct inj_blocks *msg =
		    st->chan.ring ? shm_ring_reserve(st->chan.ring, INJ_MSG_BLOCKS, len) : NULL;

		if (!msg)
			return;
		channel_fill_head(&msg->head, blocks[done].start_ns);
		msg->head.tid = p->tid;
		msg->count = (uint32_t)chunk;
		msg->reserved = 0;
		memcpy(msg->recs, blocks + done, chunk * sizeof(*blocks));
		shm_ring_commit(st->chan.ring, msg);
		done += chunk;
	}
}

/* Any device time of the launch (the first span it wrote), to pick its calibration. */
static uint64_t first_time(const struct pending *p, const struct grt_probe_span *spans, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (spans[i].tag == p->tag && spans[i].start_ns)
			return spans[i].start_ns;
	return 0;
}

/* The calibration fits around device time t, in map (left empty when there are none). */
static void launch_clock(struct block_probes *bp, uint64_t t, struct clock_fit fits[2],
			 struct clock_pair *map)
{
	if (!calib_bracket(bp->st, t, &fits[0], &fits[1])) {
		map->a = &fits[0];
		map->b = &fits[1];
	}
}

static void send_launch(struct block_probes *bp, const struct pending *p, struct inj_launch *msg,
			uint64_t missing)
{
	struct inject_state *st = bp->st;

	msg->rec.launch_id = p->launch_id;
	msg->rec.api_enter_ns = p->api_enter_ns;
	msg->rec.api_return_ns = p->api_return_ns;
	msg->rec.host_tid = p->tid;
	msg->rec.stream = p->stream;
	msg->rec.lost_blocks = missing;
	msg->name_id = channel_name(&st->chan, p->fn->name);
	channel_fill_head(&msg->head, msg->rec.start_ns ? msg->rec.start_ns : p->api_enter_ns);
	msg->head.tid = p->tid;
	channel_send(&st->chan, INJ_MSG_LAUNCH, msg, sizeof(*msg));
	atomic_fetch_add(&bp->lost_blocks, missing);
}

/* A block-mode launch the device summarized: its summary from the totals. */
static void process_totals(struct block_probes *bp, const struct pending *p, const uint8_t *buf)
{
	const struct grt_probe_sm *sm = (const void *)(buf + GRT_PROBE_SM_OFF);
	uint64_t blocks = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];
	struct clock_fit fits[2];
	struct clock_pair map = {0};
	struct inj_launch msg = {0};

	launch_clock(bp, launch_totals_first_start(sm, bp->sm_slots), fits, &map);
	launch_summarize_totals(sm, bp->sm_slots, (const void *)(buf + GRT_PROBE_HIST_OFF), &map,
				&msg.rec);
	send_launch(bp, p, &msg, blocks > msg.rec.blocks ? blocks - msg.rec.blocks : 0);
}

/* Turns one launch's buffer (copied to host) into block records and its summary. */
static void process_launch(struct block_probes *bp, const struct pending *p, const uint8_t *buf)
{
	const struct grt_probe_head *head = (const void *)buf;
	const struct grt_probe_span *spans = (const void *)(buf + grt_probe_spans_off(bp->mode));
	struct clock_fit fits[2];
	struct clock_pair map = {0};
	uint64_t blocks = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2], missing = 0, n;
	uint32_t tpb = p->block[0] * p->block[1] * p->block[2];
	struct inj_launch msg = {0};
	struct grt_gpu_block_rec *recs;
	size_t got;

	if (head->magic != GRT_PROBE_MAGIC)
		return;
	if (p->summarized) {
		process_totals(bp, p, buf);
		return;
	}
	n = (used_bytes(bp, p) - grt_probe_spans_off(bp->mode)) / sizeof(*spans);
	recs = calloc(blocks ? blocks : 1, sizeof(*recs));
	if (!recs)
		return;
	/* the fits around this launch (its first span is close enough to pick them) */
	launch_clock(bp, first_time(p, spans, n), fits, &map);
	if (bp->mode == GRT_PROBE_THREAD) {
		got = launch_blocks_from_thread_spans(spans, n, p->tag, tpb, p->grid, blocks, &map,
						      p->launch_id, recs, &missing);
	} else {
		got = launch_blocks_from_spans(spans, n, p->tag, p->grid, &map, p->launch_id, recs,
					       &missing);
		missing += blocks - n;
	}
	if (p->blocks_wanted)
		send_blocks(bp->st, p, recs, got);
	launch_summarize(recs, got, &msg.rec);
	send_launch(bp, p, &msg, missing);
	free(recs);
}

/*
 * Waits for our stream with a blocking-sync event: the thread sleeps in the
 * kernel. Polling (cuStreamQuery in a loop) or a spinning synchronize keeps
 * taking the driver's locks and slowed the application's launches 3x on an
 * H100 (bench/RESULTS.md).
 */
static CUresult wait_stream(struct block_probes *bp, struct probe_ctx *r)
{
	struct inject_driver *d = &bp->st->drv;
	CUresult res;

	if (!r->done_event &&
	    d->cuEventCreate(&r->done_event, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING))
		return d->cuStreamSynchronize(r->pool.stream);
	res = d->cuEventRecord(r->done_event, r->pool.stream);
	return res ? res : d->cuEventSynchronize(r->done_event);
}

static int by_address(const void *a, const void *b)
{
	const struct pending *x = *(struct pending *const *)a, *y = *(struct pending *const *)b;

	return x->slot->dptr < y->slot->dptr ? -1 : x->slot->dptr > y->slot->dptr;
}

/* How many slots from sorted[i] on sit back to back in one arena and read the same bytes. */
static size_t run_length(const struct block_probes *bp, struct pending **sorted, size_t i, size_t n)
{
	uint64_t bytes = used_bytes(bp, sorted[i]);
	size_t j = i + 1;

	/* adjacent slots of one arena: two arenas the driver placed back to back are two
	 * allocations, and a 2-D copy that runs from one into the other is refused */
	while (j < n && sorted[j]->slot->size_class == sorted[i]->slot->size_class &&
	       sorted[j]->slot->arena == sorted[i]->slot->arena &&
	       sorted[j]->slot->dptr == sorted[j - 1]->slot->dptr + sorted[j - 1]->slot->size &&
	       used_bytes(bp, sorted[j]) == bytes)
		j++;
	return j - i;
}

/* One run of adjacent slots that all read `bytes`: the first bytes of each, one 2-D copy. */
static CUresult copy_rows(struct block_probes *bp, struct probe_ctx *r, struct pending **sorted,
			  size_t len, uint64_t bytes, uint64_t off)
{
	CUDA_MEMCPY2D c = {
	    .srcMemoryType = CU_MEMORYTYPE_DEVICE,
	    .srcDevice = sorted[0]->slot->dptr,
	    .srcPitch = sorted[0]->slot->size,
	    .dstMemoryType = CU_MEMORYTYPE_HOST,
	    .dstHost = (uint8_t *)bp->staging + off,
	    .dstPitch = bytes,
	    .WidthInBytes = bytes,
	    .Height = len,
	};

	for (size_t j = 0; j < len; j++)
		sorted[j]->staging_off = off + j * bytes;
	return bp->st->drv.cuMemcpy2DAsync_v2(&c, r->pool.stream);
}

/*
 * Queues the copies of what is read of the launches' buffers to the staging
 * area: one 2-D copy per run of adjacent slots that read the same bytes
 * (block mode's summaries: the PCIe traffic of the copies back slows the
 * application's launches, bench/RESULTS.md), one plain copy per slot
 * otherwise. Returns the driver's result; the caller waits for the stream.
 */
static CUresult copy_back(struct block_probes *bp, struct probe_ctx *r, struct pending **sorted,
			  size_t n)
{
	uint64_t off = 0, need = 0;
	CUresult res = CUDA_SUCCESS;

	for (size_t i = 0; i < n; i++)
		need += used_bytes(bp, sorted[i]);
	if (ensure_staging(bp, need))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n && !res;) {
		size_t len = run_length(bp, sorted, i, n);
		uint64_t bytes = used_bytes(bp, sorted[i]);

		stat_add(&bp->st->stats.drain_driver_calls, 1);
		res = copy_rows(bp, r, sorted + i, len, bytes, off);
		off += len * bytes;
		i += len;
	}
	return res;
}

/*
 * Loads __grt_summarize in r's context (current), once: on the first launch
 * in the context, which compiles the application's module too (a JIT later,
 * on the collection thread, would hold the driver while the application launches).
 * False when the host must summarize.
 */
bool probes_summarizer_ready(struct block_probes *bp, struct probe_ctx *r)
{
	struct inject_driver *d = &bp->st->drv;
	char why[200] = "";
	void *image = NULL;
	size_t size;
	bool hit;
	CUmodule mod;
	CUresult res = CUDA_ERROR_INVALID_VALUE;

	if (r->summarize_state || bp->mode != GRT_PROBE_BLOCK)
		return r->summarize_state > 0;
	r->summarize_state = -1;
	if (!module_jit_compile(bp->st, bp->is->driver_version, grt_summarize_ptx,
				strlen(grt_summarize_ptx), module_jit_device_arch(bp->st), &image, &size,
				&hit, why, sizeof(why))) {
		res = d->cuModuleLoadDataEx(&mod, image, 0, NULL, NULL);
		if (!res)
			res = d->cuModuleGetFunction(&r->summarize, mod, GRT_SUMMARIZE_KERNEL);
	}
	free(image);
	if (res) {
		channel_status(&bp->st->chan, INJ_PART_PROBES, -EIO,
			       "the probe summarizer did not load (CUDA error %d%s%s): launches are "
			       "summarized on the host from their spans",
			       res, why[0] ? ", " : "", why);
		return false;
	}
	r->summarize_state = 1;
	return true;
}

/* Room for n jobs in the mapped pinned work list; its device address in *dptr. */
static int ensure_jobs(struct block_probes *bp, size_t n, CUdeviceptr *dptr)
{
	struct inject_driver *d = &bp->st->drv;
	size_t cap = bp->jobs_cap ? bp->jobs_cap : 1024;
	void *host;

	while (cap < n)
		cap *= 2;
	if (cap != bp->jobs_cap) {
		if (d->cuMemHostAlloc(&host, cap * sizeof(*bp->jobs),
				      CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE))
			return -ENOMEM;
		if (bp->jobs)
			d->cuMemFreeHost(bp->jobs);
		bp->jobs = host;
		bp->jobs_cap = cap;
	}
	return d->cuMemHostGetDevicePointer_v2(dptr, bp->jobs, 0) ? -EIO : 0;
}

/*
 * The collection's pinned host buffers, made once on the first launch (which
 * compiles modules anyway) with the application's context current: pinning
 * memory takes the driver's locks for milliseconds, which at the first
 * collection would stall launches being submitted. A batch reads at most
 * MAX_BATCH_BYTES, so the staging area rarely grows later, and the job list
 * is made for the largest batch of summaries: a pool recycled while the
 * application runs collects up to that many at once. Under the lock.
 */
void probes_collection_buffers(struct block_probes *bp)
{
	CUdeviceptr unused;

	if (bp->staging)
		return;
	ensure_staging(bp, MAX_BATCH_BYTES);
	if (bp->mode == GRT_PROBE_BLOCK)
		ensure_jobs(bp, MAX_BATCH_BYTES / grt_probe_totals_bytes(bp->sm_slots) + 1, &unused);
}

/*
 * Block mode: queues the device summary (totals and histogram from the
 * spans) of the batch's launches whose blocks are not wanted, one CTA each,
 * on our stream ahead of the copies, and marks them summarized. When the
 * summarizer cannot run, nothing is marked and their spans are read instead.
 */
static void summarize_batch(struct block_probes *bp, struct probe_ctx *r, struct pending **reads,
			    size_t n)
{
	size_t njobs = 0;
	CUdeviceptr jobs;
	unsigned sm_slots = bp->sm_slots;
	void *args[2] = {&jobs, &sm_slots};

	if (bp->mode != GRT_PROBE_BLOCK || !probes_summarizer_ready(bp, r) || ensure_jobs(bp, n, &jobs))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct pending *p = reads[i];
		uint64_t blocks = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];

		if (p->blocks_wanted)
			continue;
		bp->jobs[njobs++] = (struct grt_probe_summary_job){
		    .buffer = p->slot->dptr,
		    .spans = (uint32_t)(blocks < p->slot->capacity ? blocks : p->slot->capacity),
		    .tag = p->tag,
		};
	}
	if (!njobs)
		return;
	stat_add(&bp->st->stats.drain_driver_calls, 1);
	if (bp->st->drv.cuLaunchKernel(r->summarize, (unsigned)njobs, 1, 1, GRT_SUMMARIZE_THREADS,
				       1, 1, 0, r->pool.stream, args, NULL))
		return;
	for (size_t i = 0; i < n; i++)
		reads[i]->summarized = !reads[i]->blocks_wanted;
}

/* One launch's slot back to the pool: spans are tagged and totals rewritten, nothing to clean. */
static void return_slot(struct block_probes *bp, struct pending *p, CUresult res)
{
	if (res && !p->failed)
		atomic_fetch_add(&bp->unread, 1); /* its records could not be read */
	pool_slot_put(&bp->pool, p->slot);
}

/* A batch that could not be read back: said once, its launches counted lost. */
static void say_unread(struct block_probes *bp, size_t n, CUresult res, const char *step)
{
	if (atomic_exchange(&bp->unread_said, true))
		return;
	channel_status(&bp->st->chan, INJ_PART_PROBES, -EIO,
		       "block probes: reading back %zu launches failed (CUDA error %d at %s); "
		       "their records are counted lost",
		       n, res, step);
}

/*
 * Copies back what is read of a batch's launches (block mode: the device's
 * summary, or the spans of launches whose blocks are wanted; thread mode:
 * the first launches only), reports them and returns the slots. Returns how
 * many launches it took. Without the lock.
 */
static size_t collect(struct block_probes *bp, struct pending *batch)
{
	struct inject_driver *d = &bp->st->drv;
	struct pending **sorted, **reads;
	struct probe_ctx *r;
	size_t n = 0, nreads = 0, taken = 0;
	const char *step;
	CUresult res;

	if (!batch)
		return 0;
	/* the launches are complete: a fit taken now brackets their device times */
	calib_refresh(bp->st, CALIB_PERIOD_NS);
	for (struct pending *p = batch; p; p = p->next)
		taken++;
	sorted = malloc(2 * taken * sizeof(*sorted));
	reads = sorted ? sorted + taken : NULL;
	n = 0;
	for (struct pending *p = batch; sorted && p; p = p->next)
		sorted[n++] = p;
	if (sorted)
		qsort(sorted, n, sizeof(*sorted), by_address);
	for (size_t i = 0; i < n; i++)
		if (!sorted[i]->failed)
			reads[nreads++] = sorted[i];
	r = batch->res;
	step = "making the context current";
	res = !sorted || d->cuCtxPushCurrent_v2(batch->ctx) ? CUDA_ERROR_INVALID_VALUE
								  : CUDA_SUCCESS;
	if (!res) {
		CUcontext popped;

		/* the summary, the copies behind it, then one wait: the fewer round trips
		 * through the driver beside the application's launches, the better */
		if (nreads)
			summarize_batch(bp, r, reads, nreads);
		step = "the copies back";
		res = nreads ? copy_back(bp, r, reads, nreads) : CUDA_SUCCESS;
		if (!res && nreads) {
			step = "the wait for the copies";
			res = wait_stream(bp, r);
		}
		/* in launch order, as the recorder expects them */
		for (struct pending *p = batch; p && !res; p = p->next)
			if (!p->failed)
				process_launch(bp, p, (uint8_t *)bp->staging + p->staging_off);
		d->cuCtxPopCurrent_v2(&popped);
	}
	if (res && nreads)
		say_unread(bp, nreads, res, step);
	pthread_mutex_lock(&bp->is->lock);
	while (batch) {
		struct pending *next = batch->next;

		return_slot(bp, batch, res);
		if (batch->event && r)
			probes_event_put(r, batch->event);
		probes_pending_free(bp, batch);
		batch = next;
	}
	pthread_cond_broadcast(&bp->slot_freed);
	pthread_mutex_unlock(&bp->is->lock);
	free(sorted);
	return taken;
}

/*
 * The collection: completion events polled, completed launches read back in
 * batches (one context each). At exit every launch is complete (each context
 * was synchronized). Under the lock, dropped while a batch is read.
 */
void probes_collect(void *self, enum instr_collect_reason why)
{
	struct block_probes *bp = self;
	struct inject_stats *stats = &bp->st->stats;
	bool running = why == INSTR_COLLECT_RUNNING;
	struct pending *batch;
	uint64_t t0 = inject_now_ns(), t1;

	if (running) {
		poll_events(bp);
		if (pool_exhausted(&bp->pool) && !any_collectable(bp) && wait_oldest(bp))
			poll_events(bp); /* what else completed meanwhile */
	} else {
		for (struct pending *p = bp->head; p; p = p->next)
			p->complete = true;
		bp->max_complete_seq = UINT64_MAX;
	}
	t1 = inject_now_ns();
	while ((batch = take_completed(bp))) {
		size_t n;

		pthread_mutex_unlock(&bp->is->lock);
		n = collect(bp, batch);
		pthread_mutex_lock(&bp->is->lock);
		if (running) {
			stat_add(&stats->drain_batches, 1);
			atomic_fetch_add(&bp->recycled, n);
			/* a long read-back holds up the ticks, and the launches keep taking events */
			probes_events_top_up(bp);
		}
	}
	/* the cost line is about the running collection; the one at exit costs the exit */
	if (running) {
		stat_add(&stats->drain_poll_ns, t1 - t0);
		stat_add(&stats->drain_collect_ns, inject_now_ns() - t1);
	}
}
