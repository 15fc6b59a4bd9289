/* libgrtrace-inject.so's life in a process: configuration, real driver, start, exit. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "inject/calib.h"
#include "inject/call_bracket.h"
#include "inject/bpf_probes.h"
#include "inject/call_record.h"
#include "inject/channel.h"
#include "inject/copy_timing.h"
#include "inject/cupti.h"
#include "inject/inject.h"
#include "inject/instrument.h"
#include "inject/own_thread.h"
#include "inject/interpose.h"
#include "inject/probe_buffer.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * One per process: the library is loaded once (LD_PRELOAD, or by the driver
 * through CUDA_INJECTION64_PATH, which dlopen()s the same file).
 */
struct inject_state inject_process_state __attribute__((aligned(64))) = {
    .init_lock = PTHREAD_MUTEX_INITIALIZER,
    .calib_lock = PTHREAD_MUTEX_INITIALIZER,
    .calib_cond = PTHREAD_COND_INITIALIZER,
    .chan = {.names_lock = PTHREAD_MUTEX_INITIALIZER},
};

__thread int inject_in_tool __attribute__((tls_model("initial-exec")));
__thread struct inject_call inject_call __attribute__((tls_model("initial-exec")));
/* bumped in a forked child so cached thread ids are looked up again */
static atomic_uint fork_generation;

uint32_t inject_tid(void)
{
	static __thread uint32_t tid __attribute__((tls_model("initial-exec")));
	static __thread uint32_t generation __attribute__((tls_model("initial-exec")));
	unsigned now = atomic_load_explicit(&fork_generation, memory_order_relaxed);

	if (!tid || generation != now) {
		tid = (uint32_t)syscall(SYS_gettid);
		generation = now;
	}
	return tid;
}

void inject_debug(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "grtrace-inject[%d]: %s\n", (int)getpid(), line);
}

static void copy_env(char *dst, size_t len, const char *name, const char *fallback)
{
	const char *v = getenv(name);

	snprintf(dst, len, "%s", v && *v ? v : fallback);
}

static long env_long(const char *name, long fallback)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return fallback;
	n = strtol(v, &end, 10);
	return *end ? fallback : n;
}

static void default_cache_dir(char *dst, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && *xdg)
		snprintf(dst, len, "%s/grtrace", xdg);
	else if (home && *home)
		snprintf(dst, len, "%s/.cache/grtrace", home);
	else
		snprintf(dst, len, "/tmp/grtrace-cache-%d", (int)getuid());
}

static void read_config(struct inject_config *c)
{
	const char *probes = getenv(GRT_INJECT_ENV_PROBES), *cupti = getenv(GRT_INJECT_ENV_CUPTI);
	const char *debug = getenv(GRT_INJECT_ENV_DEBUG), *wait = getenv(GRT_INJECT_ENV_POOL_WAIT);
	long pool_mb = env_long(GRT_INJECT_ENV_POOL_MB, 0);

	copy_env(c->shm_path, sizeof(c->shm_path), GRT_INJECT_ENV_SHM, "");
	copy_env(c->kernels, sizeof(c->kernels), GRT_INJECT_ENV_KERNELS, "");
	copy_env(c->cupti_path, sizeof(c->cupti_path), GRT_INJECT_ENV_CUPTI_PATH, "");
	copy_env(c->cache_dir, sizeof(c->cache_dir), GRT_INJECT_ENV_CACHE, "");
	if (!c->cache_dir[0])
		default_cache_dir(c->cache_dir, sizeof(c->cache_dir));
	c->probe_mode = GRT_PROBE_BLOCK;
	if (probes && (!strcmp(probes, "off") || !strcmp(probes, "0")))
		c->probe_mode = 0;
	else if (probes && !strcmp(probes, "thread"))
		c->probe_mode = GRT_PROBE_THREAD;
	c->cupti = !(cupti && !strcmp(cupti, "0"));
	if (!cupti_handover_other_injection(c->other_injection, sizeof(c->other_injection)))
		c->other_injection[0] = 0;
	c->copy_events = !(getenv(GRT_INJECT_ENV_COPY_EVENTS) &&
			   !strcmp(getenv(GRT_INJECT_ENV_COPY_EVENTS), "0"));
	c->cupti_callbacks = !(getenv(GRT_INJECT_ENV_CUPTI_CALLBACKS) &&
			       !strcmp(getenv(GRT_INJECT_ENV_CUPTI_CALLBACKS), "0"));
	c->collect_at_exit =
	    getenv(GRT_INJECT_ENV_COLLECT) && !strcmp(getenv(GRT_INJECT_ENV_COLLECT), "exit");
	c->debug = debug && !strcmp(debug, "1");
	c->pool_wait = wait && !strcmp(wait, "1");
	c->block_launches = (int)env_long(GRT_INJECT_ENV_BLOCK_LAUNCHES, 64);
	c->drain_ms = (unsigned)env_long(GRT_INJECT_ENV_DRAIN_MS, 100);
	if (c->drain_ms < 1 || c->drain_ms > 10000)
		c->drain_ms = 100;
	c->pool_bytes = pool_mb > 0 ? (uint64_t)pool_mb << 20 : 0;
	c->max_ptx_bytes = (uint64_t)env_long(GRT_INJECT_ENV_MAX_PTX, 8) << 20;
}

