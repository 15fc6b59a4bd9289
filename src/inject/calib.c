/* GPU %globaltimer against host CLOCK_MONOTONIC: a handshake through mapped pinned memory. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/calib.h"
#include "inject/channel.h"
#include "inject/inject.h"

#define CALIB_ROUNDS 32
#define REFRESH_ROUNDS 8
#define START_TIMEOUT_NS 2000000000ULL /* the kernel may queue behind the application's work */
#define REFRESH_START_TIMEOUT_NS 20000000ULL /* the collection thread does not wait long */
#define ROUND_TIMEOUT_NS 50000000ULL
#define CALIB_ABORT 0xffffffffu
#define FIT_HISTORY 256

/*
 * One thread spins on a flag in host memory the device can see. For round k
 * the host reads CLOCK_MONOTONIC, writes k, and waits for the kernel's
 * %globaltimer answer in out[k], reading CLOCK_MONOTONIC again: the GPU read
 * its clock between the two host reads, so the midpoint is within half the
 * round trip. The tightest of CALIB_ROUNDS rounds is kept. out[0] says the
 * kernel is running (it may wait behind the application's kernels).
 */
static const char calib_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry __grt_calib(.param .u64 flag_ptr, .param .u64 out_ptr, .param .u32 rounds)\n"
    "{\n"
    "	.reg .pred %p<3>;\n"
    "	.reg .b32 %r<4>;\n"
    "	.reg .b64 %rd<8>;\n"
    "	ld.param.u64 %rd1, [flag_ptr];\n"
    "	ld.param.u64 %rd2, [out_ptr];\n"
    "	ld.param.u32 %r1, [rounds];\n"
    "	cvta.to.global.u64 %rd1, %rd1;\n"
    "	cvta.to.global.u64 %rd2, %rd2;\n"
    "	mov.u64 %rd3, %globaltimer;\n"
    "	st.volatile.global.u64 [%rd2], %rd3;\n"
    "	membar.sys;\n"
    "	mov.u32 %r2, 1;\n"
    "ROUND:\n"
    "	setp.gt.u32 %p1, %r2, %r1;\n"
    "	@%p1 bra DONE;\n"
    "WAIT:\n"
    "	ld.volatile.global.u32 %r3, [%rd1];\n"
    "	setp.lt.u32 %p2, %r3, %r2;\n"
    "	@%p2 bra WAIT;\n"
    "	mov.u64 %rd4, %globaltimer;\n"
    "	mul.wide.u32 %rd5, %r2, 8;\n"
    "	add.s64 %rd6, %rd2, %rd5;\n"
    "	st.volatile.global.u64 [%rd6], %rd4;\n"
    "	membar.sys;\n"
    "	add.u32 %r2, %r2, 1;\n"
    "	bra ROUND;\n"
    "DONE:\n"
    "	ret;\n"
    "}\n";

struct calib_state {
	pthread_mutex_t lock; /* one handshake at a time; the fit history */
	CUmodule module;
	CUfunction fn;
	CUstream stream;
	void *host; /* mapped pinned page: flag at 0, answers from 64 */
	CUdeviceptr dev;
	CUdevice device;
	bool kernel_pending;		    /* a handshake gave up: its kernel may still run */
	struct clock_fit fits[FIT_HISTORY]; /* ring, oldest first from fit_first */
	unsigned fit_first, nfits;
	uint64_t last_host_ns;
};

static int fail(char *why, size_t why_len, const char *what, CUresult r)
{
	snprintf(why, why_len, "%s failed (CUDA error %d)", what, r);
	return -EIO;
}

static int calib_setup(struct inject_state *st, struct calib_state *c, char *why, size_t why_len)
{
	struct inject_driver *d = &st->drv;
	CUresult r;

	if ((r = d->cuCtxGetDevice(&c->device)))
		return fail(why, why_len, "cuCtxGetDevice", r);
	if ((r = d->cuMemHostAlloc(&c->host, 4096,
				   CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE)))
		return fail(why, why_len, "cuMemHostAlloc (mapped pinned memory)", r);
	if ((r = d->cuMemHostGetDevicePointer_v2(&c->dev, c->host, 0)))
		return fail(why, why_len, "cuMemHostGetDevicePointer", r);
	if ((r = d->cuModuleLoadDataEx(&c->module, calib_ptx, 0, NULL, NULL)))
		return fail(why, why_len, "loading the calibration kernel", r);
	if ((r = d->cuModuleGetFunction(&c->fn, c->module, "__grt_calib")))
		return fail(why, why_len, "cuModuleGetFunction(__grt_calib)", r);
	if ((r = d->cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING)))
		return fail(why, why_len, "cuStreamCreate", r);
	return 0;
}

