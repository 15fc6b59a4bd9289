/* GPU %globaltimer against host CLOCK_MONOTONIC: a handshake through mapped pinned memory. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/inject.h"

#define CALIB_ROUNDS 32
#define START_TIMEOUT_NS 2000000000ULL	/* the kernel may queue behind the application's work */
#define ROUND_TIMEOUT_NS 50000000ULL
#define CALIB_ABORT 0xffffffffu

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
	CUmodule module;
	CUfunction fn;
	CUstream stream;
	void *host;			/* mapped pinned page: flag at 0, answers from 64 */
	CUdeviceptr dev;
	CUdevice device;
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
	if ((r = d->cuMemHostAlloc(&c->host, 4096, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE)))
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

/* Runs the handshake; fills samples, returns how many rounds answered, or a negative errno. */
static int handshake(struct inject_state *st, struct calib_state *c, struct clock_sample *samples,
		     char *why, size_t why_len)
{
	volatile uint32_t *flag = c->host;
	volatile uint64_t *out = (volatile uint64_t *)((char *)c->host + 64);
	CUdeviceptr dflag = c->dev, dout = c->dev + 64;
	unsigned rounds = CALIB_ROUNDS;
	void *params[] = { &dflag, &dout, &rounds };
	int answered = 0;
	CUresult r;

	memset(c->host, 0, 4096);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r = st->drv.cuLaunchKernel(c->fn, 1, 1, 1, 1, 1, 1, 0, c->stream, params, NULL);
	if (r)
		return fail(why, why_len, "launching the calibration kernel", r);
	if (!wait_nonzero(&out[0], START_TIMEOUT_NS)) {
		snprintf(why, why_len, "the calibration kernel did not start within 2 s (GPU busy)");
		__atomic_store_n(flag, CALIB_ABORT, __ATOMIC_SEQ_CST);
		st->drv.cuStreamSynchronize(c->stream);
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
	struct inj_calib msg = { .rec = { .clock_id = GRT_CLOCK_GPU_GLOBALTIMER } };

	msg.rec.device = (uint32_t)c->device;
	msg.rec.gpu_ns = fit->clock_ns;
	msg.rec.host_ns = fit->host_ns;
	msg.rec.error_ns = fit->error_ns;
	channel_fill_head(&msg.head, fit->host_ns);
	channel_send(&st->chan, INJ_MSG_CALIB, &msg, sizeof(msg));
}

int calib_globaltimer(struct inject_state *st, bool at_end, char *why, size_t why_len)
{
	struct clock_sample samples[CALIB_ROUNDS] = { 0 };
	struct clock_fit fit;
	CUcontext popped;
	bool pushed = false;
	int n, err = 0;

	if (!st->calib) {
		if (at_end) {
			snprintf(why, why_len, "no opening calibration");
			return -ENODATA;
		}
		st->calib = calloc(1, sizeof(*st->calib));
		if (!st->calib) {
			snprintf(why, why_len, "out of memory");
			return -ENOMEM;
		}
		if ((err = calib_setup(st, st->calib, why, why_len)))
			return err;
	}
	if (at_end) {
		/* at exit the thread may have no context current: use the one calibrated first */
		if (st->drv.cuCtxPushCurrent_v2(st->calib_ctx))
			return fail(why, why_len, "making the calibrated context current (destroyed?)", 0);
		pushed = true;
	}
	n = handshake(st, st->calib, samples, why, why_len);
	if (n < 0)
		err = n;
	else if (clock_best_sample(samples, CALIB_ROUNDS, &fit)) {
		snprintf(why, why_len, "no handshake round answered");
		err = -ETIMEDOUT;
	} else {
		struct inject_clock *clk = at_end ? &st->globaltimer_end : &st->globaltimer;

		clk->fit = fit;
		clk->valid = true;
		send_calibration(st, st->calib, &fit);
	}
	if (pushed)
		st->drv.cuCtxPopCurrent_v2(&popped);
	return err;
}