static void on_fork_child(void)
{
	atomic_fetch_add(&fork_generation, 1);
	own_thread_after_fork();
	inject_process_state.pid = getpid();
	call_record_after_fork();
	copy_timing_after_fork(&inject_process_state);
	/*
	 * A child forked after CUDA started cannot use the parent's driver state;
	 * stay quiet in it. One forked before keeps the library fresh.
	 */
	if (atomic_load(&inject_process_state.started))
		atomic_store(&inject_process_state.finished, 1);
}

__attribute__((constructor)) static void inject_load(void)
{
	read_config(&inject_process_state.cfg);
	inject_process_state.debug = inject_process_state.cfg.debug;
	inject_process_state.gpu_recording = inject_process_state.cfg.shm_path[0] != 0;
	inject_process_state.pid = getpid();
	call_record_load();
	pthread_atfork(NULL, NULL, on_fork_child);
}

static int resolve_driver(bool may_load)
{
	void *h;
	int ready;

	pthread_mutex_lock(&inject_process_state.init_lock);
	ready = atomic_load(&inject_process_state.driver_ready);
	if (ready) {
		pthread_mutex_unlock(&inject_process_state.init_lock);
		return ready > 0 ? 0 : -ENOENT;
	}
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h && may_load)
		h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		if (may_load)
			atomic_store(&inject_process_state.driver_ready, -1);
		pthread_mutex_unlock(&inject_process_state.init_lock);
		return -ENOENT;
	}
	inject_process_state.drv.handle = h;
#define RESOLVE(name, args) inject_process_state.drv.name = inject_real_dlsym(h, #name);
	INJECT_DRIVER_FNS(RESOLVE)
#undef RESOLVE
	inject_process_state.drv.cuThreadExchangeStreamCaptureMode =
	    inject_real_dlsym(h, "cuThreadExchangeStreamCaptureMode");
	inject_process_state.drv.cuModuleGetGlobal_v2 = inject_real_dlsym(h, "cuModuleGetGlobal_v2");
	inject_process_state.drv.cuLibraryGetGlobal = inject_real_dlsym(h, "cuLibraryGetGlobal");
	inject_process_state.drv.cuStreamDestroy_v2 = inject_real_dlsym(h, "cuStreamDestroy_v2");
	inject_process_state.drv.cuFuncLoad = inject_real_dlsym(h, "cuFuncLoad");
	inject_process_state.drv.cuDeviceTotalMem_v2 = inject_real_dlsym(h, "cuDeviceTotalMem_v2");
	inject_process_state.drv.cuEventElapsedTime = inject_real_dlsym(h, "cuEventElapsedTime");
	inject_process_state.drv.cuEventDestroy_v2 = inject_real_dlsym(h, "cuEventDestroy_v2");
	inject_process_state.drv.cuPointerGetAttribute = inject_real_dlsym(h, "cuPointerGetAttribute");
	interpose_resolve(h);
	atomic_store(&inject_process_state.driver_ready, 1);
	pthread_mutex_unlock(&inject_process_state.init_lock);
	return 0;
}

const char *inject_driver_missing(void)
{
#define CHECK_PRESENT(name, args)                                                                  \
	if (!inject_process_state.drv.name)                                                                       \
		return #name;
	INJECT_DRIVER_FNS(CHECK_PRESENT)
#undef CHECK_PRESENT
	return NULL;
}

int inject_driver_resolve(void)
{
	return resolve_driver(true);
}

int inject_driver_if_loaded(void)
{
	int ready = atomic_load_explicit(&inject_process_state.driver_ready, memory_order_acquire);

	if (ready)
		return ready > 0 ? 0 : -ENOENT;
	return resolve_driver(false);
}

