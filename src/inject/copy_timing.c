/* Copies and memsets timed with CUDA events while CUPTI is not loaded (copy_timing.h). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/copy_timing.h"
#include "inject/cupti.h"
#include "inject/inject.h"
#include "inject/inject_proto.h"
#include "inject/instrument.h"
#include "inject/own_thread.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"

#define COPY_CTXS 16
#define PENDING 4096		    /* copies waiting for their events (a power of two) */
/*
 * Making an event costs the driver microseconds: the collection thread keeps
 * this many ready per context, so that the application's thread takes them
 * made (a loop of copies made two per copy otherwise: bench/RESULTS.md).
 */
#define EVENTS_LOW 256
#define EVENTS_BATCH 256
/*
 * Where CUDA events cost more than CUPTI would: a copy timed with events
 * costs ~4.5 us more than one timed by CUPTI, and CUPTI in the process costs
 * each launch ~1 us (H100: bench/RESULTS.md). So once a process has made at
 * least SWITCH_MIN_COPIES copies and one for every SWITCH_LAUNCHES_PER_COPY
 * launches or fewer, CUPTI is loaded for its copies (GRTRACE_GPU_COPY_EVENTS=
 * always keeps events).
 */
#define SWITCH_MIN_COPIES 256
#define SWITCH_LAUNCHES_PER_COPY 4
#define CLOCK_SAMPLES 8
#define CLOCK_MAX_AGE_NS 500000000ULL /* event times are floats in ms: re-anchor often */
#define SAMPLE_SPIN_NS 50000000ULL    /* one calibration event may take this long */
/* event times relative to the anchor can be negative: kept as this plus the difference */
#define REL_ZERO (1ULL << 62)
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2

/* One context's events and the event clock's calibration there. */
struct copy_ctx {
	CUcontext ctx;
	uint32_t device;
	CUstream own;	     /* the calibration's stream: non-blocking, grtrace's */
	CUevent *free_events;
	unsigned nfree, cap;
	CUevent anchor;	     /* every event time is read against it */
	struct clock_fit fit; /* anchor-relative event time (+ REL_ZERO) against CLOCK_MONOTONIC */
	uint64_t anchored_ns; /* 0: no calibration yet */
	bool broken;	     /* the calibration failed: copies here are not timed */
};

struct pending_copy {
	struct copy_ctx *cc;
	CUevent start, end;
	struct grt_gpu_copy_rec rec; /* everything but the times */
};

/* Benchmark switches (GRTRACE_GPU_COPY_EVENTS): what each part of the timing costs. */
enum copy_events_mode {
	COPY_EVENTS_ON,
	COPY_EVENTS_NO_LEND,	 /* "nolend": recorded without lending the thread its grtrace name */
	COPY_EVENTS_NO_TIMING,	 /* "notiming": events without timestamps (nothing is sent) */
	COPY_EVENTS_NO_COLLECT,	 /* "nocollect": recorded, never read (nothing is sent) */
	COPY_EVENTS_ALWAYS,	 /* "always": never hand the copies to CUPTI for their rate */
};

struct copy_timing {
	pthread_mutex_t lock;
	atomic_bool on;
	enum copy_events_mode mode;
	struct copy_ctx ctxs[COPY_CTXS];
	unsigned nctx;
	struct pending_copy pending[PENDING];
	unsigned head, tail; /* pending[tail .. head) wait, in call order */
	atomic_uint waiting;
	atomic_ullong timed, untimed, failed_events;
	atomic_ullong made_on_app; /* events the application's thread had to make itself */
	atomic_ullong queued;	   /* copies timed so far */
	atomic_bool switch_asked;
	_Atomic uint64_t cupti_since_ns; /* handed over (without CUPTI's callbacks, the test) */
	atomic_ullong left_to_cupti;	 /* copies of ours CUPTI recorded too: not sent twice */
	uint64_t worst_error_ns;
	/* the collection thread's: when it last read, and the application's syncs by then */
	uint64_t last_collect_ns;
	unsigned last_syncs;
};

