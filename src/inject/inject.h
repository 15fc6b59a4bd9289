/* Internals of libgrtrace-inject.so shared by its parts: process context, real driver, helpers. */
#ifndef GRT_INJECT_H
#define GRT_INJECT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "inject/clock_math.h"
#include "inject/channel.h"
#include "inject/cuda_decls.h"
#include "inject/cupti_handover.h"
#include "inject/now.h"

/*
 * The real driver entry points. The interposed ones are resolved from
 * libcuda.so.1 itself (never through our own exports); X(name, ret, args).
 */
#define INJECT_DRIVER_FNS(X)                                                                       \
	X(cuDriverGetVersion, (int *version))                                                      \
	X(cuCtxGetCurrent, (CUcontext * ctx))                                                      \
	X(cuCtxPushCurrent_v2, (CUcontext ctx))                                                    \
	X(cuCtxPopCurrent_v2, (CUcontext * ctx))                                                   \
	X(cuCtxGetDevice, (CUdevice * dev))                                                        \
	X(cuCtxSynchronize, (void))                                                                \
	X(cuDeviceGet, (CUdevice * dev, int ordinal))                                              \
	X(cuDeviceGetAttribute, (int *value, int attrib, CUdevice dev))                            \
	X(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytes))                                       \
	X(cuMemFree_v2, (CUdeviceptr dptr))                                                        \
	X(cuMemHostAlloc, (void **p, size_t bytes, unsigned int flags))                            \
	X(cuMemFreeHost, (void *p))                                                                \
	X(cuMemHostGetDevicePointer_v2, (CUdeviceptr * dptr, void *p, unsigned int flags))         \
	X(cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t bytes, CUstream s))            \
	X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t bytes, CUstream s))      \
	X(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *copy, CUstream s))                             \
	X(cuMemsetD8Async, (CUdeviceptr dst, unsigned char v, size_t n, CUstream s))               \
	X(cuMemsetD2D32Async,                                                                      \
	  (CUdeviceptr dst, size_t pitch, unsigned int v, size_t w, size_t h, CUstream s))         \
	X(cuStreamCreate, (CUstream * s, unsigned int flags))                                      \
	X(cuStreamSynchronize, (CUstream s))                                                       \
	X(cuStreamQuery, (CUstream s))                                                             \
	X(cuEventCreate, (CUevent * e, unsigned int flags))                                        \
	X(cuEventRecord, (CUevent e, CUstream s))                                                  \
	X(cuEventQuery, (CUevent e))                                                               \
	X(cuEventSynchronize, (CUevent e))                                                         \
	X(cuModuleLoadDataEx,                                                                      \
	  (CUmodule * m, const void *image, unsigned int n, CUjit_option *o, void **v))            \
	X(cuModuleGetFunction, (CUfunction * f, CUmodule m, const char *name))                     \
	X(cuLaunchKernel, (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,        \
			   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,  \
			   CUstream s, void **params, void **extra))                               \
	X(cuLinkCreate_v2, (unsigned int n, CUjit_option *o, void **v, CUlinkState *st))           \
	X(cuLinkAddData_v2, (CUlinkState st, CUjitInputType type, void *data, size_t size,         \
			     const char *name, unsigned int n, CUjit_option *o, void **v))         \
	X(cuLinkComplete, (CUlinkState st, void **cubin, size_t *size))                            \
	X(cuLinkDestroy, (CUlinkState st))

struct inject_driver {
	void *handle; /* libcuda.so.1 */
#define INJECT_DRIVER_PTR(name, args) CUresult(*name) args;
	INJECT_DRIVER_FNS(INJECT_DRIVER_PTR)
#undef INJECT_DRIVER_PTR
	/* optional (drivers before CUDA 10.1 lack it): the calling thread's stream-capture mode */
	CUresult (*cuThreadExchangeStreamCaptureMode)(int *mode);
	/* optional: the application's module variables, for the instrumented copy's slots */
	CUresult (*cuModuleGetGlobal_v2)(CUdeviceptr *dptr, size_t *bytes, CUmodule m,
					 const char *name);
	CUresult (*cuLibraryGetGlobal)(CUdeviceptr *dptr, size_t *bytes, CUlibrary l,
				       const char *name);
	CUresult (*cuStreamDestroy_v2)(CUstream s);
	/* optional (CUDA 12.4): loads a function that lazy loading left for its first launch */
	CUresult (*cuFuncLoad)(CUfunction f);
	/* optional: the device's memory, which the probe pool's default budget follows */
	CUresult (*cuDeviceTotalMem_v2)(size_t *bytes, CUdevice dev);
	/* optional: copies timed with events while CUPTI is not loaded (copy_timing.c) */
	CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
	CUresult (*cuEventDestroy_v2)(CUevent e);
	CUresult (*cuPointerGetAttribute)(void *data, int attribute, CUdeviceptr ptr);
};

