/* Kernel, memcpy and memset timing for every launch through CUPTI activity, tied to its call. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "inject/call_bracket.h"
#include "inject/channel.h"
#include "inject/copy_timing.h"
#include "inject/cupti.h"
#include "inject/cupti_decls.h"
#include "inject/inject.h"
#include "inject/interpose.h"
#include "inject/own_thread.h"
#include "trace/records_cuda.h"

#define ACTIVITY_BUFFER_BYTES (4u << 20)
#define FLUSH_PERIOD_MS 200	  /* the flusher thread's pace without sync points */
#define FLUSH_NUDGE_NS 5000000ULL /* sync points wake it at most this often */
#define NAME_CACHE 1024		  /* CUPTI's kernel name pointers -> name ids */
#define CORR_SLOTS 65536u	  /* API calls remembered until their activity arrives */
#define OWN_CALL 0x80000000u	  /* in a slot's tid: a call the library itself made */
#define RETURN_WAIT_NS 200000000ULL /* a record waits this long for its call's return time */
#define NO_WRAPPER UINT64_MAX	  /* a call no wrapper of ours made: its return is not known */

/*
 * The driver API ENTER callback of a launch/copy stores the call's bracket
 * start, thread and stream under its correlation id; the wrapper that made
 * the call writes the return time into the slot when the call returns
 * (call_bracket.h: a slot reused in between would take a wrong return time,
 * which would need CORR_SLOTS calls inside one call); the activity record,
 * which arrives later on another thread, looks them up. Ids grow by one per
 * call, so a direct-mapped table keyed by id works as long as
 * fewer than CORR_SLOTS calls happen between a launch and the flush of its
 * record; an overwritten slot just leaves the bracket 0 ("unknown"). Writers
 * invalidate, fill, then publish the id; readers check the id before and
 * after.
 */
struct corr_slot {
	_Atomic uint32_t corr;
	uint32_t tid;
	uint64_t api_enter_ns;
	uint64_t stream;
	_Atomic uint64_t api_return_ns; /* 0 until the wrapper's call returned; NO_WRAPPER */
};

/* What the activity record of a call is told about the call. */
struct host_call {
	uint64_t enter_ns, return_ns; /* 0: unknown */
	uint64_t stream;
	uint32_t tid;
	bool own; /* made by the library itself */
};

struct cupti_api {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, int, uint32_t);
	CUptiResult (*activity_enable)(int);
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
					  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*next_record)(uint8_t *, size_t, void **);
	CUptiResult (*num_dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*get_timestamp)(uint64_t *);
	CUptiResult (*register_timestamp)(uint64_t (*)(void));
	CUptiResult (*result_string)(CUptiResult, const char **);
	CUptiResult (*enable_hw_trace)(uint8_t);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*activity_disable)(int);
};

struct cupti_state {
	void *handle;
	struct cupti_api api;
	CUpti_SubscriberHandle subscriber;
	uintptr_t lo, hi; /* libcupti's mapped address range */
	struct corr_slot *corr;
	bool own_clock; /* CUPTI timestamps are CLOCK_MONOTONIC (our callback) */
	bool hw_trace;	/* we turned on hardware kernel timestamps */
	atomic_bool hw_tried; /* asked once: by the calibration, or when CUPTI is loaded late */
	atomic_bool released; /* handed over to the application's CUPTI client: hands off */
	_Atomic uint64_t last_flush_ns;
	_Atomic uint64_t dropped;
	_Atomic uint64_t kernels, copies;
	_Atomic uint64_t own_records; /* of them grtrace's own work, flagged GRT_GPU_F_OWN */
	_Atomic uint64_t launch_calls; /* launch API calls of the application */
	_Atomic uint64_t unmatched;    /* records whose call was no longer in the table */
	/*
	 * The lowest correlation id our callback saw once all the callbacks were
	 * on: a call below it that has no slot began before its callback was on.
	 * Where events timed the copies until CUPTI came, such a call's copy was
	 * timed by its events, and CUPTI's record of it (its activity went on
	 * first) is left out, counted.
	 */
	atomic_bool callbacks_on;
	_Atomic uint32_t first_corr_all_on;
	bool copies_had_events;
	_Atomic uint64_t left_to_events;
	_Atomic uint64_t open_brackets; /* records whose call's return time was not known */
	_Atomic uint64_t no_wait_until; /* records do not wait for return times before this */
	/* buffers are flushed and turned into messages on this thread, never the application's */
	pthread_t flusher;
	bool flusher_started;
	pthread_mutex_t lock; /* flusher wake-up and name cache */
	pthread_cond_t wake;
	bool stop;
	struct {
		const char *ptr;
		uint64_t id;
	} names[NAME_CACHE];
};

