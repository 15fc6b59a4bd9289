/* A fake libcuda.so.1 for the inject tests: host memory, kernels that write probe records. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "inject/cuda_decls.h"
#include "inject/cupti_decls.h"
#include "inject/probe_buffer.h"
#include "inject/ptx_summarize.h"

/*
 * Enough of the driver for libgrtrace-inject.so to run its whole pipeline on
 * a machine without a GPU: device memory is host memory, a launch of a
 * rewritten kernel fills its probe buffer as the PTX probes would (block b
 * starts at t0 + b us and runs 5 us; the last block runs 25 us; block b sits
 * on SM b % 4), the calibration kernel answers from a thread with
 * "globaltimer" = CLOCK_MONOTONIC + FAKE_GT_OFFSET, and CUPTI (when the fake
 * libcupti is loaded) hears about launches through fake_cupti_launch().
 * Launch counts per kernel name are printed at exit for the tests to check.
 */
#define EXPORT __attribute__((visibility("default")))
#define FAKE_GT_OFFSET 1000000ULL
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES 701


#define FAKE_GLOBALS 16
#define FAKE_GLOBAL_BYTES 64

/* A module variable's storage: cuModuleGetGlobal's answer. */
struct fake_global {
	char name[128];
	void *mem;
};

struct fake_module {
	char *text;
	int instrumented; /* came out of our "JIT" */
	struct fake_global globals[FAKE_GLOBALS];
	struct fake_module *next; /* every module loaded, for checking slots against them */
};

struct fake_function {
	struct fake_module *mod;
	char name[256];
	unsigned nparams;
};

struct fake_calib {
	pthread_t thread;
	void *stream; /* where it was launched: synchronizing that stream waits for it */
	volatile uint32_t *flag;
	volatile uint64_t *out;
	unsigned rounds;
	int running;
};

static struct fake_calib calib;
static __thread void *current_ctx;
static int ctx_token;
static atomic_uint launches_plain, launches_probed, launches_calib, launches_summarize;
static atomic_uint graph_launches, copies, memsets;
static atomic_int application_launched; /* a kernel not named __grt_* ran */
static atomic_uint application_launches;
static atomic_uint events_legacy, events_per_thread;
static atomic_uint slots_right, slots_wrong; /* what the instrumented copies' slots held */
static struct fake_module *all_modules;
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
/* driver calls that are not launches, to tell what a launch costs beside itself */
static atomic_uint allocs, event_records, app_event_records, event_waits, event_queries, stream_syncs;
static atomic_uint event_elapsed; /* cuEventElapsedTime calls: copies timed with events */
static atomic_uint calib_syncs;	  /* of stream_syncs, the calibration stream's (their number follows time) */
static atomic_uint func_loads; /* cuFuncLoad: functions loaded ahead of their first launch */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t fake_globaltimer(void)
{
	return mono_ns() + FAKE_GT_OFFSET;
}

/* The fake libcupti's hooks, when the inject library loaded it (fake_cupti.c). */
struct cupti_hooks {
	uint32_t (*call)(uint32_t cbid, void *stream);
	void (*kernel)(uint32_t corr, const char *name, const unsigned grid[3],
		       const unsigned block[3], uint32_t graph);
	void (*copy)(uint32_t corr, int memset_op, uint8_t copy_kind, uint64_t bytes);
};

static const struct cupti_hooks *cupti(void)
{
	/* the inject library dlopen()s CUPTI privately: find it by soname (once found, kept: a
	 * lookup per call would make the fake slower than the library it measures) */
	static struct cupti_hooks found;
	static atomic_int ready;
	void *lib;

	if (atomic_load(&ready))
		return &found;
	lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		return NULL;
	found.call = (uint32_t(*)(uint32_t, void *))dlsym(lib, "fake_cupti_call");
	found.kernel = (void (*)(uint32_t, const char *, const unsigned *, const unsigned *,
				 uint32_t))dlsym(lib, "fake_cupti_kernel");
	found.copy = (void (*)(uint32_t, int, uint8_t, uint64_t))dlsym(lib, "fake_cupti_copy");
	if (!found.call || !found.kernel || !found.copy)
		return NULL;
	atomic_store(&ready, 1);
	return &found;
}

/* CUPTI hears of a call that makes device work: its correlation id (0 without CUPTI). */
static uint32_t cupti_call(uint32_t cbid, void *stream)
{
	const struct cupti_hooks *h = cupti();

	return h ? h->call(cbid, stream) : 0;
}

static void cupti_kernel(uint32_t corr, const char *name, const unsigned grid[3],
			 const unsigned block[3], uint32_t graph)
{
	const struct cupti_hooks *h = cupti();

	if (h && corr)
		h->kernel(corr, name, grid, block, graph);
}

static void cupti_copy(uint32_t corr, int memset_op, uint8_t copy_kind, uint64_t bytes)
{
	const struct cupti_hooks *h = cupti();

	if (h && corr)
		h->copy(corr, memset_op, copy_kind, bytes);
}

/* Like the driver: a tool named by CUDA_INJECTION64_PATH is loaded and started at cuInit. */
EXPORT CUresult cuInit(unsigned flags)
{
	static atomic_int injected;
	const char *path = getenv("CUDA_INJECTION64_PATH");
	void *tool;
	int (*init)(void);

	(void)flags;
	if (!path || !*path || atomic_exchange(&injected, 1))
		return 0;
	tool = dlopen(path, RTLD_NOW);
	init = tool ? (int (*)(void))dlsym(tool, "InitializeInjection") : NULL;
	if (init)
		init();
	return 0;
}
EXPORT CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return 0;
}
EXPORT CUresult cuDeviceGet(int *dev, int ordinal)
{
	*dev = ordinal;
	return 0;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	/* compute capability 9.x with 4 SMs: the fake's blocks run on SMs 0-3 */
	*v = attr == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9
	     : attr == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT  ? 4
								 : 0;
	return 0;
}

