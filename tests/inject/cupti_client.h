/* A minimal CUPTI activity client, as profilers are: one subscriber, its own buffers, kernel counts. */
#ifndef GRT_TEST_CUPTI_CLIENT_H
#define GRT_TEST_CUPTI_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "inject/cupti_decls.h"

/*
 * Shared by the test programs that are CUPTI clients (a profiler inside the
 * application, another tool's injection library). Records are read with the
 * fake CUPTI's layout (216 bytes each, CUPTI 13's offsets); only kernels
 * named `counted` are counted. A buffer handed back that this client did not
 * hand out counts as foreign: CUPTI must give each client only its own.
 */
#define CLIENT_RECORD_SIZE 216
#define CLIENT_BUFFER_BYTES (1 << 20)
#define CLIENT_MAX_BUFFERS 256

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *data);
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
					   CUpti_BuffersCallbackCompleteFunc done);
CUptiResult cuptiActivityEnable(int kind);
CUptiResult cuptiActivityFlushAll(uint32_t flags);

struct cupti_client {
	const char *counted;
	atomic_uint kernels_seen, foreign_buffers, nbuffers;
	atomic_uint other_clock; /* records not on CUPTI's default clock (CLOCK_REALTIME here) */
	uint8_t *buffers[CLIENT_MAX_BUFFERS];
	CUpti_SubscriberHandle subscriber;
	int subscribe, registered, enabled; /* the CUptiResult of each call */
};

static struct cupti_client client;

/*
 * CUPTI's timestamps are CLOCK_REALTIME unless a client registers another
 * clock: a profiler lines its GPU records up with its CPU records on that.
 */
static bool near_realtime(uint64_t ns)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return ns + 60000000000ULL > now && ns < now + 60000000000ULL;
}

static void client_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	unsigned n = atomic_fetch_add(&client.nbuffers, 1);

	*buffer = n < CLIENT_MAX_BUFFERS ? malloc(CLIENT_BUFFER_BYTES) : NULL;
	if (n < CLIENT_MAX_BUFFERS)
		client.buffers[n] = *buffer;
	*size = *buffer ? CLIENT_BUFFER_BYTES : 0;
	*max_records = 0;
}

static void client_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
			    size_t valid)
{
	unsigned n = atomic_load(&client.nbuffers);
	bool mine = false;

	(void)ctx, (void)stream, (void)size;
	for (unsigned i = 0; i < n && i < CLIENT_MAX_BUFFERS; i++)
		mine |= client.buffers[i] == buffer;
	if (!mine) {
		atomic_fetch_add(&client.foreign_buffers, 1);
		return; /* not ours to read or free */
	}
	for (size_t off = 0; off + CLIENT_RECORD_SIZE <= valid; off += CLIENT_RECORD_SIZE) {
		const uint8_t *r = buffer + off;
		const char *name;

		if (*(const uint32_t *)r != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		memcpy(&name, r + CUPTI_KERNEL_OFF_NAME, sizeof(name));
		if (name && !strcmp(name, client.counted))
			atomic_fetch_add(&client.kernels_seen, 1);
		if (!near_realtime(*(const uint64_t *)(r + CUPTI_KERNEL_OFF_START)))
			atomic_fetch_add(&client.other_clock, 1);
	}
}

static void client_callback(void *data, int domain, uint32_t cbid, const void *cbdata)
{
	(void)data, (void)domain, (void)cbid, (void)cbdata;
}

/* The calls that make a program CUPTI's client, as it reaches them. */
struct cupti_entry_points {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
					  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(int);
};

/* Becomes CUPTI's client through those entry points, as a profiler starting does. */
static void client_start_with(const struct cupti_entry_points *ep, const char *counted)
{
	client.counted = counted;
	client.subscribe = ep->subscribe(&client.subscriber, client_callback, NULL);
	client.registered = ep->register_callbacks(client_request, client_complete);
	client.enabled = ep->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

/* The same through the functions it links. */
static void client_start(const char *counted)
{
	static const struct cupti_entry_points linked = {
	    cuptiSubscribe, cuptiActivityRegisterCallbacks, cuptiActivityEnable};

	client_start_with(&linked, counted);
}

#endif