static const uint32_t launch_cbids[] = {
    115, 116, 117, 307, 442, 477, 478, 480, 514, 515, 652, 653,
};

/* memcpy and memset callback ids, as [first, last] runs */
static const uint32_t copy_cbid_runs[][2] = {
    {43, 43},	{45, 45},   {47, 47},	{49, 49},   {51, 51},	{53, 58},   {60, 60},	{62, 62},
    {64, 64},	{66, 69},   {71, 71},	{73, 73},   {75, 75},	{77, 77},   {79, 79},	{81, 81},
    {216, 216}, {218, 218}, {220, 220}, {222, 222}, {224, 224}, {226, 226}, {248, 254}, {276, 293},
    {305, 306}, {318, 321}, {397, 416}, {418, 433}, {776, 779}, {796, 799},
};

static uint64_t monotonic_clock(void)
{
	return inject_now_ns();
}

static const char *cupti_error(const struct cupti_state *c, CUptiResult r)
{
	const char *s = NULL;

	if (c->api.result_string && c->api.result_string(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "CUPTI error";
}

static void *open_cupti(const char *configured, char *why, size_t why_len)
{
	static const char *const candidates[] = {
	    "libcupti.so.13",
	    "/usr/local/cuda/lib64/libcupti.so.13",
	    "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
	    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
	};
	void *h;

	if (configured && *configured) {
		h = dlopen(configured, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(why, why_len, "cannot load %s (GRTRACE_CUPTI_PATH)", configured);
		return h;
	}
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if ((h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL)))
			return h;
	snprintf(why, why_len,
		 "libcupti.so.13 not found (LD_LIBRARY_PATH, /usr/local/cuda/lib64, "
		 "/usr/local/cuda/targets/x86_64-linux/lib; or set GRTRACE_CUPTI_PATH)");
	return NULL;
}

static int resolve_api(struct cupti_state *c, char *why, size_t why_len)
{
	static const struct {
		const char *name;
		size_t offset;
		bool optional;
	} syms[] = {
	    {"cuptiSubscribe", offsetof(struct cupti_api, subscribe), false},
	    {"cuptiEnableCallback", offsetof(struct cupti_api, enable_callback), false},
	    {"cuptiActivityEnable", offsetof(struct cupti_api, activity_enable), false},
	    {"cuptiActivityRegisterCallbacks", offsetof(struct cupti_api, register_callbacks),
	     false},
	    {"cuptiActivityFlushAll", offsetof(struct cupti_api, flush_all), false},
	    {"cuptiActivityGetNextRecord", offsetof(struct cupti_api, next_record), false},
	    {"cuptiActivityGetNumDroppedRecords", offsetof(struct cupti_api, num_dropped), false},
	    {"cuptiGetTimestamp", offsetof(struct cupti_api, get_timestamp), false},
	    {"cuptiActivityRegisterTimestampCallback",
	     offsetof(struct cupti_api, register_timestamp), true},
	    {"cuptiGetResultString", offsetof(struct cupti_api, result_string), true},
	    {"cuptiActivityEnableHWTrace", offsetof(struct cupti_api, enable_hw_trace), true},
	    {"cuptiUnsubscribe", offsetof(struct cupti_api, unsubscribe), false},
	    {"cuptiActivityDisable", offsetof(struct cupti_api, activity_disable), false},
	};

	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = inject_real_dlsym(c->handle, syms[i].name);

		if (!p && !syms[i].optional) {
			snprintf(why, why_len, "libcupti lacks %s", syms[i].name);
			return -ENOSYS;
		}
		memcpy((char *)&c->api + syms[i].offset, &p, sizeof(p));
	}
	return 0;
}

struct range_search {
	uintptr_t addr, lo, hi;
};

static int find_object_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct range_search *rs = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (rs->addr >= lo && rs->addr < hi) {
		rs->lo = lo;
		rs->hi = hi;
		return 1;
	}
	return 0;
}

bool cupti_owns(const struct inject_state *st, const void *addr)
{
	const struct cupti_state *c = st->cupti;

	return c && (uintptr_t)addr >= c->lo && (uintptr_t)addr < c->hi;
}

static uint64_t stream_of_call(uint32_t cbid, const void *params)
{
	const uint8_t *p = params;
	const CUlaunchConfig *cfg;

	if (!p)
		return 0;
	switch (cbid) {
	case CUPTI_CBID_cuLaunchKernel:
	case CUPTI_CBID_cuLaunchKernel_ptsz:
		return *(const uint64_t *)(p + CUPTI_PARAMS_LAUNCH_STREAM);
	case CUPTI_CBID_cuLaunchKernelEx:
	case CUPTI_CBID_cuLaunchKernelEx_ptsz:
		cfg = *(const CUlaunchConfig *const *)p;
		return cfg ? (uint64_t)(uintptr_t)cfg->hStream : 0;
	case CUPTI_CBID_cuGraphLaunch:
	case CUPTI_CBID_cuGraphLaunch_ptsz:
		return *(const uint64_t *)(p + CUPTI_PARAMS_GRAPH_STREAM);
	default:
		return 0;
	}
}