/* 40 GiB, or FAKE_CUDA_TOTAL_MB: the probe pool's default budget follows it */
EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
	const char *mb = getenv("FAKE_CUDA_TOTAL_MB");

	(void)dev;
	*bytes = (size_t)(mb ? strtoull(mb, NULL, 10) : 40960) << 20;
	return 0;
}

EXPORT CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev)
{
	(void)flags, (void)dev;
	*ctx = &ctx_token;
	current_ctx = *ctx;
	return 0;
}

EXPORT CUresult cuCtxGetCurrent(void **ctx)
{
	*ctx = current_ctx;
	return 0;
}
EXPORT CUresult cuCtxSetCurrent(void *ctx)
{
	current_ctx = ctx;
	return 0;
}
EXPORT CUresult cuCtxPushCurrent_v2(void *ctx)
{
	current_ctx = ctx;
	return 0;
}
EXPORT CUresult cuCtxPopCurrent_v2(void **ctx)
{
	if (ctx)
		*ctx = current_ctx;
	return 0;
}
EXPORT CUresult cuCtxGetDevice(int *dev)
{
	*dev = 0;
	return current_ctx ? 0 : 201;
}

static pthread_mutex_t calib_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A context synchronize, or one of the calibration's stream, waits for the
 * calibration "kernel" (its stream is non-blocking: no other stream waits
 * for it); several threads may synchronize at once.
 */
static void calib_join(void)
{
	pthread_mutex_lock(&calib_lock);
	if (calib.running) {
		pthread_join(calib.thread, NULL);
		calib.running = 0;
	}
	pthread_mutex_unlock(&calib_lock);
}

/*
 * Stream capture as the driver enforces it: while a stream captures in
 * global mode, a potentially unsafe call (synchronization, allocation, module
 * load) from any thread whose own capture mode is not relaxed fails and
 * invalidates the capture, which then ends in an error.
 */
#define FAKE_CAPTURE_MODE_GLOBAL 0
#define FAKE_CAPTURE_MODE_RELAXED 2
#define FAKE_ERROR_CAPTURE_UNSUPPORTED 900
#define FAKE_ERROR_CAPTURE_INVALIDATED 901
static void *capturing_stream;
static atomic_int global_captures, capture_invalidated;
static atomic_uint unsafe_in_capture; /* calls refused for it, for the report */
static __thread int thread_capture_mode = FAKE_CAPTURE_MODE_GLOBAL;

static CUresult unsafe_call(void)
{
	if (!atomic_load(&global_captures) || thread_capture_mode == FAKE_CAPTURE_MODE_RELAXED)
		return 0;
	atomic_store(&capture_invalidated, 1);
	atomic_fetch_add(&unsafe_in_capture, 1);
	return FAKE_ERROR_CAPTURE_UNSUPPORTED;
}

EXPORT CUresult cuThreadExchangeStreamCaptureMode(int *mode)
{
	int old = thread_capture_mode;

	thread_capture_mode = *mode;
	*mode = old;
	return 0;
}

EXPORT CUresult cuStreamBeginCapture_v2(void *s, int mode)
{
	if (capturing_stream)
		return 1; /* one capture at a time is all the fake keeps */
	capturing_stream = s;
	atomic_store(&capture_invalidated, 0);
	if (mode == FAKE_CAPTURE_MODE_GLOBAL)
		atomic_fetch_add(&global_captures, 1);
	thread_capture_mode = mode; /* the capturing thread is held to its capture's mode */
	return 0;
}

EXPORT CUresult cuStreamEndCapture(void *s, void **graph)
{
	if (s != capturing_stream)
		return 1;
	capturing_stream = NULL;
	if (thread_capture_mode == FAKE_CAPTURE_MODE_GLOBAL)
		atomic_fetch_sub(&global_captures, 1);
	thread_capture_mode = FAKE_CAPTURE_MODE_GLOBAL;
	*graph = NULL;
	if (atomic_load(&capture_invalidated))
		return FAKE_ERROR_CAPTURE_INVALIDATED;
	*graph = malloc(1);
	return 0;
}

static void gpu_catch_up(void);
static bool app_stream(void *s);

EXPORT CUresult cuCtxSynchronize(void)
{
	if (unsafe_call())
		return FAKE_ERROR_CAPTURE_UNSUPPORTED;
	calib_join();
	gpu_catch_up();
	return 0;
}
EXPORT CUresult cuCtxSynchronize_v2(void *ctx)
{
	(void)ctx;
	if (unsafe_call())
		return FAKE_ERROR_CAPTURE_UNSUPPORTED;
	calib_join();
	gpu_catch_up();
	return 0;
}
EXPORT CUresult cuStreamCreate(void **s, unsigned flags)
{
	(void)flags;
	*s = malloc(1);
	return 0;
}
EXPORT CUresult cuStreamSynchronize(void *s)
{
	atomic_fetch_add(&stream_syncs, 1);
	if (unsafe_call())
		return FAKE_ERROR_CAPTURE_UNSUPPORTED;
	if (s == calib.stream) {
		atomic_fetch_add(&calib_syncs, 1);
		calib_join();
	}
	if (app_stream(s))
		gpu_catch_up();
	return 0;
}
EXPORT CUresult cuStreamSynchronize_ptsz(void *s)
{
	atomic_fetch_add(&stream_syncs, 1);
	if (unsafe_call())
		return FAKE_ERROR_CAPTURE_UNSUPPORTED;
	if (s == calib.stream) {
		atomic_fetch_add(&calib_syncs, 1);
		calib_join();
	}
	if (app_stream(s ? s : (void *)0x2))
		gpu_catch_up();
	return 0;
}
static void *calib_kernel(void *arg);