static void read_comm(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/comm", "re");

	snprintf(out, len, "?");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

static void inject_finish(void);

void inject_start(void)
{
	char why[256] = "", comm[32];
	int err;

	if (!inject_gpu_recording() || atomic_load(&inject_process_state.finished) || atomic_exchange(&inject_process_state.started, 1))
		return;
	inject_enter_tool();
	err = channel_open(&inject_process_state.chan, inject_process_state.cfg.shm_path);
	if (err && inject_process_state.cfg.debug)
		inject_debug("cannot open the recorder's ring %s: %s", inject_process_state.cfg.shm_path,
			     strerror(-err));
	read_comm(comm, sizeof(comm));
	channel_status(&inject_process_state.chan, INJ_PART_LIBRARY, 0,
		       "libgrtrace-inject attached to %s (pid %d)", comm, (int)inject_process_state.pid);
	/* where the block probes time the kernels, CUPTI waits for one they do not (cupti.h) */
	if (inject_process_state.cfg.cupti && !cupti_waits_for_kernels(&inject_process_state))
		err = cupti_start_unless_taken(&inject_process_state, true, why, sizeof(why));
	if (!inject_process_state.cfg.cupti)
		channel_status(&inject_process_state.chan, INJ_PART_CUPTI, -ECANCELED,
			       "CUPTI kernel timing off (GRTRACE_GPU_CUPTI=0)");
	else if (cupti_waits_for_kernels(&inject_process_state))
		channel_status(&inject_process_state.chan, INJ_PART_CUPTI, 0,
			       "CUPTI not loaded: the block probes time the kernels; CUPTI waits for "
			       "a kernel they do not cover");
	else if (err && err != -EALREADY) /* -EALREADY: another client's, its line went out */
		channel_status(&inject_process_state.chan, INJ_PART_CUPTI, err,
			       "CUPTI kernel timing unavailable: %s", why);
	else if (!err)
		channel_status(&inject_process_state.chan, INJ_PART_CUPTI, 0, "CUPTI kernel timing on");
	err = bpf_probes_load(&inject_process_state, why, sizeof(why));
	if (err)
		channel_status(&inject_process_state.chan, INJ_PART_BPF, err,
			       "GPU eBPF programs not run: %s", why);
	if (!inject_process_state.cfg.probe_mode)
		channel_status(&inject_process_state.chan, INJ_PART_PROBES, -ECANCELED,
			       "block probes off (GRTRACE_GPU_PROBES=off)");
	if ((inject_process_state.cfg.probe_mode || inject_process_state.bpf) &&
	    (err = instr_start(&inject_process_state, why, sizeof(why)))) {
		channel_status(&inject_process_state.chan,
			       inject_process_state.cfg.probe_mode ? INJ_PART_PROBES : INJ_PART_BPF,
			       err, "%s unavailable: %s",
			       inject_process_state.cfg.probe_mode ? "block probes" : "GPU eBPF programs",
			       why);
		if (inject_process_state.cfg.probe_mode)
			cupti_need_kernels(&inject_process_state, NULL, "block probes unavailable");
	} else if (inject_process_state.cfg.probe_mode && !inject_process_state.cupti) {
		/* copies and memsets: CUDA events until CUPTI is loaded, if ever */
		copy_timing_start(&inject_process_state);
	}
	atexit(inject_finish);
	inject_leave_tool();
}

/*
 * The opening calibration, on the library's own thread with the application's
 * first context made current there: its driver calls (a module, mapped
 * memory, the handshake kernel) are grtrace's, and the application does not
 * wait for it. The collection waits for it (calib_wait_opening()).
 */
static void *calibrate_main(void *unused)
{
	char why[256] = "";
	CUcontext popped;
	int err = -EIO;

	if (inject_process_state.drv.cuCtxPushCurrent_v2(inject_process_state.calib_ctx) == CUDA_SUCCESS) {
		err = calib_globaltimer(&inject_process_state, false, why, sizeof(why));
		cupti_try_hw_trace(&inject_process_state);
		inject_process_state.drv.cuCtxPopCurrent_v2(&popped);
	} else {
		snprintf(why, sizeof(why), "its context could not be made current");
	}
	if (err)
		channel_status(&inject_process_state.chan, INJ_PART_CALIB, err,
			       "GPU clock calibration failed: %s; block-probe times are not mapped",
			       why);
	calib_opening_done(&inject_process_state);
	return unused;
}

void inject_start_with_context(void)
{
	CUcontext ctx = NULL;

	if (atomic_load_explicit(&inject_process_state.calib_started, memory_order_acquire) || !inject_gpu_recording())
		return;
	inject_start();
	if (inject_driver_ready() || !inject_process_state.drv.cuCtxGetCurrent)
		return;
	pthread_mutex_lock(&inject_process_state.init_lock);
	if (atomic_load(&inject_process_state.calib_started) || atomic_load(&inject_process_state.finished) ||
	    inject_driver_missing() || inject_process_state.drv.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
		pthread_mutex_unlock(&inject_process_state.init_lock);
		return; /* no context yet: the next launch or load tries again */
	}
	inject_process_state.calib_ctx = ctx;
	if (own_thread_start(&inject_process_state.calib_thread, "calib", calibrate_main, NULL)) {
		channel_status(&inject_process_state.chan, INJ_PART_CALIB, -EAGAIN,
			       "GPU clock calibration failed: no thread for it; block-probe times "
			       "are not mapped");
		calib_opening_done(&inject_process_state);
	} else {
		inject_process_state.calib_thread_started = true;
	}
	atomic_store_explicit(&inject_process_state.calib_started, 1, memory_order_release);
	pthread_mutex_unlock(&inject_process_state.init_lock);
}

static double per(unsigned long long ns, unsigned long long n)
{
	return n ? (double)ns / (double)n : 0.0;
}

/* One line on the library's own cost, so overheads can be told apart in a trace. */
static void report_stats(struct inject_state *st)
{
	struct inject_stats *s = &st->stats;
	unsigned long long launches = atomic_load(&s->launches),
			   probed = atomic_load(&s->probe_launches),
			   timed = atomic_load(&s->probe_timed);

	channel_status(
	    &st->chan, INJ_PART_LIBRARY, 0,
	    "cost: %llu launches; driver launch %.0f ns uninstrumented, %.0f ns instrumented; "
	    "probe bookkeeping %.0f ns/launch (%.0f after the driver's launch, lock wait %.0f, "
	    "%llu first-use launches apart; "
	    "%llu driver calls handed to the worker, %.1f us each); "
	    "drain thread %llu batches (%llu copies/memsets), poll %.1f ms, collect %.1f ms, "
	    "pool top-up %.1f ms",
	    launches,
	    per(atomic_load(&s->launch_real_ns), launches - probed),
	    per(atomic_load(&s->probe_real_ns), timed), per(atomic_load(&s->probe_host_ns), timed),
	    per(atomic_load(&s->probe_after_ns), timed),
	    per(atomic_load(&s->probe_lock_ns), probed),
	    (unsigned long long)atomic_load(&s->probe_slow),
	    (unsigned long long)atomic_load(&s->probe_worker_calls),
	    per(atomic_load(&s->probe_worker_ns), atomic_load(&s->probe_worker_calls)) / 1e3,
	    (unsigned long long)atomic_load(&s->drain_batches),
	    (unsigned long long)atomic_load(&s->drain_driver_calls),
	    atomic_load(&s->drain_poll_ns) / 1e6, atomic_load(&s->drain_collect_ns) / 1e6,
	    atomic_load(&s->drain_topup_ns) / 1e6);
}

/*
 * Final collection: probe buffers, the closing calibration, CUPTI's last
 * buffers, the cost line. On a thread of the library's: the driver calls are
 * grtrace's, whichever application thread is exiting.
 */
static void *finish_main(void *unused)
{
	char why[256] = "";
	int err;

	if (inject_process_state.calib_thread_started)
		pthread_join(inject_process_state.calib_thread, NULL);
	instr_stop(&inject_process_state);
	copy_timing_collect(&inject_process_state, true);
	copy_timing_stop(&inject_process_state);
	if (atomic_load(&inject_process_state.calib_started) && inject_process_state.globaltimer.valid) {
		err = calib_globaltimer(&inject_process_state, true, why, sizeof(why));
		if (err)
			channel_status(&inject_process_state.chan, INJ_PART_CALIB, err,
				       "closing GPU clock calibration failed: %s", why);
	}
	cupti_stop(&inject_process_state);
	report_stats(&inject_process_state);
	return unused;
}

/* Once, at exit (or unload). */
static void inject_finish(void)
{
	pthread_t finisher;

	if (!atomic_load(&inject_process_state.started) || atomic_exchange(&inject_process_state.finished, 1))
		return;
	inject_enter_tool();
	if (own_thread_start(&finisher, "exit", finish_main, NULL))
		finish_main(NULL); /* no thread to be had: done here rather than lost */
	else
		pthread_join(finisher, NULL);
	inject_leave_tool();
}

__attribute__((destructor)) static void inject_unload(void)
{
	inject_finish();
}

/* The driver's injection hook (CUDA_INJECTION64_PATH): called inside cuInit. */
EXPORT int InitializeInjection(void)
{
	inject_start();
	return 1;
}
