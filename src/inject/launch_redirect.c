/* Launch redirection: an instrumented kernel's launch goes to its twin with extra parameters. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/call_bracket.h"
#include "inject/copy_timing.h"
#include "inject/cupti.h"
#include "inject/channel.h"
#include "inject/collector.h"
#include "inject/inject.h"
#include "inject/interpose.h"
#include "inject/launch_redirect.h"
#include "inject/module_jit.h"
#include "inject/module_vars.h"
#include "inject/twin.h"

#define SLOW_LAUNCH_NS 5000000ULL
#define SMALL_PARAMS 64

static CUcontext current_ctx(struct inject_state *st)
{
	CUcontext ctx = NULL;

	if (!st->drv.cuCtxGetCurrent || st->drv.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
		return NULL;
	return ctx;
}

static void report_fallback(struct instr_state *is, struct twin *f, const char *fmt, CUresult r)
{
	char why[160];

	atomic_fetch_add(&is->fallbacks, 1);
	if (atomic_exchange(&f->fallback_reported, 1))
		return;
	snprintf(why, sizeof(why), fmt, r);
	channel_instrument(&is->st->chan, f->name, -EIO, why);
}

/* The lock on the launch path, with the wait counted (the collection thread is the other taker). */
static void timed_lock(struct instr_state *is)
{
	uint64_t start;

	if (!pthread_mutex_trylock(&is->lock))
		return;
	start = inject_now_ns();
	pthread_mutex_lock(&is->lock);
	stat_add(&is->st->stats.probe_lock_ns, inject_now_ns() - start);
}

/*
 * Asks each instrumentation that changed the kernel for its parameters, in
 * the order they were appended. Under the lock. False when none took the
 * launch: it runs unchanged, and *why says why (NULL: only buffers ran out).
 */
static bool launch_prepare(struct instr_state *is, struct twin *fn, CUcontext ctx,
			   struct instr_launch *l, uint64_t *values, const char **why)
{
	const struct instr_kernel *k;
	bool taken = false;

	if (!fn->resolved)
		twin_resolve(is, fn, ctx);
	*why = fn->unprobed ? fn->unprobed : "its instrumented copy could not be found";
	if (!fn->target)
		return false;
	*why = "its module variables could not be reached in this context";
	if (!module_vars_ready(is, fn->mod, fn->k, ctx))
		return false;
	*why = "the probes could not start in this context";
	if (collector_start(is) || !(l->context = instr_context_get(is, ctx)))
		return false;
	*why = NULL;
	k = fn->k;
	l->fn = fn;
	l->seq = atomic_fetch_add(&is->seq, 1) + 1;
	for (unsigned i = 0; i < k->nusers; i++) {
		unsigned u = k->user[i];
		struct instrumentation *in = is->instr[u];

		uint64_t *mine = &values[k->user_param[i]];

		int err = l->context->status[u] ? l->context->status[u]
						 : in->launch_begin(in->self, l, u, mine);

		if (!err) {
			taken = true;
		} else {
			if (err != -ENOSPC)
				*why = "its probes are off in this context";
			l->priv[u] = NULL;
			memset(mine, 0, in->nr_params * sizeof(*mine)); /* its probes are off */
		}
	}
	return taken;
}

/* Each instrumentation that took the launch hears how it went. */
static void launch_finish(struct instr_state *is, struct instr_launch *l, CUresult res)
{
	const struct instr_kernel *k = l->fn->k;

	for (unsigned i = 0; i < k->nusers; i++) {
		unsigned u = k->user[i];
		struct instrumentation *in = is->instr[u];

		if (l->priv[u] && in->launch_end)
			in->launch_end(in->self, l, u, res);
	}
}

/* The redirected launch: the twin with the instrumentations' values appended. */
static CUresult launch_twin(struct instr_launch *l, CUcontext ctx, void **params, void **extra,
			    bool ex, uint64_t *values)
{
	struct twin *fn = l->fn;
	void *storage_extra[5], **new_extra = NULL, **new_params = NULL, *small[SMALL_PARAMS];
	size_t extra_size = 0;
	CUresult res;

	/* a kernel without parameters may be launched with neither list */
	if (!params && !extra && !fn->k->nr_params)
		params = small;
	if (params)
		new_params = instr_args_params(params, fn->k, values, small, SMALL_PARAMS);
	else if (extra)
		new_extra = instr_args_extra(extra, fn->k, values, storage_extra, &extra_size);
	/* the application's launch, only redirected: CUPTI must not take it for ours */
	inject_leave_tool();
	res = new_params || new_extra
		  ? interpose_launch_real(ex, l->ptsz,
					  fn->target_fn && fn->target_ctx == ctx ? fn->target_fn
										 : fn->target,
					  l->cfg, new_params, new_extra)
		  : CUDA_ERROR_INVALID_VALUE;
	inject_enter_tool();
	if (new_params && new_params != small)
		free(new_params);
	if (new_extra)
		free(new_extra[1]);
	return res;
}

/*
 * real_start: when the driver's launch began. Not the bracket's start when
 * the cuda source recorded the call in-process: that bracket opens at the
 * wrapper's entry, before this path's own work, whose cost would then read
 * negative (and, unsigned, as a first-use launch of seconds).
 */