static bool is_launch(uint32_t cbid)
{
	for (size_t i = 0; i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++)
		if (launch_cbids[i] == cbid)
			return true;
	return false;
}

static void on_driver_call(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
	struct cupti_state *c = userdata;
	const uint8_t *d = cbdata;
	struct corr_slot *slot;
	uint32_t corr;

	if (domain != CUPTI_CB_DOMAIN_DRIVER_API ||
	    *(const uint32_t *)(d + CUPTI_CB_OFF_SITE) != CUPTI_API_ENTER)
		return;
	corr = *(const uint32_t *)(d + CUPTI_CB_OFF_CORRELATION);
	for (uint32_t seen = atomic_load_explicit(&c->first_corr_all_on, memory_order_relaxed);
	     corr < seen && atomic_load_explicit(&c->callbacks_on, memory_order_relaxed) &&
	     !atomic_compare_exchange_weak_explicit(&c->first_corr_all_on, &seen, corr,
						    memory_order_relaxed, memory_order_relaxed);)
		;
	slot = &c->corr[corr & (CORR_SLOTS - 1)];
	atomic_store_explicit(&slot->corr, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	/*
	 * A wrapper took the time right before the real call: use it, so the
	 * records of the call (CUPTI's, the probes') carry the same bracket, and
	 * tell the wrapper which id to give the return time to. Without a
	 * wrapper (a call we do not interpose) the time is taken here and the
	 * return stays unknown.
	 */
	slot->api_enter_ns = inject_call.enter_ns ? inject_call.enter_ns : inject_now_ns();
	atomic_store_explicit(&slot->api_return_ns, inject_call.enter_ns ? 0 : NO_WRAPPER,
			      memory_order_relaxed);
	slot->tid = inject_tid() | (inject_in_tool ? OWN_CALL : 0);
	slot->stream = stream_of_call(cbid, *(const void *const *)(d + CUPTI_CB_OFF_PARAMS));
	atomic_store_explicit(&slot->corr, corr, memory_order_release);
	if (inject_call.enter_ns)
		inject_call.return_ns = &slot->api_return_ns;
	if (!inject_in_tool && is_launch(cbid))
		atomic_fetch_add_explicit(&c->launch_calls, 1, memory_order_relaxed);
}

/*
 * A record can be flushed before the wrapper that made its call wrote the
 * return time (a synchronous copy completes inside the call): the wrapper
 * does so right after the call returns, so wait for it a little. The
 * flusher is the library's thread, never the application's.
 */
static uint64_t return_of(struct cupti_state *c, struct corr_slot *slot, uint32_t corr)
{
	uint64_t ns = atomic_load_explicit(&slot->api_return_ns, memory_order_acquire);

	if (ns == NO_WRAPPER)
		return 0;
	/*
	 * The calling thread may be off the CPU on a busy machine: wait by time,
	 * not by tries. A call that is still running after that (a thread stuck
	 * in the driver at exit) stops the waiting for a while, so that a flush
	 * never waits on many such records in a row.
	 */
	for (uint64_t now = inject_now_ns(), deadline = now + RETURN_WAIT_NS; !ns;) {
		struct timespec pause = {0, 20000};

		if (now < atomic_load_explicit(&c->no_wait_until, memory_order_relaxed))
			return 0;
		if (now > deadline) {
			atomic_store_explicit(&c->no_wait_until, now + 5 * RETURN_WAIT_NS,
					      memory_order_relaxed);
			return 0;
		}
		if (atomic_load_explicit(&slot->corr, memory_order_acquire) != corr)
			return 0;
		nanosleep(&pause, NULL);
		ns = atomic_load_explicit(&slot->api_return_ns, memory_order_acquire);
		now = inject_now_ns();
	}
	return ns;
}

/* The slot of call corr, read consistently; false when it holds another call now. */
static bool host_call_lookup(struct cupti_state *c, uint32_t corr, struct host_call *hc)
{
	struct corr_slot *slot = &c->corr[corr & (CORR_SLOTS - 1)];
	uint32_t before = atomic_load_explicit(&slot->corr, memory_order_acquire);
	struct host_call got = {
	    .enter_ns = slot->api_enter_ns,
	    .stream = slot->stream,
	    .tid = slot->tid,
	};

	atomic_thread_fence(memory_order_acquire);
	memset(hc, 0, sizeof(*hc));
	if (before != corr || atomic_load_explicit(&slot->corr, memory_order_relaxed) != corr) {
		atomic_fetch_add_explicit(&c->unmatched, 1, memory_order_relaxed);
		return false;
	}
	*hc = got;
	if (got.tid & OWN_CALL) {
		/* grtrace's own work: no wrapper made the call, so no return time */
		hc->own = true;
		hc->tid = got.tid & ~OWN_CALL;
		return true;
	}
	hc->return_ns = return_of(c, slot, corr);
	if (!hc->return_ns)
		atomic_fetch_add_explicit(&c->open_brackets, 1, memory_order_relaxed);
	return true;
}

/*
 * The host side of call corr; false when it is no longer known (enter_ns etc.
 * are then 0). Own: grtrace's work (its threads' calls, or own_kernel), counted.
 */
static bool host_call_of(struct cupti_state *c, uint32_t corr, bool own_kernel,
			 struct host_call *hc)
{
	bool known = host_call_lookup(c, corr, hc);

	hc->own |= own_kernel;
	if (hc->own)
		atomic_fetch_add_explicit(&c->own_records, 1, memory_order_relaxed);
	return known;
}

/* A kernel or copy record's call identity and own flag (both records have these fields). */
#define SET_CALL(rec, hc)                                                                          \
	((rec).api_enter_ns = (hc).enter_ns, (rec).api_return_ns = (hc).return_ns,                 \
	 (rec).host_tid = (hc).tid, (rec).stream = (hc).stream,                                    \
	 (rec).flags = (hc).own ? GRT_GPU_F_OWN : 0)

static uint64_t to_monotonic(const struct inject_state *st, uint64_t cupti_ns)
{
	return clock_to_host(&st->cupti_clock.fit, cupti_ns);
}

/* CUPTI keeps one name string per kernel: remember ids by its address, not by hashing the text. */
static uint64_t kernel_name_id(struct inject_state *st, struct cupti_state *c, const char *name)
{
	size_t slot = ((uintptr_t)name >> 4) % NAME_CACHE;
	uint64_t id;

	if (!name)
		return channel_name(&st->chan, "?");
	pthread_mutex_lock(&c->lock);
	if (c->names[slot].ptr == name) {
		id = c->names[slot].id;
		pthread_mutex_unlock(&c->lock);
		return id;
	}
	pthread_mutex_unlock(&c->lock);
	id = channel_name(&st->chan, name);
	pthread_mutex_lock(&c->lock);
	c->names[slot].ptr = name;
	c->names[slot].id = id;
	pthread_mutex_unlock(&c->lock);
	return id;
}

static void emit_kernel(struct inject_state *st, struct cupti_state *c, const uint8_t *r)
{
	const char *name = *(const char *const *)(r + CUPTI_KERNEL_OFF_NAME);
	const int32_t *grid = (const int32_t *)(r + CUPTI_KERNEL_OFF_GRID);
	const int32_t *block = (const int32_t *)(r + CUPTI_KERNEL_OFF_BLOCK);
	struct inj_kernel msg = {0};
	struct host_call hc;

	msg.rec.correlation_id = *(const uint32_t *)(r + CUPTI_KERNEL_OFF_CORRELATION);
	/* the library's kernels (calibration, summarizer) are its own whoever launched them */
	host_call_of(c, msg.rec.correlation_id,
		     name && !strncmp(name, GRT_OWN_KERNEL_PREFIX, strlen(GRT_OWN_KERNEL_PREFIX)),
		     &hc);
	SET_CALL(msg.rec, hc);
	msg.rec.start_ns = to_monotonic(st, *(const uint64_t *)(r + CUPTI_KERNEL_OFF_START));
	msg.rec.end_ns = to_monotonic(st, *(const uint64_t *)(r + CUPTI_KERNEL_OFF_END));
	msg.rec.device = *(const uint32_t *)(r + CUPTI_KERNEL_OFF_DEVICE);
	msg.rec.stream_id = *(const uint32_t *)(r + CUPTI_KERNEL_OFF_STREAM);
	for (int i = 0; i < 3; i++) {
		msg.rec.grid[i] = (uint32_t)grid[i];
		msg.rec.block[i] = (uint32_t)block[i];
	}
	msg.rec.graph_id = *(const uint32_t *)(r + CUPTI_KERNEL_OFF_GRAPH);
	msg.name_id = kernel_name_id(st, c, name);
	channel_fill_head(&msg.head, msg.rec.start_ns);
	if (hc.tid)
		msg.head.tid = hc.tid;
	channel_send(&st->chan, INJ_MSG_KERNEL, &msg, sizeof(msg));
	atomic_fetch_add_explicit(&c->kernels, 1, memory_order_relaxed);
}

static uint32_t copy_kind(uint8_t cupti_kind)
{
	switch (cupti_kind) {
	case CUPTI_MEMCPY_HTOD:
		return GRT_COPY_HTOD;
	case CUPTI_MEMCPY_DTOH:
		return GRT_COPY_DTOH;
	case CUPTI_MEMCPY_DTOD:
		return GRT_COPY_DTOD;
	case CUPTI_MEMCPY_HTOH:
		return GRT_COPY_HTOH;
	case CUPTI_MEMCPY_PTOP:
		return GRT_COPY_PEER;
	default:
		return GRT_COPY_UNKNOWN; /* array copies */
	}
}

static void emit_copy(struct inject_state *st, struct cupti_state *c, const uint8_t *r,
		      bool memset_op)
{
	struct inj_copy msg = {0};
	struct host_call hc;

	msg.rec.correlation_id = *(const uint32_t *)(r + CUPTI_COPY_OFF_CORRELATION);
	if (c->copies_had_events && st->cfg.cupti_callbacks &&
	    msg.rec.correlation_id <
		atomic_load_explicit(&c->first_corr_all_on, memory_order_relaxed) &&
	    atomic_load_explicit(&c->corr[msg.rec.correlation_id & (CORR_SLOTS - 1)].corr,
				 memory_order_acquire) != msg.rec.correlation_id) {
		/* a call begun before its callback was on: its events timed it */
		atomic_fetch_add_explicit(&c->left_to_events, 1, memory_order_relaxed);
		return;
	}
	host_call_of(c, msg.rec.correlation_id, false, &hc);
	SET_CALL(msg.rec, hc);
	msg.rec.start_ns = to_monotonic(st, *(const uint64_t *)(r + CUPTI_COPY_OFF_START));
	msg.rec.end_ns = to_monotonic(st, *(const uint64_t *)(r + CUPTI_COPY_OFF_END));
	msg.rec.bytes = *(const uint64_t *)(r + CUPTI_COPY_OFF_BYTES);
	msg.rec.device = *(const uint32_t *)(r + CUPTI_COPY_OFF_DEVICE);
	msg.rec.stream_id = *(const uint32_t *)(r + CUPTI_COPY_OFF_STREAM);
	msg.rec.kind = memset_op ? GRT_GPU_COPY_MEMSET : copy_kind(r[CUPTI_COPY_OFF_KIND]);
	channel_fill_head(&msg.head, msg.rec.start_ns);
	if (hc.tid)
		msg.head.tid = hc.tid;
	channel_send(&st->chan, INJ_MSG_COPY, &msg, sizeof(msg));
	atomic_fetch_add_explicit(&c->copies, 1, memory_order_relaxed);
}

static void on_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *p = NULL;

	if (posix_memalign(&p, 8, ACTIVITY_BUFFER_BYTES))
		p = NULL;
	*buffer = p;
	*size = p ? ACTIVITY_BUFFER_BYTES : 0;
	*max_records = 0;
}