static struct copy_timing copy_timing = {.lock = PTHREAD_MUTEX_INITIALIZER};

void copy_timing_start(struct inject_state *st)
{
	if (!st->cfg.copy_events) {
		channel_status(&st->chan, INJ_PART_CUPTI, -ECANCELED,
			       "copies and memsets not timed on the device until CUPTI is loaded "
			       "(GRTRACE_GPU_COPY_EVENTS=0)");
		return;
	}
	if (!st->drv.cuEventElapsedTime) {
		channel_status(&st->chan, INJ_PART_CUPTI, -ENOSYS,
			       "copies and memsets not timed: the driver lacks cuEventElapsedTime");
		return;
	}
	const char *mode = getenv(GRT_INJECT_ENV_COPY_EVENTS);

	if (mode && !strcmp(mode, "nolend"))
		copy_timing.mode = COPY_EVENTS_NO_LEND;
	else if (mode && !strcmp(mode, "notiming"))
		copy_timing.mode = COPY_EVENTS_NO_TIMING;
	else if (mode && !strcmp(mode, "nocollect"))
		copy_timing.mode = COPY_EVENTS_NO_COLLECT;
	else if (mode && !strcmp(mode, "always"))
		copy_timing.mode = COPY_EVENTS_ALWAYS;
	st->copies = &copy_timing;
	atomic_store(&copy_timing.on, true);
	channel_status(&st->chan, INJ_PART_CUPTI, 0,
		       "copies and memsets timed with CUDA events until CUPTI is loaded");
}

bool copy_timing_is_on(const struct inject_state *st)
{
	return st->copies && atomic_load(&st->copies->on);
}

void copy_timing_handoff(struct inject_state *st, uint64_t since_ns)
{
	if (!st->copies)
		return;
	atomic_store(&st->copies->cupti_since_ns, since_ns);
	atomic_store(&st->copies->on, false);
}

/* A context's entry, made on first use; NULL when full. Under the lock. */
static struct copy_ctx *ctx_of(struct inject_state *st, struct copy_timing *t, CUcontext ctx)
{
	struct copy_ctx *cc;
	CUdevice dev = 0;

	for (unsigned i = 0; i < t->nctx; i++)
		if (t->ctxs[i].ctx == ctx)
			return &t->ctxs[i];
	if (t->nctx == COPY_CTXS)
		return NULL;
	cc = &t->ctxs[t->nctx++];
	cc->ctx = ctx;
	if (st->drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS)
		cc->device = (uint32_t)dev;
	return cc;
}

/* A new event of the current context, timed unless the benchmark switch says not. */
static bool event_make(struct inject_state *st, CUevent *e)
{
	unsigned flags = copy_timing.mode == COPY_EVENTS_NO_TIMING ? CU_EVENT_DISABLE_TIMING : 0;

	return st->drv.cuEventCreate(e, flags) == CUDA_SUCCESS;
}

/* A timing event of the current context (cc's); NULL when none can be made. Under the lock. */
static CUevent event_take(struct inject_state *st, struct copy_ctx *cc)
{
	CUevent e = NULL;

	if (cc->nfree)
		return cc->free_events[--cc->nfree];
	atomic_fetch_add_explicit(&copy_timing.made_on_app, 1, memory_order_relaxed);
	return event_make(st, &e) ? e : NULL;
}

/* Under the lock. */
static void event_give(struct copy_ctx *cc, CUevent e)
{
	if (!e)
		return;
	if (cc->nfree == cc->cap) {
		unsigned cap = cc->cap ? cc->cap * 2 : 64;
		CUevent *grown = realloc(cc->free_events, cap * sizeof(*grown));

		if (!grown)
			return; /* leaked to the driver: it goes with the context */
		cc->free_events = grown;
		cc->cap = cap;
	}
	cc->free_events[cc->nfree++] = e;
}