static void count_probe_launch(struct inject_state *st, const struct instr_launch *l,
			       uint64_t real_start)
{
	uint64_t now = inject_now_ns(), real_ns = l->api_return_ns - real_start;
	uint64_t host_ns = now - l->entry_ns - real_ns;

	/* a first launch that JIT-compiled or calibrated is counted apart from the steady state */
	if (host_ns < SLOW_LAUNCH_NS) {
		stat_add(&st->stats.probe_timed, 1);
		stat_add(&st->stats.probe_real_ns, real_ns);
		stat_add(&st->stats.probe_host_ns, host_ns);
		stat_add(&st->stats.probe_after_ns, now - l->api_return_ns);
	} else {
		stat_add(&st->stats.probe_slow, 1);
	}
}

bool redirect_launch(CUfunction f, const CUlaunchConfig *cfg, void **params, void **extra, bool ex,
		     bool ptsz, uint64_t entry_ns, CUresult *ret, struct redirect_miss *miss)
{
	struct inject_state *st = inject();
	struct instr_state *is = st->instr;
	uint64_t values[INSTR_MAX_PARAMS];
	struct instr_launch l;
	struct twin *fn;
	CUcontext ctx;
	uint64_t recorded_ns, real_start;
	CUresult res;
	bool taken;

	*miss = (struct redirect_miss){NULL, "the block probes are not running"};
	if (!is || !is->active || atomic_load_explicit(&st->finished, memory_order_relaxed))
		return false;
	fn = handle_table_get(&is->funcs, (uint64_t)(uintptr_t)f);
	if (!fn) {
		miss->why = "a kernel grtrace did not see looked up was launched (its module was "
			    "loaded before grtrace attached, or by a path it does not see)";
		return false;
	}
	miss->kernel = fn->name;
	if (fn->resolved && !fn->target) {
		miss->why = fn->unprobed ? fn->unprobed : "its instrumented copy could not be found";
		return false;
	}
	miss->why = "a stream is being captured into a graph";
	if (atomic_load(&is->captures))
		return false;
	miss->why = "no context is current";
	ctx = current_ctx(st);
	if (!ctx)
		return false;
	l.cfg = cfg;
	l.ptsz = ptsz;
	l.stream_key = instr_stream_key(cfg->hStream, ptsz);
	l.entry_ns = entry_ns;
	l.tid = inject_tid();
	inject_enter_tool();
	timed_lock(is);
	taken = launch_prepare(is, fn, ctx, &l, values, &miss->why);
	pthread_mutex_unlock(&is->lock);
	if (!taken) {
		inject_leave_tool();
		return false;
	}
	/* the call as the cuda source recorded it in-process, if it did: both brackets start there */
	recorded_ns = inject_call.recorded_entry_ns;
	inject_call_begin();
	l.api_enter_ns = inject_call.enter_ns;
	real_start = entry_ns && l.api_enter_ns < entry_ns ? inject_now_ns() : l.api_enter_ns;
	res = launch_twin(&l, ctx, params, extra, ex, values);
	l.api_return_ns = inject_call_end();
	if (res != CUDA_SUCCESS) {
		/* never let the probes change the application's outcome: run the original, with a
		 * bracket of its own (the failed call is not the one the device records are of) */
		inject_leave_tool();
		cupti_need_kernels(st, fn->name, "its instrumented launch failed and ran unchanged");
		inject_call_begin_at(recorded_ns);
		*ret = interpose_launch_real(ex, ptsz, f, cfg, params, extra);
		inject_call_end();
		inject_enter_tool();
		report_fallback(is, fn,
				"the instrumented launch failed (CUDA error %d); ran unchanged", res);
	} else {
		*ret = CUDA_SUCCESS;
		stat_add(&st->stats.probe_launches, 1);
	}
	launch_finish(is, &l, res);
	if (entry_ns)
		count_probe_launch(st, &l, real_start);
	inject_leave_tool();
	return true;
}

uint64_t redirect_sync_begin(void)
{
	struct instr_state *is = inject()->instr;

	return is ? atomic_load(&is->seq) : 0;
}

/*
 * The application synchronized: what it launched before is complete, a good
 * moment to collect. Not while it waits: a context-wide synchronize waits for
 * our streams too, so work queued then could lengthen the application's wait.
 */
void redirect_sync_end(void)
{
	struct instr_state *is = inject()->instr;

	if (!is)
		return;
	atomic_store(&is->sync_seen, 1);
	atomic_fetch_add(&is->syncs, 1);
	if (instr_any_pending(is) || copy_timing_waiting(inject()))
		pthread_cond_signal(&is->wake);
}

void redirect_synchronized(CUstream s, bool all, bool ptsz, uint64_t token)
{
	struct instr_state *is = inject()->instr;
	uint64_t key = instr_stream_key(s, ptsz);

	if (!is || !is->active)
		return;
	pthread_mutex_lock(&is->lock);
	for (unsigned u = 0; u < is->ninstr; u++)
		if (is->instr[u]->synchronized)
			is->instr[u]->synchronized(is->instr[u]->self, key, all, token);
	pthread_mutex_unlock(&is->lock);
}

void redirect_capture(int delta)
{
	struct instr_state *is = inject()->instr;

	if (!is)
		return;
	if (delta > 0)
		atomic_fetch_add(&is->captures, 1);
	else if (atomic_load(&is->captures))
		atomic_fetch_sub(&is->captures, 1);
}