EXPORT CUresult cuStreamQuery(void *s)
{
	if (unsafe_call())
		return FAKE_ERROR_CAPTURE_UNSUPPORTED;
	if (s == calib.stream)
		calib_join(); /* the fake "kernel" finishes quickly once told to abort */
	return 0;
}
EXPORT CUresult cuStreamIsCapturing(void *s, int *st)
{
	*st = s && s == capturing_stream; /* CU_STREAM_CAPTURE_STATUS_ACTIVE */
	return 0;
}
/*
 * FAKE_GPU_BEHIND=1: a GPU that has not run the application's kernels yet.
 * An event recorded on a stream the application launched a kernel on
 * completes only when the application synchronizes (its context, or one of
 * those streams); grtrace's own streams run at once. Without it, every event
 * is complete when recorded.
 */
struct fake_event {
	bool held;
	unsigned gen; /* the synchronization generation it waits for the end of */
	uint64_t at_ns; /* CLOCK_MONOTONIC of its recording: the fake GPU is never behind in time */
};

#define APP_STREAMS 8
static void *app_streams[APP_STREAMS];
static atomic_uint napp_streams;
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gpu_caught_up = PTHREAD_COND_INITIALIZER;
static unsigned sync_gen;

static bool app_stream(void *s)
{
	for (unsigned i = 0; i < atomic_load(&napp_streams); i++)
		if (app_streams[i] == s)
			return true;
	return false;
}

static void app_stream_used(void *s)
{
	pthread_mutex_lock(&gpu_lock);
	if (!app_stream(s) && atomic_load(&napp_streams) < APP_STREAMS)
		app_streams[atomic_fetch_add(&napp_streams, 1)] = s;
	pthread_mutex_unlock(&gpu_lock);
}

/* The application synchronized: what it launched so far has run. */
static void gpu_catch_up(void)
{
	pthread_mutex_lock(&gpu_lock);
	sync_gen++;
	pthread_cond_broadcast(&gpu_caught_up);
	pthread_mutex_unlock(&gpu_lock);
}

static bool event_pending(const struct fake_event *ev)
{
	bool pending;

	pthread_mutex_lock(&gpu_lock);
	pending = ev->held && ev->gen == sync_gen;
	pthread_mutex_unlock(&gpu_lock);
	return pending;
}

/* FAKE_CUDA_EVENTS_MAX=N: cuEventCreate fails (out of memory) once N events were made */
static atomic_uint events_made, event_create_fails;

EXPORT CUresult cuEventCreate(void **e, unsigned flags)
{
	const char *max = getenv("FAKE_CUDA_EVENTS_MAX");

	(void)flags;
	if (max && atomic_load(&events_made) >= (unsigned)atoi(max)) {
		atomic_fetch_add(&event_create_fails, 1);
		*e = NULL;
		return 2;
	}
	*e = calloc(1, sizeof(struct fake_event));
	if (*e)
		atomic_fetch_add(&events_made, 1);
	return *e ? 0 : 2;
}
EXPORT CUresult cuEventRecord(void *e, void *s)
{
	struct fake_event *ev = e;

	atomic_fetch_add(&event_records, 1);
	/* which default stream events land on: the legacy one (NULL) or the thread's own (0x2) */
	if (!s)
		atomic_fetch_add(&events_legacy, 1);
	else if (s == (void *)0x2)
		atomic_fetch_add(&events_per_thread, 1);
	pthread_mutex_lock(&gpu_lock);
	if (app_stream(s))
		atomic_fetch_add(&app_event_records, 1);
	ev->held = getenv("FAKE_GPU_BEHIND") && app_stream(s);
	ev->gen = sync_gen;
	ev->at_ns = mono_ns();
	pthread_mutex_unlock(&gpu_lock);
	return 0;
}
EXPORT CUresult cuEventElapsedTime(float *ms, void *a, void *b)
{
	const struct fake_event *ea = a, *eb = b;

	atomic_fetch_add(&event_elapsed, 1);
	if (!ea->at_ns || !eb->at_ns || event_pending(ea) || event_pending(eb))
		return CUDA_ERROR_NOT_READY;
	*ms = (float)(((double)eb->at_ns - (double)ea->at_ns) / 1e6);
	return 0;
}
EXPORT CUresult cuEventDestroy_v2(void *e)
{
	free(e);
	return 0;
}
EXPORT CUresult cuEventQuery(void *e)
{
	atomic_fetch_add(&event_queries, 1);
	return event_pending(e) ? CUDA_ERROR_NOT_READY : 0;
}
EXPORT CUresult cuEventSynchronize(void *e)
{
	struct fake_event *ev = e;
	struct timespec until;

	atomic_fetch_add(&event_waits, 1);
	/* at most 10 s: a test that never synchronizes ends rather than hangs */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&gpu_lock);
	while (ev->held && ev->gen == sync_gen &&
	       pthread_cond_timedwait(&gpu_caught_up, &gpu_lock, &until) == 0)
		;
	pthread_mutex_unlock(&gpu_lock);
	return 0;
}

/*
 * FAKE_CUDA_ADJACENT_ALLOCS=1: allocations are carved one after another from
 * one region, as a real driver may place them, and a 2-D copy whose source
 * runs past the end of its allocation fails as on a real driver.
 */