/*
 * In the call's stream, on the application's thread (a per-thread default
 * stream is only that thread's), lent to grtrace for the call (own_thread.h).
 * Sync copies go to the legacy default stream, or the thread's own.
 */
static bool record_in(CUevent e, uint64_t stream)
{
	return own_thread_record_event(e, (CUstream)(uintptr_t)(stream == 0x1 ? 0 : stream),
				       copy_timing.mode != COPY_EVENTS_NO_LEND) == CUDA_SUCCESS;
}

/* cuMemcpy/cuMemcpyAsync: unified addresses, the pointers' memory types tell the direction. */
static uint32_t kind_by_pointers(struct inject_state *st, const uint64_t *args)
{
	unsigned dst = 0, src = 0;

	if (!st->drv.cuPointerGetAttribute)
		return GRT_COPY_DEFAULT;
	if (st->drv.cuPointerGetAttribute(&dst, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, args[0]))
		dst = 0; /* pageable host memory: not the driver's */
	if (st->drv.cuPointerGetAttribute(&src, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, args[1]))
		src = 0;
	return copy_shape_kind_of_types(src, dst);
}

bool copy_timing_begin(struct inject_state *st, const struct copy_shape *shape,
		       const uint64_t *args, struct copy_mark *m)
{
	struct copy_timing *t = st->copies;
	CUcontext ctx = NULL;

	if (!t || !atomic_load_explicit(&t->on, memory_order_relaxed))
		return false;
	/* an event recorded into a capture would become a node of the application's graph */
	if (st->instr && atomic_load_explicit(&st->instr->captures, memory_order_relaxed))
		return false;
	memset(m, 0, sizeof(*m));
	inject_enter_tool();
	if (st->drv.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
		inject_leave_tool();
		return false; /* the call fails without a context, and does no work */
	}
	pthread_mutex_lock(&t->lock);
	m->cc = ctx_of(st, t, ctx);
	if (m->cc && !m->cc->broken) {
		m->start = event_take(st, m->cc);
		m->end = event_take(st, m->cc);
	}
	pthread_mutex_unlock(&t->lock);
	/* what the call moves, before the start event: nothing of ours between it and the call */
	m->stream = copy_shape_stream(shape, args);
	m->bytes = copy_shape_bytes(shape, args);
	m->kind = shape->kind_by_pointers ? kind_by_pointers(st, args)
					  : copy_shape_desc_kind(shape, args);
	if (!m->start || !m->end || !record_in(m->start, m->stream)) {
		if (m->cc) {
			pthread_mutex_lock(&t->lock);
			event_give(m->cc, m->start);
			event_give(m->cc, m->end);
			pthread_mutex_unlock(&t->lock);
		}
		inject_leave_tool();
		atomic_fetch_add_explicit(&t->untimed, 1, memory_order_relaxed);
		return false;
	}
	inject_leave_tool();
	return true;
}

/* After a copy was queued: CUPTI takes the copies over when they are this frequent. */
static void switch_if_copy_heavy(struct inject_state *st, struct copy_timing *t)
{
	unsigned long long copies = atomic_fetch_add_explicit(&t->queued, 1, memory_order_relaxed) + 1;
	unsigned long long launches = atomic_load_explicit(&st->stats.launches, memory_order_relaxed);
	char why[96];

	if (copies < SWITCH_MIN_COPIES || copies * SWITCH_LAUNCHES_PER_COPY < launches ||
	    t->mode == COPY_EVENTS_ALWAYS || atomic_exchange(&t->switch_asked, true))
		return;
	snprintf(why, sizeof(why), "%llu copies and memsets for %llu launches", copies, launches);
	cupti_need_copies(st, why);
}