static void on_buffer_complete(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
			       size_t valid)
{
	struct inject_state *st = inject();
	struct cupti_state *c = st->cupti;
	void *rec = NULL;
	size_t dropped = 0;

	inject_enter_tool();
	/* after the handover nothing of CUPTI's is ours: a buffer we lent is only freed */
	if (c && atomic_load(&c->released))
		valid = 0;
	while (c && valid && c->api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
		int kind = *(const int *)rec;

		if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    kind == CUPTI_ACTIVITY_KIND_KERNEL)
			emit_kernel(st, c, rec);
		else if (kind == CUPTI_ACTIVITY_KIND_MEMCPY || kind == CUPTI_ACTIVITY_KIND_MEMSET)
			emit_copy(st, c, rec, kind == CUPTI_ACTIVITY_KIND_MEMSET);
	}
	if (c && !atomic_load(&c->released) &&
	    c->api.num_dropped(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped) {
		atomic_fetch_add(&c->dropped, dropped);
		channel_drops(&st->chan, INJ_DROP_CUPTI, dropped);
	}
	free(buffer);
	inject_leave_tool();
}

static int enable_callbacks(struct cupti_state *c, char *why, size_t why_len)
{
	CUptiResult r;

	for (size_t i = 0; i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++)
		if ((r = c->api.enable_callback(1, c->subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
						launch_cbids[i]))) {
			snprintf(why, why_len, "cuptiEnableCallback: %s", cupti_error(c, r));
			return -EIO;
		}
	for (size_t i = 0; i < sizeof(copy_cbid_runs) / sizeof(copy_cbid_runs[0]); i++)
		for (uint32_t id = copy_cbid_runs[i][0]; id <= copy_cbid_runs[i][1]; id++)
			c->api.enable_callback(1, c->subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
	return 0;
}

/*
 * Kernel timestamps from the GPU's hardware event system instead of CUPTI's
 * instrumentation of each launch (semaphore writes around the kernel), which
 * is most of CUPTI's cost on a launch-bound loop (bench/RESULTS.md). CUPTI
 * offers it on Blackwell only, once the driver has a context; elsewhere one
 * status line says why not.
 */
void cupti_try_hw_trace(struct inject_state *st)
{
	struct cupti_state *c = st->cupti;
	CUptiResult r;

	if (!c || atomic_load(&c->released) || atomic_exchange(&c->hw_tried, true))
		return;
	r = c->api.enable_hw_trace ? c->api.enable_hw_trace(1) : CUPTI_ERROR_NOT_SUPPORTED;
	c->hw_trace = r == CUPTI_SUCCESS;
	if (r == CUPTI_SUCCESS)
		channel_status(&st->chan, INJ_PART_CUPTI, 0,
			       "CUPTI kernel timestamps from the hardware event system");
	else
		channel_status(&st->chan, INJ_PART_CUPTI, -ENOTSUP,
			       "CUPTI kernel timestamps by instrumenting each launch (hardware "
			       "event system: %s)",
			       c->api.enable_hw_trace ? cupti_error(c, r) : "not in this libcupti");
}

/* The activity kinds grtrace records. */
static const int activity_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
};