#define ADJACENT_REGION (256u << 20)
static struct {
	pthread_mutex_t lock;
	char *region;
	size_t used;
	struct {
		uintptr_t base;
		size_t size;
	} allocs[4096];
	unsigned n;
} adjacent = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *adjacent_alloc(size_t n)
{
	void *m = NULL;

	pthread_mutex_lock(&adjacent.lock);
	if (!adjacent.region)
		adjacent.region = calloc(1, ADJACENT_REGION);
	n = (n + 255) & ~(size_t)255;
	if (adjacent.region && adjacent.used + n <= ADJACENT_REGION && adjacent.n < 4096) {
		m = adjacent.region + adjacent.used;
		adjacent.allocs[adjacent.n].base = (uintptr_t)m;
		adjacent.allocs[adjacent.n++].size = n;
		adjacent.used += n;
	}
	pthread_mutex_unlock(&adjacent.lock);
	return m;
}

/* Whether [p, p + len) lies in one allocation (always, outside the adjacent region). */
static bool within_one_alloc(uintptr_t p, size_t len)
{
	bool ok = true;

	pthread_mutex_lock(&adjacent.lock);
	if (adjacent.region && p >= (uintptr_t)adjacent.region &&
	    p < (uintptr_t)adjacent.region + ADJACENT_REGION) {
		ok = false;
		for (unsigned i = 0; i < adjacent.n; i++)
			if (p >= adjacent.allocs[i].base &&
			    p + len <= adjacent.allocs[i].base + adjacent.allocs[i].size)
				ok = true;
	}
	pthread_mutex_unlock(&adjacent.lock);
	return ok;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	void *m;

	if (unsafe_call())
		return FAKE_ERROR_CAPTURE_UNSUPPORTED;
	atomic_fetch_add(&allocs, 1);
	m = getenv("FAKE_CUDA_ADJACENT_ALLOCS") ? adjacent_alloc(n) : calloc(1, n);

	*p = (CUdeviceptr)(uintptr_t)m;
	return m ? 0 : 2;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	if (adjacent.region && p >= (uintptr_t)adjacent.region &&
	    p < (uintptr_t)adjacent.region + ADJACENT_REGION)
		return 0; /* carved from the region: never reused */
	free((void *)(uintptr_t)p);
	return 0;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
	(void)flags;
	*p = calloc(1, n);
	return *p ? 0 : 2;
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	free(p);
	return 0;
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
	(void)flags;
	*d = (CUdeviceptr)(uintptr_t)p;
	return 0;
}

/*
 * FAKE_CUDA_COPY_US=N: a copy or memset takes N us between its ENTER callback
 * and its activity record, as a real one does on the device: a tool turning
 * CUPTI on meanwhile sees calls whose record comes without their callback.
 */
static void copy_takes_time(void)
{
	const char *us = getenv("FAKE_CUDA_COPY_US");

	if (us)
		usleep((useconds_t)atoi(us));
}

static CUresult copy(void *dst, const void *src, size_t n, void *s, uint32_t cbid, uint8_t kind)
{
	uint32_t corr = cupti_call(cbid, s);

	copy_takes_time();
	memcpy(dst, src, n);
	atomic_fetch_add(&copies, 1);
	cupti_copy(corr, 0, kind, n);
	return 0;
}

static CUresult set(CUdeviceptr dst, unsigned v, size_t unit, size_t n, void *s, uint32_t cbid)
{
	uint32_t corr = cupti_call(cbid, s);

	copy_takes_time();
	for (size_t i = 0; i < n; i++)
		memcpy((char *)(uintptr_t)dst + i * unit, &v, unit);
	atomic_fetch_add(&memsets, 1);
	cupti_copy(corr, 1, 0, n * unit);
	return 0;
}

#define HOST(p) ((void *)(uintptr_t)(p))

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	return copy(HOST(dst), src, n, NULL, 276, CUPTI_MEMCPY_HTOD);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	return copy(dst, HOST(src), n, NULL, 278, CUPTI_MEMCPY_DTOH);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, void *s)
{
	return copy(HOST(dst), src, n, s, 277, CUPTI_MEMCPY_HTOD);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, void *s)
{
	return copy(HOST(dst), src, n, s, 421, CUPTI_MEMCPY_HTOD);
}

/*
 * FAKE_CUDA_COLLECTOR_COPY_WAITS=K: the first copy to the host by grtrace's
 * collection thread (grtrace-probes) waits, 5 s at most, until the
 * application has launched K more kernels: whether the application may
 * launch while the collection reads. The report says how it ended.
 */
static atomic_flag collector_waited = ATOMIC_FLAG_INIT;
static const char *collector_wait = "none";

static void collector_copy_wait(void)
{
	const char *k = getenv("FAKE_CUDA_COLLECTOR_COPY_WAITS");
	char name[17] = "";
	unsigned want;

	if (!k || prctl(PR_GET_NAME, name) || strcmp(name, "grtrace-probes") ||
	    atomic_flag_test_and_set(&collector_waited))
		return;
	want = atomic_load(&application_launches) + (unsigned)atoi(k);
	for (int i = 0; i < 5000 && atomic_load(&application_launches) < want; i++)
		usleep(1000);
	collector_wait =
	    atomic_load(&application_launches) >= want ? "launches-went-on" : "timeout";
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *s)
{
	collector_copy_wait();
	return copy(dst, HOST(src), n, s, 279, CUPTI_MEMCPY_DTOH);
}

EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, void *s)
{
	uint32_t corr = cupti_call(289, s);

	if (c->srcMemoryType != CU_MEMORYTYPE_DEVICE || c->dstMemoryType != CU_MEMORYTYPE_HOST ||
	    getenv("FAKE_CUDA_FAIL_COPIES"))
		return CUDA_ERROR_INVALID_VALUE; /* the only direction the library asks for */
	if (c->Height &&
	    !within_one_alloc((uintptr_t)c->srcDevice + c->srcY * c->srcPitch + c->srcXInBytes,
			      (c->Height - 1) * c->srcPitch + c->WidthInBytes))
		return CUDA_ERROR_INVALID_VALUE; /* a real driver's answer too */
	for (size_t y = 0; y < c->Height; y++)
		memcpy((char *)c->dstHost + (c->dstY + y) * c->dstPitch + c->dstXInBytes,
		       (const char *)(uintptr_t)c->srcDevice + (c->srcY + y) * c->srcPitch +
			   c->srcXInBytes,
		       c->WidthInBytes);
	atomic_fetch_add(&copies, 1);
	cupti_copy(corr, 0, CUPTI_MEMCPY_DTOH, c->WidthInBytes * c->Height);
	return 0;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
	return set(dst, v, 1, n, NULL, 249);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, void *s)
{
	return set(dst, v, 1, n, s, 216);
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, void *s)
{
	return set(dst, v, 4, n, s, 220);
}

EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned v, size_t n, void *s)
{
	return set(dst, v, 4, n, s, 430);
}

EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned v, size_t w, size_t h,
				   void *s)
{
	uint32_t corr = cupti_call(226, s);

	for (size_t y = 0; y < h; y++)
		for (size_t x = 0; x < w; x++)
			memcpy((char *)(uintptr_t)dst + y * pitch + x * 4, &v, 4);
	atomic_fetch_add(&memsets, 1);
	cupti_copy(corr, 1, 0, w * h * 4);
	return 0;
}

static CUresult load(void **mod, const void *image)
{
	struct fake_module *m = calloc(1, sizeof(*m));
	const char *text = image;

	if (!m)
		return 2;
	if (!strncmp(text, "FAKECUBIN\n", 10)) {
		m->instrumented = 1;
		text += 10;
	}
	if (!strstr(text, ".entry")) {
		free(m);
		return 200; /* CUDA_ERROR_INVALID_IMAGE */
	}
	m->text = strdup(text);
	*mod = m;
	pthread_mutex_lock(&modules_lock);
	m->next = all_modules;
	all_modules = m;
	pthread_mutex_unlock(&modules_lock);
	return 0;
}

/* Whether the module's text declares a .const/.global variable name (one per line). */
static int declares(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end = strchr(line, '\n'), *at;

		if (!strncmp(line, ".visible ", 9))
			line += 9;
		if (strncmp(line, ".global", 7) && strncmp(line, ".const", 6))
			continue;
		for (at = strstr(line, name); at && (!end || at < end); at = strstr(at + 1, name))
			if (at[-1] == ' ' && (at[n] == ';' || at[n] == '['))
				return 1;
	}
	return 0;
}

/* The storage of variable name in m, made on first use; NULL when m does not declare it. */
static void *fake_global(struct fake_module *m, const char *name)
{
	const char *refuse = getenv("FAKE_CUDA_NO_GLOBAL");

	if (!m->instrumented && refuse && !strcmp(refuse, name))
		return NULL; /* as if the loaded module lacked it */
	for (int i = 0; i < FAKE_GLOBALS; i++) {
		struct fake_global *g = &m->globals[i];

		if (g->mem && !strcmp(g->name, name))
			return g->mem;
		if (g->mem || !declares(m->text, name))
			continue;
		snprintf(g->name, sizeof(g->name), "%s", name);
		g->mem = calloc(1, FAKE_GLOBAL_BYTES);
		return g->mem;
	}
	return NULL;
}

EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, void *mod, const char *name)
{
	void *mem = fake_global(mod, name);

	if (!mem)
		return CUDA_ERROR_NOT_FOUND;
	if (dptr)
		*dptr = (CUdeviceptr)(uintptr_t)mem;
	if (bytes)
		*bytes = FAKE_GLOBAL_BYTES;
	return 0;
}

EXPORT CUresult cuStreamDestroy_v2(void *s)
{
	free(s);
	return 0;
}

/*
 * Where kernel fn reads variable name: its module's own instance, or, in an
 * instrumented copy that redirected it, the address in its slot (`<p>var_<name>`),
 * checked against the application's modules' instances.
 */
static void *variable_of(const struct fake_function *fn, const char *name)
{
	char suffix[160];
	const char *at, *start;
	char slot[200];
	void *mem, *addr;
	int right = 0;

	snprintf(suffix, sizeof(suffix), "_var_%s;", name);
	at = fn->mod->instrumented ? strstr(fn->mod->text, suffix) : NULL;
	if (!at)
		return fake_global(fn->mod, name);
	for (start = at; start > fn->mod->text && start[-1] != ' '; start--)
		;
	snprintf(slot, sizeof(slot), "%.*s", (int)(at - start) + (int)strlen(suffix) - 1, start);
	mem = fake_global(fn->mod, slot);
	addr = mem ? *(void **)mem : NULL;
	pthread_mutex_lock(&modules_lock);
	for (struct fake_module *m = all_modules; m && addr; m = m->next)
		for (int i = 0; !m->instrumented && i < FAKE_GLOBALS; i++)
			right |= m->globals[i].mem == addr && !strcmp(m->globals[i].name, name);
	pthread_mutex_unlock(&modules_lock);
	atomic_fetch_add(right ? &slots_right : &slots_wrong, 1);
	return right ? addr : NULL;
}

/*
 * vec_scale(out): out[0] = the __constant__ fixed_n; vec_count(): the __device__ counter hits
 * += 1, once per launch. Their results tell whether the copy reads the application's variables.
 */