void copy_timing_end(struct inject_state *st, struct copy_mark *m, int res, uint64_t enter_ns,
		     uint64_t return_ns, bool cupti_saw)
{
	struct copy_timing *t = st->copies;
	atomic_ullong *dropped = NULL;
	struct pending_copy *p;
	bool recorded, queued = false;

	inject_enter_tool();
	recorded = res == CUDA_SUCCESS && record_in(m->end, m->stream);
	pthread_mutex_lock(&t->lock);
	/*
	 * Not queued, its events given back: the benchmark switch that reads
	 * nothing; a copy another thread handed to CUPTI while this call ran
	 * (CUPTI's callback ran in the call, after its activity was on; without
	 * callbacks, the call began after the handover); a failed call, which did
	 * no work; a full queue, which loses the copy's times, counted.
	 */
	if (recorded && t->mode == COPY_EVENTS_NO_COLLECT)
		dropped = NULL;
	else if (recorded && (cupti_saw || (!st->cfg.cupti_callbacks &&
					    atomic_load(&t->cupti_since_ns) &&
					    enter_ns > atomic_load(&t->cupti_since_ns))))
		dropped = &t->left_to_cupti;
	else if (!recorded || t->head - t->tail == PENDING)
		dropped = res == CUDA_SUCCESS ? &t->untimed : NULL;
	else
		queued = true;
	if (!queued) {
		event_give(m->cc, m->start);
		event_give(m->cc, m->end);
		pthread_mutex_unlock(&t->lock);
		inject_leave_tool();
		if (dropped)
			atomic_fetch_add_explicit(dropped, 1, memory_order_relaxed);
		return;
	}
	p = &t->pending[t->head++ & (PENDING - 1)];
	p->cc = m->cc;
	p->start = m->start;
	p->end = m->end;
	memset(&p->rec, 0, sizeof(p->rec));
	p->rec.api_enter_ns = enter_ns;
	p->rec.api_return_ns = return_ns;
	p->rec.host_tid = inject_tid();
	p->rec.stream = m->stream == 0x1 ? 0 : m->stream;
	p->rec.bytes = m->bytes;
	p->rec.kind = m->kind;
	p->rec.device = m->cc->device;
	p->rec.flags = GRT_GPU_F_EVENT_TIMED;
	atomic_fetch_add_explicit(&t->waiting, 1, memory_order_relaxed);
	pthread_mutex_unlock(&t->lock);
	inject_leave_tool();
	switch_if_copy_heavy(st, t);
}

/* An event's time against the anchor, in ns plus REL_ZERO; 0 when it cannot be read. */
static uint64_t since_anchor(struct inject_state *st, const struct copy_ctx *cc, CUevent e)
{
	float ms = 0;

	/* (a pair a day apart from the anchor is not a reading: no anchor lives that long) */
	if (st->drv.cuEventElapsedTime(&ms, cc->anchor, e) != CUDA_SUCCESS || !isfinite(ms) ||
	    ms > 8.64e7f || ms < -8.64e7f)
		return 0;
	/* rounded to the nearest ns (no libm in the library) */
	return REL_ZERO + (uint64_t)(int64_t)((double)ms * 1e6 + (ms < 0 ? -0.5 : 0.5));
}

/* Records e on cc's own stream and waits for it, spinning: the tightest bracket. */
static int sample_event(struct inject_state *st, struct copy_ctx *cc, CUevent e,
			struct clock_sample *s)
{
	CUresult r;

	s->host_before = inject_now_ns();
	if (st->drv.cuEventRecord(e, cc->own) != CUDA_SUCCESS)
		return -EIO;
	while ((r = st->drv.cuEventQuery(e)) == CUDA_ERROR_NOT_READY)
		if (inject_now_ns() - s->host_before > SAMPLE_SPIN_NS)
			return -ETIMEDOUT;
	s->host_after = inject_now_ns();
	return r == CUDA_SUCCESS ? 0 : -EIO;
}

/*
 * A new anchor for cc's event times and where it lies on CLOCK_MONOTONIC:
 * events recorded on grtrace's own idle stream are stamped within a host
 * round trip of their recording; the tightest of a few wins (clock_math.h).
 * With cc's context current on the collection thread. 0 or negative errno.
 */