static bool wait_nonzero(volatile uint64_t *p, uint64_t timeout_ns)
{
	uint64_t start = inject_now_ns();
	unsigned spins = 0;

	while (!*p) {
		if (++spins % 1024 == 0) {
			if (inject_now_ns() - start > timeout_ns)
				return false;
			sched_yield();
		}
	}
	return true;
}

/*
 * Runs the handshake; fills samples, returns how many rounds answered, or a
 * negative errno. A kernel that did not start within start_timeout_ns is
 * told to skip its rounds and left to finish on its own (kernel_pending).
 */
static int handshake(struct inject_state *st, struct calib_state *c, struct clock_sample *samples,
		     unsigned rounds, uint64_t start_timeout_ns, char *why, size_t why_len)
{
	volatile uint32_t *flag = c->host;
	volatile uint64_t *out = (volatile uint64_t *)((char *)c->host + 64);
	CUdeviceptr dflag = c->dev, dout = c->dev + 64;
	void *params[] = {&dflag, &dout, &rounds};
	int answered = 0;
	CUresult r;

	if (c->kernel_pending) {
		if (st->drv.cuStreamQuery(c->stream) != CUDA_SUCCESS) {
			snprintf(why, why_len, "the previous calibration kernel has not run yet");
			return -EBUSY;
		}
		c->kernel_pending = false;
	}
	memset(c->host, 0, 4096);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r = st->drv.cuLaunchKernel(c->fn, 1, 1, 1, 1, 1, 1, 0, c->stream, params, NULL);
	if (r)
		return fail(why, why_len, "launching the calibration kernel", r);
	if (!wait_nonzero(&out[0], start_timeout_ns)) {
		snprintf(why, why_len,
			 "the calibration kernel did not start within %llu ms (GPU busy)",
			 (unsigned long long)(start_timeout_ns / 1000000));
		__atomic_store_n(flag, CALIB_ABORT, __ATOMIC_SEQ_CST);
		c->kernel_pending = true;
		return -ETIMEDOUT;
	}
	for (unsigned k = 1; k <= rounds; k++) {
		struct clock_sample *s = &samples[k - 1];

		s->host_before = inject_now_ns();
		__atomic_store_n(flag, k, __ATOMIC_SEQ_CST);
		if (!wait_nonzero(&out[k], ROUND_TIMEOUT_NS)) {
			__atomic_store_n(flag, CALIB_ABORT, __ATOMIC_SEQ_CST);
			break;
		}
		s->host_after = inject_now_ns();
		s->clock = out[k];
		answered++;
	}
	st->drv.cuStreamSynchronize(c->stream);
	return answered;
}

static void send_calibration(struct inject_state *st, const struct calib_state *c,
			     const struct clock_fit *fit)
{
	struct inj_calib msg = {.rec = {.clock_id = GRT_CLOCK_GPU_GLOBALTIMER}};

	msg.rec.device = (uint32_t)c->device;
	msg.rec.gpu_ns = fit->clock_ns;
	msg.rec.host_ns = fit->host_ns;
	msg.rec.error_ns = fit->error_ns;
	channel_fill_head(&msg.head, fit->host_ns);
	channel_send(&st->chan, INJ_MSG_CALIB, &msg, sizeof(msg));
}

/* Under c->lock. */
static void remember_fit(struct calib_state *c, const struct clock_fit *fit)
{
	if (c->nfits == FIT_HISTORY) {
		c->fit_first = (c->fit_first + 1) % FIT_HISTORY;
		c->nfits--;
	}
	c->fits[(c->fit_first + c->nfits) % FIT_HISTORY] = *fit;
	c->nfits++;
	c->last_host_ns = fit->host_ns;
}