static void module_variable_kernels(const struct fake_function *fn, void **params)
{
	uint32_t *v;

	if (!strcmp(fn->name, "vec_scale") && (v = variable_of(fn, "fixed_n")))
		*(uint32_t *)(uintptr_t) * (CUdeviceptr *)params[0] = *v;
	else if (!strcmp(fn->name, "vec_count") && (v = variable_of(fn, "hits")))
		(*v)++;
}

EXPORT CUresult cuModuleLoadData(void **mod, const void *image)
{
	if (unsafe_call())
		return FAKE_ERROR_CAPTURE_UNSUPPORTED;
	return load(mod, image);
}

EXPORT CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, void *o, void **v)
{
	(void)n, (void)o, (void)v;
	/* FAKE_LOAD_EX_DELAY_MS: a slow JIT, so the library's loads land inside a test's window */
	if (getenv("FAKE_LOAD_EX_DELAY_MS"))
		usleep((useconds_t)atoi(getenv("FAKE_LOAD_EX_DELAY_MS")) * 1000);
	if (unsafe_call())
		return FAKE_ERROR_CAPTURE_UNSUPPORTED;
	return load(mod, image);
}

EXPORT CUresult cuModuleUnload(void *mod)
{
	(void)mod;
	return 0;
}

/* Parameters of .entry name in the module text: `.param` between its parentheses. */
static int count_params(const char *text, const char *name, unsigned *n)
{
	char needle[300];
	const char *at, *close;

	snprintf(needle, sizeof(needle), ".entry %s(", name);
	at = strstr(text, needle);
	if (!at)
		return -1;
	at += strlen(needle);
	close = strchr(at, ')');
	*n = 0;
	while ((at = strstr(at, ".param")) && at < close) {
		(*n)++;
		at += 6;
	}
	return 0;
}

/* Lazy loading's "load it now": nothing to load here, only counted. */
EXPORT CUresult cuFuncLoad(void *f)
{
	(void)f;
	atomic_fetch_add(&func_loads, 1);
	return 0;
}

EXPORT CUresult cuModuleGetFunction(void **f, void *mod, const char *name)
{
	struct fake_module *m = mod;
	struct fake_function *fn = calloc(1, sizeof(*fn));

	if (!fn)
		return 2;
	if (count_params(m->text, name, &fn->nparams) ||
	    (!strcmp(name, GRT_SUMMARIZE_KERNEL) && getenv("FAKE_CUDA_FAIL_SUMMARIZER"))) {
		free(fn);
		return CUDA_ERROR_NOT_FOUND;
	}
	fn->mod = m;
	snprintf(fn->name, sizeof(fn->name), "%s", name);
	*f = fn;
	return 0;
}

/*
 * FAKE_CUDA_CALIB_AFTER_FIRST_LAUNCH: the calibration "kernel" starts only
 * after an application kernel ran (as on a GPU busy with the application's
 * work), at most 5 s late: a library that made the application's first
 * launch wait for the calibration gives up on it instead.
 */
static void wait_for_application(void)
{
	if (!getenv("FAKE_CUDA_CALIB_AFTER_FIRST_LAUNCH"))
		return;
	for (int i = 0; i < 5000 && !atomic_load(&application_launched); i++)
		usleep(1000);
}

static void *calib_kernel(void *arg)
{
	(void)arg;
	wait_for_application();
	calib.out[0] = fake_globaltimer();
	for (unsigned k = 1; k <= calib.rounds; k++) {
		while (__atomic_load_n(calib.flag, __ATOMIC_SEQ_CST) < k)
			;
		calib.out[k] = fake_globaltimer();
	}
	return NULL;
}

/* What __grt_summarize adds to a buffer's totals for one span. */
static void fake_totals(struct grt_probe_head *head, const struct grt_probe_span *r)
{
	struct grt_probe_sm *sm = (void *)((uint8_t *)head + GRT_PROBE_SM_OFF);
	uint32_t *hist = (void *)((uint8_t *)head + GRT_PROBE_HIST_OFF);
	uint64_t dur = grt_probe_dur_ns(r->dur);
	uint32_t d32 = dur > UINT32_MAX ? UINT32_MAX : (uint32_t)dur;

	sm += r->smid < GRT_PROBE_SM_SLOTS ? r->smid : GRT_PROBE_SM_SLOTS - 1;
	if (~r->start_ns > sm->first_start_inv)
		sm->first_start_inv = ~r->start_ns;
	if (r->start_ns + dur > sm->last_end)
		sm->last_end = r->start_ns + dur;
	sm->busy_ns += dur;
	sm->blocks++;
	if (d32 > sm->max_ns)
		sm->max_ns = d32;
	hist[grt_probe_bucket(d32)]++;
}

/* The summarizer kernel: each job's totals rewritten from its spans with its tag. */
static void fake_summarize(void **params, unsigned njobs)
{
	const struct grt_probe_summary_job *jobs = (void *)(uintptr_t) * (CUdeviceptr *)params[0];
	unsigned sm_slots = *(unsigned *)params[1];

	for (unsigned j = 0; j < njobs; j++) {
		struct grt_probe_head *head = (void *)(uintptr_t)jobs[j].buffer;
		const struct grt_probe_span *r =
		    (const void *)((uint8_t *)head + grt_probe_spans_off(GRT_PROBE_BLOCK));

		memset((uint8_t *)head + GRT_PROBE_HIST_OFF, 0,
		       grt_probe_totals_bytes(sm_slots) - GRT_PROBE_HIST_OFF);
		for (uint32_t i = 0; i < jobs[j].spans; i++)
			if (r[i].tag == jobs[j].tag)
				fake_totals(head, &r[i]);
	}
	atomic_fetch_add(&launches_summarize, 1);
}