static int anchor(struct inject_state *st, struct copy_ctx *cc)
{
	struct clock_sample samples[CLOCK_SAMPLES];
	CUevent e = NULL, old = cc->anchor;
	int err = 0;

	if (!cc->own && st->drv.cuStreamCreate(&cc->own, CU_STREAM_NON_BLOCKING))
		return -EIO;
	if (st->drv.cuEventCreate(&cc->anchor, 0) ||
	    (err = sample_event(st, cc, cc->anchor, &samples[0])) ||
	    st->drv.cuEventCreate(&e, 0)) {
		cc->anchor = old;
		return err ? err : -EIO;
	}
	for (int i = 0; i < CLOCK_SAMPLES && !err; i++)
		if (!(err = sample_event(st, cc, e, &samples[i])))
			samples[i].clock = since_anchor(st, cc, e);
	if (st->drv.cuEventDestroy_v2)
		st->drv.cuEventDestroy_v2(e);
	if (!err)
		err = clock_best_sample(samples, CLOCK_SAMPLES, &cc->fit);
	if (err) {
		cc->anchor = old;
		return err;
	}
	if (old && st->drv.cuEventDestroy_v2)
		st->drv.cuEventDestroy_v2(old);
	cc->anchored_ns = inject_now_ns();
	return 0;
}

static void send_copy(struct inject_state *st, struct copy_timing *t, struct pending_copy *p)
{
	struct inj_copy msg = {.rec = p->rec};
	uint64_t a = since_anchor(st, p->cc, p->start), b = since_anchor(st, p->cc, p->end);

	if (!a || !b || b < a) {
		atomic_fetch_add_explicit(&t->failed_events, 1, memory_order_relaxed);
		return;
	}
	msg.rec.start_ns = clock_to_host(&p->cc->fit, a);
	msg.rec.end_ns = clock_to_host(&p->cc->fit, b);
	/*
	 * The start event completes when the stream reaches it, which on an idle
	 * stream is before the call was even entered: the copy cannot start
	 * before its call did.
	 */
	if (msg.rec.start_ns < p->rec.api_enter_ns)
		msg.rec.start_ns = p->rec.api_enter_ns;
	if (msg.rec.end_ns < msg.rec.start_ns)
		msg.rec.end_ns = msg.rec.start_ns;
	channel_fill_head(&msg.head, msg.rec.start_ns);
	msg.head.tid = p->rec.host_tid;
	channel_send(&st->chan, INJ_MSG_COPY, &msg, sizeof(msg));
	if (p->cc->fit.error_ns > t->worst_error_ns)
		t->worst_error_ns = p->cc->fit.error_ns;
	atomic_fetch_add_explicit(&t->timed, 1, memory_order_relaxed);
}

/* The oldest copy, when its events completed (waiting for them at exit); under the lock. */
static bool oldest_done(struct inject_state *st, struct pending_copy *p, bool at_exit)
{
	CUresult r = at_exit ? st->drv.cuEventSynchronize(p->end) : st->drv.cuEventQuery(p->end);

	return r != CUDA_ERROR_NOT_READY;
}

bool copy_timing_waiting(struct inject_state *st)
{
	return st->copies && atomic_load_explicit(&st->copies->waiting, memory_order_relaxed);
}

/*
 * Makes events ahead for the contexts running low, on the collection
 * thread: a batch at a time, outside the lock, with the context current.
 */
static void events_top_up(struct inject_state *st, struct copy_timing *t)
{
	CUcontext popped;
	CUevent made[EVENTS_BATCH];

	for (unsigned i = 0; i < COPY_CTXS; i++) {
		struct copy_ctx *cc = &t->ctxs[i];
		unsigned n = 0;

		pthread_mutex_lock(&t->lock);
		if (i >= t->nctx || cc->broken || cc->nfree >= EVENTS_LOW) {
			pthread_mutex_unlock(&t->lock);
			continue;
		}
		pthread_mutex_unlock(&t->lock);
		if (st->drv.cuCtxPushCurrent_v2(cc->ctx) != CUDA_SUCCESS)
			continue;
		while (n < EVENTS_BATCH && event_make(st, &made[n]))
			n++;
		st->drv.cuCtxPopCurrent_v2(&popped);
		pthread_mutex_lock(&t->lock);
		for (unsigned k = 0; k < n; k++)
			event_give(cc, made[k]);
		pthread_mutex_unlock(&t->lock);
	}
}