/* One measurement in the calibrated context; under c->lock. */
static int measure(struct inject_state *st, struct calib_state *c, unsigned rounds,
		   uint64_t start_timeout_ns, bool push_ctx, struct clock_fit *fit, char *why,
		   size_t why_len)
{
	struct clock_sample samples[CALIB_ROUNDS] = {0};
	CUcontext popped;
	int n;

	if (push_ctx && st->drv.cuCtxPushCurrent_v2(st->calib_ctx))
		return fail(why, why_len, "making the calibrated context current (destroyed?)", 0);
	n = handshake(st, c, samples, rounds, start_timeout_ns, why, why_len);
	if (push_ctx)
		st->drv.cuCtxPopCurrent_v2(&popped);
	if (n < 0)
		return n;
	if (clock_best_sample(samples, rounds, fit)) {
		snprintf(why, why_len, "no handshake round answered");
		return -ETIMEDOUT;
	}
	remember_fit(c, fit);
	send_calibration(st, c, fit);
	return 0;
}

int calib_globaltimer(struct inject_state *st, bool at_end, char *why, size_t why_len)
{
	struct calib_state *c = st->calib;
	struct clock_fit fit;
	int err;

	if (!c) {
		if (at_end) {
			snprintf(why, why_len, "no opening calibration");
			return -ENODATA;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			snprintf(why, why_len, "out of memory");
			return -ENOMEM;
		}
		pthread_mutex_init(&c->lock, NULL);
		if ((err = calib_setup(st, c, why, why_len)))
			return err; /* c is dropped: without it there are no fits to use */
		st->calib = c;
	}
	pthread_mutex_lock(&c->lock);
	/* at exit the thread may have no context current: use the one calibrated first */
	err = measure(st, c, CALIB_ROUNDS, START_TIMEOUT_NS, at_end, &fit, why, why_len);
	if (!err) {
		struct inject_clock *clk = at_end ? &st->globaltimer_end : &st->globaltimer;

		clk->fit = fit;
		clk->valid = true;
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

int calib_refresh(struct inject_state *st, uint64_t max_age_ns)
{
	struct calib_state *c = st->calib;
	struct clock_fit fit;
	char why[128];
	int err;

	if (!c || !st->globaltimer.valid)
		return -ENODATA;
	pthread_mutex_lock(&c->lock);
	err = inject_now_ns() - c->last_host_ns < max_age_ns
		  ? 0
		  : measure(st, c, REFRESH_ROUNDS, REFRESH_START_TIMEOUT_NS, true, &fit, why,
			    sizeof(why));
	pthread_mutex_unlock(&c->lock);
	return err;
}

int calib_bracket(struct inject_state *st, uint64_t clock_ns, struct clock_fit *a,
		  struct clock_fit *b)
{
	struct calib_state *c = st->calib;
	unsigned lo = 0, hi;

	if (!c)
		return -ENODATA;
	pthread_mutex_lock(&c->lock);
	if (!c->nfits) {
		pthread_mutex_unlock(&c->lock);
		return -ENODATA;
	}
	/* the last fit taken at or before clock_ns, and the one after it */
	hi = c->nfits;
	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;

		if (c->fits[(c->fit_first + mid) % FIT_HISTORY].clock_ns <= clock_ns)
			lo = mid;
		else
			hi = mid;
	}
	*a = c->fits[(c->fit_first + lo) % FIT_HISTORY];
	*b = lo + 1 < c->nfits ? c->fits[(c->fit_first + lo + 1) % FIT_HISTORY] : *a;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void calib_opening_done(struct inject_state *st)
{
	pthread_mutex_lock(&st->calib_lock);
	st->calib_opened = true;
	pthread_cond_broadcast(&st->calib_cond);
	pthread_mutex_unlock(&st->calib_lock);
}

bool calib_opening_finished(struct inject_state *st)
{
	bool done;

	if (!atomic_load_explicit(&st->calib_started, memory_order_acquire))
		return true;
	pthread_mutex_lock(&st->calib_lock);
	done = st->calib_opened;
	pthread_mutex_unlock(&st->calib_lock);
	return done;
}

void calib_wait_opening(struct inject_state *st)
{
	if (!atomic_load_explicit(&st->calib_started, memory_order_acquire))
		return;
	pthread_mutex_lock(&st->calib_lock);
	while (!st->calib_opened)
		pthread_cond_wait(&st->calib_cond, &st->calib_lock);
	pthread_mutex_unlock(&st->calib_lock);
}
