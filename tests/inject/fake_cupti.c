/* A fake libcupti.so.13: driver callbacks and activity records for the fake driver's work. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "inject/cupti_decls.h"

/*
 * The fake libcuda calls fake_cupti_call() at the start of every launch,
 * copy and memset, and fake_cupti_kernel()/fake_cupti_copy() for the device
 * work the call made. Like CUPTI, a call gets a correlation id, the
 * subscriber's ENTER callback runs on the calling thread with a
 * CUpti_CallbackData laid out as the real one, and activity records (start
 * 10 us after the call, 2 us long, on the registered timestamp clock) wait
 * for a flush that hands them to the buffer callbacks. Graph launches give
 * several kernel records the launch's correlation id.
 *
 * Like the real CUPTI, there is one subscriber at a time (a second
 * cuptiSubscribe fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
 * until the first unsubscribes) and one pair of buffer callbacks (a later
 * registration replaces the earlier one: buffers CUPTI still holds then go
 * to the new owner). Records are kept only for the kinds enabled when the
 * work ran. FAKE_CUPTI_DROPS makes the first dropped-records query report
 * that many.
 */
#define EXPORT __attribute__((visibility("default")))
#define RECORD_SIZE 216
#define MAX_QUEUED 16384

struct queued_record {
	int kind;
	uint64_t start, end, bytes;
	uint32_t corr, graph;
	uint8_t copy_kind;
	int32_t grid[3], block[3];
	char *name;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_CallbackFunc callback;
static void *callback_data;
static int subscribed;
static uint8_t enabled_cbids[1024];
static uint8_t enabled_kinds[64];
static CUpti_BuffersCallbackRequestFunc buffer_request;
static CUpti_BuffersCallbackCompleteFunc buffer_complete;
static uint64_t (*timestamp_fn)(void);
static uint32_t next_corr = 100;
static struct queued_record queued[MAX_QUEUED];
static unsigned nqueued;
static int drops_reported;

static uint64_t now(void)
{
	struct timespec ts;

	if (timestamp_fn)
		return timestamp_fn();
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *data)
{
	pthread_mutex_lock(&lock);
	if (subscribed) {
		pthread_mutex_unlock(&lock);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	subscribed = 1;
	callback = cb;
	callback_data = data;
	memset(enabled_cbids, 0, sizeof(enabled_cbids));
	*sub = (CUpti_SubscriberHandle)&callback;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	pthread_mutex_lock(&lock);
	if (!subscribed || sub != (CUpti_SubscriberHandle)&callback) {
		pthread_mutex_unlock(&lock);
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	subscribed = 0;
	callback = NULL;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub, int domain,
				       uint32_t cbid)
{
	/* FAKE_CUPTI_ENABLE_US=N: each callback takes N us to turn on, as it can in CUPTI */
	const char *enable_us = getenv("FAKE_CUPTI_ENABLE_US");

	if (!subscribed || sub != (CUpti_SubscriberHandle)&callback)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid >= sizeof(enabled_cbids))
		return 1;
	if (enable_us)
		usleep((useconds_t)atoi(enable_us));
	enabled_cbids[cbid] = (uint8_t)enable;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(int kind)
{
	if (kind < 0 || kind >= (int)sizeof(enabled_kinds))
		return CUPTI_ERROR_INVALID_KIND;
	enabled_kinds[kind] = 1;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(int kind)
{
	if (kind < 0 || kind >= (int)sizeof(enabled_kinds))
		return CUPTI_ERROR_INVALID_KIND;
	enabled_kinds[kind] = 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc done)
{
	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	buffer_request = req;
	buffer_complete = done;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(uint64_t (*fn)(void))
{
	timestamp_fn = fn;
	return CUPTI_SUCCESS;
}

/* Like CUPTI on a GPU before Blackwell. */
EXPORT CUptiResult cuptiActivityEnableHWTrace(uint8_t enable)
{
	(void)enable;
	return CUPTI_ERROR_NOT_SUPPORTED;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
	*ts = now();
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
		 ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
		 : "fake CUPTI error";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + RECORD_SIZE : buf;

	if (next + RECORD_SIZE > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = next;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
	const char *env = getenv("FAKE_CUPTI_DROPS");

	(void)ctx, (void)stream;
	*n = 0;
	if (env && !drops_reported) {
		*n = (size_t)strtoul(env, NULL, 10);
		drops_reported = 1;
	}
	return CUPTI_SUCCESS;
}

static void put8(uint8_t *r, size_t off, uint8_t v)
{
	r[off] = v;
}
static void put32(uint8_t *r, size_t off, uint32_t v)
{
	memcpy(r + off, &v, 4);
}
static void put64(uint8_t *r, size_t off, uint64_t v)
{
	memcpy(r + off, &v, 8);
}

static void write_record(uint8_t *r, const struct queued_record *q)
{
	memset(r, 0, RECORD_SIZE);
	put32(r, 0, (uint32_t)q->kind);
	if (q->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
		put64(r, CUPTI_KERNEL_OFF_START, q->start);
		put64(r, CUPTI_KERNEL_OFF_END, q->end);
		put32(r, CUPTI_KERNEL_OFF_STREAM, 7);
		memcpy(r + CUPTI_KERNEL_OFF_GRID, q->grid, sizeof(q->grid));
		memcpy(r + CUPTI_KERNEL_OFF_BLOCK, q->block, sizeof(q->block));
		put32(r, CUPTI_KERNEL_OFF_CORRELATION, q->corr);
		memcpy(r + CUPTI_KERNEL_OFF_NAME, &q->name, sizeof(q->name));
		put32(r, CUPTI_KERNEL_OFF_GRAPH, q->graph);
		return;
	}
	put8(r, CUPTI_COPY_OFF_KIND, q->copy_kind);
	put64(r, CUPTI_COPY_OFF_BYTES, q->bytes);
	put64(r, CUPTI_COPY_OFF_START, q->start);
	put64(r, CUPTI_COPY_OFF_END, q->end);
	put32(r, CUPTI_COPY_OFF_STREAM, 7);
	put32(r, CUPTI_COPY_OFF_CORRELATION, q->corr);
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flags)
{
	CUpti_BuffersCallbackCompleteFunc done;
	uint8_t *buf = NULL;
	size_t size = 0, max = 0, used = 0;

	(void)flags;
	pthread_mutex_lock(&lock);
	if (!nqueued || !buffer_request) {
		pthread_mutex_unlock(&lock);
		return CUPTI_SUCCESS;
	}
	buffer_request(&buf, &size, &max);
	for (unsigned i = 0; i < nqueued && buf && used + RECORD_SIZE <= size; i++) {
		write_record(buf + used, &queued[i]);
		used += RECORD_SIZE;
	}
	nqueued = 0;
	done = buffer_complete;
	pthread_mutex_unlock(&lock);
	if (buf)
		done(NULL, 0, buf, size, used);
	return CUPTI_SUCCESS;
}

/*
 * Called by the fake driver at the start of a call that makes device work:
 * the call's correlation id, after the subscriber's ENTER callback.
 */
EXPORT uint32_t fake_cupti_call(uint32_t cbid, void *stream)
{
	uint8_t cbdata[80] = {0}, params[64] = {0};
	void *params_ptr = params;
	CUpti_CallbackFunc cb;
	void *data;
	uint32_t corr;

	pthread_mutex_lock(&lock);
	corr = next_corr++;
	cb = subscribed && cbid < sizeof(enabled_cbids) && enabled_cbids[cbid] ? callback : NULL;
	data = callback_data;
	pthread_mutex_unlock(&lock);
	memcpy(params + 40, &stream, sizeof(stream)); /* cuLaunchKernel_params.hStream */
	memcpy(cbdata + CUPTI_CB_OFF_PARAMS, &params_ptr, sizeof(params_ptr));
	memcpy(cbdata + CUPTI_CB_OFF_CORRELATION, &corr, sizeof(corr));
	if (cb)
		cb(data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, cbdata);
	return corr;
}

static void queue(struct queued_record *q)
{
	pthread_mutex_lock(&lock);
	if (enabled_kinds[q->kind] && nqueued < MAX_QUEUED) {
		q->start = now() + 10000;
		q->end = q->start + 2000;
		queued[nqueued++] = *q;
	} else {
		free(q->name);
	}
	pthread_mutex_unlock(&lock);
}

/* A kernel of call corr (graph: the graph's id, 0 for a plain launch). */
EXPORT void fake_cupti_kernel(uint32_t corr, const char *name, const unsigned grid[3],
			      const unsigned block[3], uint32_t graph)
{
	struct queued_record q = {.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .corr = corr,
				  .graph = graph, .name = strdup(name)};

	for (int i = 0; i < 3; i++) {
		q.grid[i] = (int32_t)grid[i];
		q.block[i] = (int32_t)block[i];
	}
	queue(&q);
}

/* A copy (copy_kind: CUPTI_MEMCPY_*) or, with memset, a memset of call corr. */
EXPORT void fake_cupti_copy(uint32_t corr, int memset_op, uint8_t copy_kind, uint64_t bytes)
{
	struct queued_record q = {
	    .kind = memset_op ? CUPTI_ACTIVITY_KIND_MEMSET : CUPTI_ACTIVITY_KIND_MEMCPY,
	    .corr = corr,
	    .copy_kind = copy_kind,
	    .bytes = bytes,
	};

	queue(&q);
}