/*
 * CUPTI's kernel activity instruments every launch in the driver (it cost
 * +70% on 10,000 short launches on the H100, against +16% for the block
 * probes), and CUPTI loaded with nothing enabled still slows every launch
 * (bench/RESULTS.md, run 26): where the probes time the kernels it is not
 * loaded until a kernel they do not cover is launched.
 */
bool cupti_waits_for_kernels(const struct inject_state *st)
{
	const char *v = getenv(GRT_INJECT_ENV_CUPTI_KERNELS);

	return st->cfg.cupti && st->cfg.probe_mode && !(v && !strcmp(v, "always"));
}

/* The activity kinds, the kernel kind (the first) only if kernels. */
static int enable_activity(struct cupti_state *c, bool kernels, char *why, size_t why_len)
{
	const int *kinds = activity_kinds;
	CUptiResult r;

	if ((r = c->api.register_callbacks(on_buffer_request, on_buffer_complete))) {
		snprintf(why, why_len, "cuptiActivityRegisterCallbacks: %s", cupti_error(c, r));
		return -EIO;
	}
	for (size_t i = kernels ? 0 : 1; i < sizeof(activity_kinds) / sizeof(activity_kinds[0]); i++)
		if ((r = c->api.activity_enable(kinds[i]))) {
			snprintf(why, why_len, "cuptiActivityEnable(%d): %s", kinds[i],
				 cupti_error(c, r));
			return -EIO;
		}
	return 0;
}