struct inject_config {
	char shm_path[256];
	char kernels[512]; /* regex, "" = all */
	int probe_mode;	   /* 0 off, GRT_PROBE_BLOCK, GRT_PROBE_THREAD */
	bool cupti;
	bool cupti_callbacks; /* correlate CUPTI records with their call (api_enter_ns) */
	bool copy_events;     /* time copies with events while CUPTI is not loaded */
	bool collect_at_exit; /* benchmark knob: collect probe buffers only at exit */
	bool debug;
	bool pool_wait;
	unsigned drain_ms; /* longest gap between collections when the application does not sync */
	char cupti_path[256];
	char other_injection[256]; /* another tool's CUDA_INJECTION64_PATH: CUPTI is its */
	char cache_dir[512];
	int block_launches; /* launches per kernel with per-block records; -1 all */
	uint64_t pool_bytes; /* 0: the default, from the first context's device (block_probes.c) */
	uint64_t max_ptx_bytes; /* larger modules are not rewritten (JIT time) */
};


/* One host/device clock mapping (clock_math.h) and whether it was measured. */
struct inject_clock {
	bool valid;
	struct clock_fit fit;
};

/* Where the library's time goes, reported at exit (all ns sums, relaxed atomics). */
struct inject_stats {
	atomic_ullong launches;	      /* launch wrapper calls */
	atomic_ullong launch_real_ns; /* in the driver's launch, uninstrumented launches */
	atomic_ullong probe_launches; /* instrumented launches */
	atomic_ullong probe_timed;    /* of which timed (one in TIMED_EVERY): the means' count */
	atomic_ullong probe_host_ns; /* probes_launch minus the driver's launch */
	atomic_ullong probe_after_ns; /* of which after the driver's launch returned */
	atomic_ullong probe_real_ns; /* the driver's launch of instrumented kernels */
	atomic_ullong probe_lock_ns; /* waiting for the probes lock on the launch path */
	/* driver calls a launch handed to the worker thread and waited for (events, buffers) */
	atomic_ullong probe_worker_calls, probe_worker_ns;
	atomic_ullong
	    probe_slow; /* launches that JIT-compiled or calibrated first (not in the means) */
	atomic_ullong drain_poll_ns, drain_collect_ns, drain_topup_ns, drain_batches;
	atomic_ullong drain_driver_calls; /* copies and memsets the collection issued */
};

struct gpubpf_session;
struct copy_timing;

struct inject_state {
	/*
	 * What every wrapped call reads, first and together: after a launch, whose
	 * driver work evicts most of what the wrapper touched, each further line
	 * is another miss.
	 */
	atomic_int driver_ready; /* 0 not tried, 1 resolved, -1 no libcuda */
	bool debug;		 /* cfg.debug */
	bool gpu_recording;	 /* cfg.shm_path names the gpu source's ring */
	struct inject_config cfg;
	struct inject_driver drv;
	struct inject_channel chan;
	atomic_int started;
	atomic_int calib_started; /* the opening calibration was started (or given up) */
	atomic_int finished;
	pid_t pid;
	struct inject_clock globaltimer;     /* %globaltimer, opening calibration */
	struct inject_clock globaltimer_end; /* closing calibration */
	struct inject_clock cupti_clock;
	CUcontext calib_ctx;
	pthread_t calib_thread; /* the opening calibration's (grtrace-calib) */
	bool calib_thread_started;
	pthread_mutex_t calib_lock; /* with calib_cond: the opening calibration finished */
	pthread_cond_t calib_cond;
	bool calib_opened;
	struct cupti_state *cupti;
	struct cupti_handover handover;
	struct copy_timing *copies; /* copies timed with events (copy_timing.c), NULL when off */
	struct calib_state *calib;
	struct instr_state *instr;
	struct gpubpf_session *bpf; /* the recorder's GPU eBPF programs, NULL when none */
	struct inject_stats stats;
	pthread_mutex_t init_lock;
};

static inline void stat_add(atomic_ullong *counter, unsigned long long v)
{
	atomic_fetch_add_explicit(counter, v, memory_order_relaxed);
}

/* The process's one context (the library is loaded once per process). */
extern struct inject_state inject_process_state;

static inline struct inject_state *inject(void)
{
	return &inject_process_state;
}

/*
 * Whether the gpu source records in this process (`grtrace record` named its
 * ring): without it, a call that is only recorded needs no bracket, no
 * redirection and no launch statistics, and the library starts nothing.
 */
static inline bool inject_gpu_recording(void)
{
	return inject_process_state.gpu_recording;
}

/* Per-thread: inside the library's own driver/CUPTI calls, interposition passes straight through.
 */
extern __thread int inject_in_tool __attribute__((tls_model("initial-exec")));

static inline void inject_enter_tool(void)
{
	inject_in_tool++;
}
static inline void inject_leave_tool(void)
{
	inject_in_tool--;
}

uint32_t inject_tid(void);
void inject_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The slow path of inject_driver_ready(): resolves the real driver, once. */
int inject_driver_resolve(void);

/* Resolves the real driver once (loading libcuda.so.1); 0 or -ENOENT when there is none. */
static inline int inject_driver_ready(void)
{
	int ready = atomic_load_explicit(&inject()->driver_ready, memory_order_acquire);

	if (ready)
		return ready > 0 ? 0 : -ENOENT;
	return inject_driver_resolve();
}
/* The first driver entry point the library needs that libcuda lacks, or NULL. */
const char *inject_driver_missing(void);
/* Same, but never loads libcuda: -ENOENT while the process has not loaded it. */
int inject_driver_if_loaded(void);
/* Called at the first driver call: CUPTI, then (with a context) calibration. Idempotent. */
void inject_start(void);
/* Called at the first launch or module load that has a current context. */
void inject_start_with_context(void);

#endif
