/* A fake libcupti.so.13: driver callbacks and kernel records for the fake driver's launches. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "inject/cupti_decls.h"

/*
 * The fake libcuda calls fake_cupti_launch() for every launch. Like CUPTI,
 * this assigns a correlation id, calls the subscriber's ENTER callback with a
 * CUpti_CallbackData laid out as the real one, and queues a kernel activity
 * record (start 10 us after the call, 2 us long, on the registered timestamp
 * clock) that a flush hands to the buffer callbacks. FAKE_CUPTI_DROPS makes
 * the first dropped-records query report that many.
 */
#define EXPORT __attribute__((visibility("default")))
#define KERNEL_RECORD_SIZE 216
#define MAX_QUEUED 4096

struct queued_kernel {
	uint64_t start, end;
	uint32_t corr;
	int32_t grid[3], block[3];
	char *name;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_CallbackFunc callback;
static void *callback_data;
static uint8_t enabled_cbids[1024];
static int activity_on;
static CUpti_BuffersCallbackRequestFunc buffer_request;
static CUpti_BuffersCallbackCompleteFunc buffer_complete;
static uint64_t (*timestamp_fn)(void);
static uint32_t next_corr = 100;
static struct queued_kernel queued[MAX_QUEUED];
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
	callback = cb;
	callback_data = data;
	*sub = (CUpti_SubscriberHandle)&callback;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub, int domain,
				       uint32_t cbid)
{
	(void)sub;
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid >= sizeof(enabled_cbids))
		return 1;
	enabled_cbids[cbid] = (uint8_t)enable;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(int kind)
{
	if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		activity_on = 1;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc done)
{
	buffer_request = req;
	buffer_complete = done;
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
	(void)r;
	*s = "fake CUPTI error";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + KERNEL_RECORD_SIZE : buf;

	if (next + KERNEL_RECORD_SIZE > buf + valid)
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

static void put32(uint8_t *r, size_t off, uint32_t v)
{
	memcpy(r + off, &v, 4);
}
static void put64(uint8_t *r, size_t off, uint64_t v)
{
	memcpy(r + off, &v, 8);
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flags)
{
	uint8_t *buf = NULL;
	size_t size = 0, max = 0, used = 0;

	(void)flags;
	pthread_mutex_lock(&lock);
	if (!nqueued || !buffer_request) {
		pthread_mutex_unlock(&lock);
		return CUPTI_SUCCESS;
	}
	buffer_request(&buf, &size, &max);
	for (unsigned i = 0; i < nqueued && buf && used + KERNEL_RECORD_SIZE <= size; i++) {
		uint8_t *r = buf + used;
		struct queued_kernel *q = &queued[i];

		memset(r, 0, KERNEL_RECORD_SIZE);
		put32(r, 0, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		put64(r, CUPTI_KERNEL_OFF_START, q->start);
		put64(r, CUPTI_KERNEL_OFF_END, q->end);
		put32(r, CUPTI_KERNEL_OFF_DEVICE, 0);
		put32(r, CUPTI_KERNEL_OFF_STREAM, 7);
		memcpy(r + CUPTI_KERNEL_OFF_GRID, q->grid, sizeof(q->grid));
		memcpy(r + CUPTI_KERNEL_OFF_BLOCK, q->block, sizeof(q->block));
		put32(r, CUPTI_KERNEL_OFF_CORRELATION, q->corr);
		memcpy(r + CUPTI_KERNEL_OFF_NAME, &q->name, sizeof(q->name));
		used += KERNEL_RECORD_SIZE;
	}
	nqueued = 0;
	pthread_mutex_unlock(&lock);
	if (buf)
		buffer_complete(NULL, 0, buf, size, used);
	return CUPTI_SUCCESS;
}

/* Called by the fake driver for each launch. */
EXPORT void fake_cupti_launch(const char *name, const unsigned grid[3], const unsigned block[3],
			      void *stream, uint32_t cbid)
{
	uint8_t cbdata[80] = {0}, params[64] = {0};
	void *params_ptr = params;
	uint32_t corr;

	pthread_mutex_lock(&lock);
	corr = next_corr++;
	pthread_mutex_unlock(&lock);
	memcpy(params + 40, &stream, sizeof(stream)); /* cuLaunchKernel_params.hStream */
	memcpy(cbdata + CUPTI_CB_OFF_PARAMS, &params_ptr, sizeof(params_ptr));
	memcpy(cbdata + CUPTI_CB_OFF_CORRELATION, &corr, sizeof(corr));
	if (callback && cbid < sizeof(enabled_cbids) && enabled_cbids[cbid])
		callback(callback_data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, cbdata);
	if (!activity_on)
		return;
	pthread_mutex_lock(&lock);
	if (nqueued < MAX_QUEUED) {
		struct queued_kernel *q = &queued[nqueued++];

		q->start = now() + 10000;
		q->end = q->start + 2000;
		q->corr = corr;
		for (int i = 0; i < 3; i++) {
			q->grid[i] = (int32_t)grid[i];
			q->block[i] = (int32_t)block[i];
		}
		q->name = strdup(name);
	}
	pthread_mutex_unlock(&lock);
}