/* What the PTX probes would have written for this launch: a tagged span per block (thread). */
static void fill_probes(const struct fake_function *fn, void **params, const unsigned grid[3],
			const unsigned block[3])
{
	/* the probes' parameter is the last, or the one before when GPU eBPF programs follow */
	bool before_bpf = strstr(fn->mod->text, "bpf_env") && strstr(fn->mod->text, ".u64 grt_p_buf");
	uint64_t param = *(uint64_t *)params[fn->nparams - 1 - before_bpf];
	struct grt_probe_head *head = (void *)(uintptr_t)(param & GRT_PROBE_ADDR_MASK);
	uint16_t tag = (uint16_t)(param >> GRT_PROBE_TAG_SHIFT);
	uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2], t0 = fake_globaltimer();
	uint64_t tpb = (uint64_t)block[0] * block[1] * block[2];
	struct grt_probe_span *r;
	bool threads;

	if (head->magic != GRT_PROBE_MAGIC)
		return;
	threads = head->mode == GRT_PROBE_THREAD;
	r = (void *)((uint8_t *)head + grt_probe_spans_off(head->mode));
	for (uint64_t i = 0; i < (threads ? blocks * tpb : blocks) && i < head->capacity; i++) {
		uint64_t b = threads ? i / tpb : i;

		r[i].start_ns = t0 + b * 1000 + (threads ? i % tpb : 0);
		r[i].dur = !threads && b == blocks - 1 ? 25000 : 5000;
		r[i].smid = (uint16_t)(b % 4);
		r[i].tag = tag;
	}
}

/*
 * GPU eBPF (FAKE_CUDA_BPF_DEVICE, tests/inject/fake_bpf_device.c): a kernel
 * the library gave programs runs them there, with the environment address
 * its last parameter carries.
 */
typedef int (*bpf_device_fn)(const char *text, const char *name, uint64_t env,
			     const unsigned grid[3], const unsigned block[3], void **params,
			     uint64_t t0_ns);

static void run_bpf_programs(const struct fake_function *fn, void **params, const unsigned grid[3],
			     const unsigned block[3])
{
	static bpf_device_fn device;
	static atomic_int tried;
	const char *path = getenv("FAKE_CUDA_BPF_DEVICE");

	if (!strstr(fn->mod->text, "bpf_env") || !path)
		return;
	if (!atomic_exchange(&tried, 1)) {
		void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

		device = lib ? (bpf_device_fn)dlsym(lib, "fake_gpu_bpf_launch") : NULL;
		if (!device)
			fprintf(stderr, "fake libcuda: no GPU eBPF device in %s: %s\n", path, dlerror());
	}
	if (device)
		device(fn->mod->text, fn->name, *(uint64_t *)params[fn->nparams - 1], grid, block,
		       params, fake_globaltimer());
}

/* vec_add(a, b, c, n) really adds, so its output can be compared run to run. */
static void vec_add(const struct fake_function *fn, void **params)
{
	const float *a, *b;
	float *c;
	int n;

	if (strcmp(fn->name, "vec_add") || fn->nparams < 4)
		return;
	a = (const float *)(uintptr_t) * (CUdeviceptr *)params[0];
	b = (const float *)(uintptr_t) * (CUdeviceptr *)params[1];
	c = (float *)(uintptr_t) * (CUdeviceptr *)params[2];
	n = *(int *)params[3];
	for (int i = 0; a && b && c && i < n; i++)
		c[i] = a[i] + b[i];
}

static CUresult launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz, void *s, void **params, uint32_t cbid)
{
	struct fake_function *fn = f;
	unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
	uint32_t corr = cupti_call(cbid, s);

	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	if (!strcmp(fn->name, "__grt_calib")) {
		calib_join(); /* the stream runs one kernel after the other */
		pthread_mutex_lock(&calib_lock);
		calib.flag = (void *)(uintptr_t) * (CUdeviceptr *)params[0];
		calib.out = (void *)(uintptr_t) * (CUdeviceptr *)params[1];
		calib.rounds = *(unsigned *)params[2];
		calib.stream = s;
		calib.running = !pthread_create(&calib.thread, NULL, calib_kernel, NULL);
		pthread_mutex_unlock(&calib_lock);
		atomic_fetch_add(&launches_calib, 1);
	} else if (!strcmp(fn->name, GRT_SUMMARIZE_KERNEL)) {
		fake_summarize(params, gx);
	} else if (fn->mod->instrumented) {
		if (strstr(fn->name, "probe_fails"))
			return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
		fill_probes(fn, params, grid, block);
		run_bpf_programs(fn, params, grid, block);
		vec_add(fn, params);
		module_variable_kernels(fn, params);
		atomic_fetch_add(&launches_probed, 1);
	} else {
		vec_add(fn, params);
		module_variable_kernels(fn, params);
		atomic_fetch_add(&launches_plain, 1);
	}
	if (strncmp(fn->name, "__grt_", 6)) {
		atomic_store(&application_launched, 1);
		atomic_fetch_add(&application_launches, 1);
		app_stream_used(s);
		/* FAKE_LAUNCH_US: a GPU-bound loop, where the driver's launch waits for room */
		if (getenv("FAKE_LAUNCH_US"))
			usleep((useconds_t)atoi(getenv("FAKE_LAUNCH_US")));
	}
	cupti_kernel(corr, fn->name, grid, block, 0);
	return 0;
}

EXPORT CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			       unsigned by, unsigned bz, unsigned shmem, void *s, void **params,
			       void **extra)
{
	(void)shmem, (void)extra;
	return launch(f, gx, gy, gz, bx, by, bz, s, params, 307);
}

EXPORT CUresult cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				    unsigned by, unsigned bz, unsigned shmem, void *s,
				    void **params, void **extra)
{
	(void)shmem, (void)extra;
	return launch(f, gx, gy, gz, bx, by, bz, s, params, 442);
}