int cupti_calibrate(struct inject_state *st, struct clock_fit *out)
{
	struct cupti_state *c = st->cupti;
	struct clock_sample samples[16];

	if (!c)
		return -ENODEV;
	/* bracket cuptiGetTimestamp with CLOCK_MONOTONIC; the tightest pair wins */
	for (int i = 0; i < 16; i++) {
		samples[i].host_before = inject_now_ns();
		if (c->api.get_timestamp(&samples[i].clock) != CUPTI_SUCCESS)
			return -EIO;
		samples[i].host_after = inject_now_ns();
	}
	return clock_best_sample(samples, 16, out);
}

static void send_cupti_calibration(struct inject_state *st)
{
	struct inj_calib msg = {.rec = {.clock_id = GRT_CLOCK_CUPTI}};
	struct clock_fit fit;

	if (cupti_calibrate(st, &fit))
		return;
	if (!st->cupti_clock.valid) {
		st->cupti_clock.fit = fit;
		st->cupti_clock.valid = true;
	}
	msg.rec.gpu_ns = fit.clock_ns;
	msg.rec.host_ns = fit.host_ns;
	msg.rec.error_ns = fit.error_ns;
	channel_fill_head(&msg.head, fit.host_ns);
	channel_send(&st->chan, INJ_MSG_CALIB, &msg, sizeof(msg));
}

static void *flusher_main(void *arg)
{
	struct cupti_state *c = arg;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += FLUSH_PERIOD_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&c->wake, &c->lock, &ts);
		if (c->stop)
			break;
		pthread_mutex_unlock(&c->lock);
		c->api.flush_all(0);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void cupti_free(struct cupti_state *c)
{
	/* libcupti stays loaded: a half-initialised CUPTI must not be unmapped under the driver */
	free(c->corr);
	free(c);
}