static bool collect_due(struct inject_state *st, struct copy_timing *t)
{
	unsigned syncs = st->instr ? atomic_load(&st->instr->syncs) : 0;
	uint64_t now = inject_now_ns();

	if (syncs == t->last_syncs && now - t->last_collect_ns < st->cfg.drain_ms * 1000000ULL &&
	    atomic_load_explicit(&t->waiting, memory_order_relaxed) < PENDING / 2)
		return false;
	t->last_syncs = syncs;
	t->last_collect_ns = now;
	return true;
}

void copy_timing_collect(struct inject_state *st, bool at_exit)
{
	struct copy_timing *t = st->copies;
	CUcontext current = NULL, popped;

	if (!t)
		return;
	if (!at_exit && atomic_load_explicit(&t->on, memory_order_relaxed)) {
		inject_enter_tool();
		events_top_up(st, t);
		inject_leave_tool();
	}
	if (!atomic_load_explicit(&t->waiting, memory_order_relaxed))
		return;
	if (!at_exit && !collect_due(st, t))
		return;
	if (!at_exit && t->mode == COPY_EVENTS_NO_TIMING)
		return;
	inject_enter_tool();
	pthread_mutex_lock(&t->lock);
	while (t->tail != t->head) {
		struct pending_copy *p = &t->pending[t->tail & (PENDING - 1)];
		struct copy_ctx *cc = p->cc;

		if (cc->ctx != current) {
			if (current)
				st->drv.cuCtxPopCurrent_v2(&popped);
			current = st->drv.cuCtxPushCurrent_v2(cc->ctx) == CUDA_SUCCESS ? cc->ctx : NULL;
		}
		if (!oldest_done(st, p, at_exit))
			break;
		if (!cc->broken && (!cc->anchored_ns ||
				    inject_now_ns() - cc->anchored_ns > CLOCK_MAX_AGE_NS) &&
		    anchor(st, cc) && !cc->anchored_ns)
			cc->broken = true; /* never calibrated: its copies cannot be placed */
		if (cc->broken || t->mode == COPY_EVENTS_NO_TIMING)
			atomic_fetch_add_explicit(&t->failed_events, 1, memory_order_relaxed);
		else
			send_copy(st, t, p);
		event_give(cc, p->start);
		event_give(cc, p->end);
		t->tail++;
		atomic_fetch_sub_explicit(&t->waiting, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&t->lock);
	if (current)
		st->drv.cuCtxPopCurrent_v2(&popped);
	inject_leave_tool();
}

void copy_timing_after_fork(struct inject_state *st)
{
	if (!st->copies)
		return;
	pthread_mutex_init(&st->copies->lock, NULL);
	atomic_store(&st->copies->on, false);
	atomic_store(&st->copies->waiting, 0);
	st->copies = NULL;
}

void copy_timing_stop(struct inject_state *st)
{
	struct copy_timing *t = st->copies;

	if (!t)
		return;
	channel_status(&st->chan, INJ_PART_CUPTI, 0,
		       "copies and memsets timed with CUDA events: %llu timed (within %llu ns), "
		       "%llu not timed (no event or queue full), %llu whose events could not be read, "
		       "%llu events made on the application's threads, %llu left to CUPTI (it "
		       "recorded them too)",
		       (unsigned long long)atomic_load(&t->timed),
		       (unsigned long long)t->worst_error_ns,
		       (unsigned long long)atomic_load(&t->untimed),
		       (unsigned long long)atomic_load(&t->failed_events),
		       (unsigned long long)atomic_load(&t->made_on_app),
		       (unsigned long long)atomic_load(&t->left_to_cupti));
}