/* A graph of three kernels: CUPTI reports each with the launch's correlation id. */
static CUresult graph_launch(void *exec, void *s, uint32_t cbid)
{
	static const unsigned grid[3] = {2, 1, 1}, block[3] = {32, 1, 1};
	uint32_t corr = cupti_call(cbid, s);
	char name[32];

	if (!exec)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "graph_kernel_%d", i);
		cupti_kernel(corr, name, grid, block, 42);
	}
	atomic_fetch_add(&graph_launches, 1);
	return 0;
}

EXPORT CUresult cuGraphLaunch(void *exec, void *s)
{
	return graph_launch(exec, s, 514);
}

EXPORT CUresult cuGraphLaunch_ptsz(void *exec, void *s)
{
	return graph_launch(exec, s, 515);
}

struct fake_link {
	char *ptx;
	char *cubin;
};

EXPORT CUresult cuLinkCreate_v2(unsigned n, void *o, void **v, void **state)
{
	(void)n, (void)o, (void)v;
	*state = calloc(1, sizeof(struct fake_link));
	return *state ? 0 : 2;
}

EXPORT CUresult cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name,
				 unsigned n, void *o, void **v)
{
	struct fake_link *l = state;

	(void)type, (void)size, (void)name, (void)n, (void)o, (void)v;
	l->ptx = strdup(data);
	return l->ptx ? 0 : 2;
}

EXPORT CUresult cuLinkComplete(void *state, void **cubin, size_t *size)
{
	struct fake_link *l = state;

	if (asprintf(&l->cubin, "FAKECUBIN\n%s", l->ptx) < 0)
		return 2;
	*cubin = l->cubin;
	*size = strlen(l->cubin) + 1;
	return 0;
}

EXPORT CUresult cuLinkDestroy(void *state)
{
	struct fake_link *l = state;

	free(l->ptx);
	free(l->cubin);
	free(l);
	return 0;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
				    int *status);

/* The driver's answer: per-thread variants for PTDS callers, _v2 for new callers, like the real
 * one. */
static void *lookup(const char *symbol, int version, uint64_t flags)
{
	static const struct {
		const char *name;
		void *fn;
		void *ptds;
		void *v2;
	} table[] = {
	    {"cuInit", (void *)cuInit, NULL, NULL},
	    {"cuDriverGetVersion", (void *)cuDriverGetVersion, NULL, NULL},
	    {"cuDeviceGet", (void *)cuDeviceGet, NULL, NULL},
	    {"cuCtxCreate", (void *)cuCtxCreate_v2, NULL, NULL},
	    {"cuModuleLoadData", (void *)cuModuleLoadData, NULL, NULL},
	    {"cuModuleGetFunction", (void *)cuModuleGetFunction, NULL, NULL},
	    {"cuLaunchKernel", (void *)cuLaunchKernel, (void *)cuLaunchKernel_ptsz, NULL},
	    {"cuCtxSynchronize", (void *)cuCtxSynchronize, NULL, (void *)cuCtxSynchronize_v2},
	    {"cuStreamSynchronize", (void *)cuStreamSynchronize, (void *)cuStreamSynchronize_ptsz,
	     NULL},
	    {"cuGetProcAddress", (void *)cuGetProcAddress_v2, NULL, NULL},
	    {"cuMemAlloc", (void *)cuMemAlloc_v2, NULL, NULL},
	    {"cuCtxSetCurrent", (void *)cuCtxSetCurrent, NULL, NULL},
	    {"cuMemcpyHtoD", (void *)cuMemcpyHtoD_v2, NULL, NULL},
	    {"cuMemcpyDtoH", (void *)cuMemcpyDtoH_v2, NULL, NULL},
	    {"cuMemcpyHtoDAsync", (void *)cuMemcpyHtoDAsync_v2, (void *)cuMemcpyHtoDAsync_v2_ptsz,
	     NULL},
	    {"cuMemsetD8", (void *)cuMemsetD8_v2, NULL, NULL},
	    {"cuMemsetD32Async", (void *)cuMemsetD32Async, (void *)cuMemsetD32Async_ptsz, NULL},
	    {"cuGraphLaunch", (void *)cuGraphLaunch, (void *)cuGraphLaunch_ptsz, NULL},
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].name, symbol))
			continue;
		if ((flags & 2) && table[i].ptds)
			return table[i].ptds;
		if (version >= 13000 && table[i].v2)
			return table[i].v2;
		return table[i].fn;
	}
	return NULL;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
				    int *status)
{
	*pfn = lookup(symbol, version, flags);
	if (status)
		*status = *pfn ? 0 : 1;
	return *pfn ? 0 : CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("FAKE_CUDA_REPORT");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f,
		"plain=%u probed=%u calib=%u summarize=%u graphs=%u copies=%u memsets=%u "
		"events_legacy=%u events_per_thread=%u unsafe_in_capture=%u allocs=%u "
		"event_records=%u app_event_records=%u event_waits=%u event_queries=%u "
		"stream_syncs=%u slots_right=%u slots_wrong=%u func_loads=%u event_elapsed=%u "
		"calib_syncs=%u collector_copy_wait=%s event_create_fails=%u\n",
		launches_plain, launches_probed, launches_calib, launches_summarize, graph_launches,
		copies, memsets, events_legacy, events_per_thread, atomic_load(&unsafe_in_capture),
		allocs, event_records, app_event_records, event_waits, event_queries, stream_syncs,
		atomic_load(&slots_right), atomic_load(&slots_wrong), atomic_load(&func_loads),
		atomic_load(&event_elapsed), atomic_load(&calib_syncs), collector_wait,
		atomic_load(&event_create_fails));
	fclose(f);
}