int cupti_start(struct inject_state *st, bool kernels, char *why, size_t why_len)
{
	struct cupti_state *c = calloc(1, sizeof(*c));
	struct range_search rs = {0};
	CUptiResult r;
	int err;

	if (!c || !(c->corr = calloc(CORR_SLOTS, sizeof(*c->corr)))) {
		free(c);
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	c->handle = open_cupti(st->cfg.cupti_path, why, why_len);
	if (!c->handle) {
		cupti_free(c);
		return -ENOENT;
	}
	if ((err = resolve_api(c, why, why_len))) {
		cupti_free(c);
		return err;
	}
	rs.addr = (uintptr_t)c->api.subscribe;
	if (dl_iterate_phdr(find_object_range, &rs)) {
		c->lo = rs.lo;
		c->hi = rs.hi;
	}
	/* before anything is enabled, so every record is on CLOCK_MONOTONIC */
	c->own_clock = c->api.register_timestamp &&
		       c->api.register_timestamp(monotonic_clock) == CUPTI_SUCCESS;
	st->cupti = c;
	if ((r = c->api.subscribe(&c->subscriber, on_driver_call, c))) {
		snprintf(why, why_len, "cuptiSubscribe: %s (another profiler attached?)",
			 cupti_error(c, r));
		st->cupti = NULL;
		cupti_free(c);
		return -EBUSY;
	}
	/*
	 * Activity before callbacks: a call whose callback ran is then surely in
	 * CUPTI's records (copy_timing.c leaves such copies to CUPTI); one begun
	 * before the callbacks were on is its events' (emit_copy()).
	 */
	atomic_store(&c->first_corr_all_on, UINT32_MAX);
	c->copies_had_events = copy_timing_is_on(st);
	if ((err = enable_activity(c, kernels, why, why_len)) ||
	    (st->cfg.cupti_callbacks && (err = enable_callbacks(c, why, why_len))))
		return err; /* subscribed: keep the state, CUPTI may still call back */
	atomic_store(&c->callbacks_on, true);
	/* buffers are flushed on a thread named as grtrace's, never on the application's */
	c->flusher_started = !own_thread_start(&c->flusher, "cupti", flusher_main, c);
	send_cupti_calibration(st);
	return 0;
}

/* Loading CUPTI late, and turning its kernel activity on: once each, whichever thread comes first. */
static pthread_mutex_t need_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool load_answered, kernels_answered;

/* Loads CUPTI (copy and memset activity, kernels too if asked). Under need_lock. */
static int load_late(struct inject_state *st, bool kernels, char *why, size_t why_len)
{
	int err;

	atomic_store(&load_answered, true);
	inject_enter_tool();
	err = cupti_start_unless_taken(st, kernels, why, why_len);
	inject_leave_tool();
	if (!err)
		copy_timing_handoff(st, inject_now_ns());
	return err;
}

void cupti_need_kernels(struct inject_state *st, const char *kernel, const char *why)
{
	const char *k = kernel ? "kernel " : "", *name = kernel ? kernel : "",
		   *without = kernel ? " launched without block probes: " : "";
	struct cupti_state *c;
	char err_why[256] = "";
	int err = 0;

	if (atomic_load(&kernels_answered) || !cupti_waits_for_kernels(st))
		return;
	pthread_mutex_lock(&need_lock);
	if (atomic_load(&kernels_answered)) {
		pthread_mutex_unlock(&need_lock);
		return; /* another thread did it while this one waited: its kernel is timed */
	}
	atomic_store(&kernels_answered, true);
	if (!st->cupti && !atomic_load(&load_answered)) {
		err = load_late(st, true, err_why, sizeof(err_why));
		if (!err) {
			channel_status(&st->chan, INJ_PART_CUPTI, 0,
				       "CUPTI kernel and copy timing on from here: %s%s%s%s", k, name,
				       without, why);
			cupti_try_hw_trace(st);
		}
	} else if ((c = st->cupti) && !atomic_load(&c->released)) {
		/* loaded for the copies before: its kernel activity goes on now */
		inject_enter_tool();
		err = c->api.activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? -EIO : 0;
		inject_leave_tool();
		if (err)
			snprintf(err_why, sizeof(err_why), "cuptiActivityEnable failed");
		else
			channel_status(&st->chan, INJ_PART_CUPTI, 0,
				       "CUPTI kernel timing on from here: %s%s%s%s", k, name, without,
				       why);
	}
	if (err && err != -EALREADY) /* -EALREADY: the application's client has CUPTI */
		channel_status(&st->chan, INJ_PART_CUPTI, err,
			       "CUPTI kernel timing unavailable for %s%s%s%s: %s", k, name, without,
			       why, err_why);
	pthread_mutex_unlock(&need_lock);
}

void cupti_need_copies(struct inject_state *st, const char *why)
{
	char err_why[256] = "";
	int err;

	if (atomic_load(&load_answered) || st->cupti || !cupti_waits_for_kernels(st))
		return;
	pthread_mutex_lock(&need_lock);
	if (atomic_load(&load_answered)) {
		pthread_mutex_unlock(&need_lock);
		return;
	}
	err = load_late(st, false, err_why, sizeof(err_why));
	if (!err) {
		channel_status(&st->chan, INJ_PART_CUPTI, 0,
			       "CUPTI copy timing on from here (%s); CUPTI kernel timing waits for a "
			       "kernel the block probes do not cover",
			       why);
		cupti_try_hw_trace(st);
	} else if (err != -EALREADY)
		channel_status(&st->chan, INJ_PART_CUPTI, err,
			       "copies stay timed with CUDA events (%s): CUPTI unavailable: %s", why,
			       err_why);
	pthread_mutex_unlock(&need_lock);
}

void cupti_flush(struct inject_state *st)
{
	struct cupti_state *c = st->cupti;
	uint64_t now, last;

	if (!c || atomic_load(&st->finished))
		return;
	if (!c->flusher_started || atomic_load(&c->released))
		return; /* not on the application's thread: its records come at exit */
	/* a sync point: the records are complete; let the flusher turn them into messages */
	now = inject_now_ns();
	last = atomic_load_explicit(&c->last_flush_ns, memory_order_relaxed);
	if (now - last < FLUSH_NUDGE_NS ||
	    !atomic_compare_exchange_strong(&c->last_flush_ns, &last, now))
		return;
	pthread_mutex_lock(&c->lock);
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
}

static void stop_flusher(struct cupti_state *c)
{
	if (!c->flusher_started)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->flusher, NULL);
	c->flusher_started = false;
}

/* CUPTI's default clock (Linux: CLOCK_REALTIME), for the application's client after us. */
static uint64_t realtime_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* cupti_release() and cupti_stop() do not overlap (a handover while the process exits). */
static pthread_mutex_t release_lock = PTHREAD_MUTEX_INITIALIZER;

void cupti_release(struct inject_state *st)
{
	struct cupti_state *c = st->cupti;

	if (!c)
		return;
	pthread_mutex_lock(&release_lock);
	if (atomic_load(&c->released)) {
		pthread_mutex_unlock(&release_lock);
		return;
	}
	inject_enter_tool();
	stop_flusher(c);
	/* no more records of ours, then everything CUPTI holds for us, then hands off */
	for (size_t i = 0; i < sizeof(activity_kinds) / sizeof(activity_kinds[0]); i++)
		c->api.activity_disable(activity_kinds[i]);
	c->api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	atomic_store(&c->released, true);
	/* what we changed for every client goes back to CUPTI's defaults */
	if (c->own_clock)
		c->api.register_timestamp(realtime_clock);
	if (c->hw_trace && c->api.enable_hw_trace)
		c->api.enable_hw_trace(0);
	c->api.unsubscribe(c->subscriber);
	inject_leave_tool();
	pthread_mutex_unlock(&release_lock);
}

void *cupti_handle(const struct inject_state *st)
{
	return st->cupti ? st->cupti->handle : NULL;
}

bool cupti_released(const struct inject_state *st)
{
	return st->cupti && atomic_load(&st->cupti->released);
}

void cupti_stop(struct inject_state *st)
{
	struct cupti_state *c = st->cupti;

	if (!c)
		return;
	pthread_mutex_lock(&release_lock);
	inject_enter_tool();
	stop_flusher(c);
	/* handed over: CUPTI is the application's now, its last flush too */
	if (!atomic_load(&c->released)) {
		c->api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		send_cupti_calibration(st);
	}
	channel_status(&st->chan, INJ_PART_CUPTI, 0,
		       "CUPTI: %llu launch calls, %llu kernel records, %llu copy/memset records "
		       "(%llu of them grtrace's own; %llu more left to the CUDA events that timed "
		       "them), %llu records without their call, %llu without its return time, %llu "
		       "dropped",
		       (unsigned long long)atomic_load(&c->launch_calls),
		       (unsigned long long)atomic_load(&c->kernels),
		       (unsigned long long)atomic_load(&c->copies),
		       (unsigned long long)atomic_load(&c->own_records),
		       (unsigned long long)atomic_load(&c->left_to_events),
		       (unsigned long long)atomic_load(&c->unmatched),
		       (unsigned long long)atomic_load(&c->open_brackets),
		       (unsigned long long)atomic_load(&c->dropped));
	inject_leave_tool();
	pthread_mutex_unlock(&release_lock);
}
