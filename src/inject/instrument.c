/* The instrumentations' shared state: registration, contexts, start and the final collection. */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/kernel_regex.h"
#include "inject/block_probes.h"
#include "inject/bpf_probes.h"
#include "inject/calib.h"
#include "inject/collector.h"
#include "inject/inject.h"
#include "inject/instrument.h"
#include "inject/own_thread.h"

#define FUNC_SLOTS 65536u /* function/kernel handles the application can have */
#define MODULE_SLOTS 16384u

int instr_register(struct instr_state *is, struct instrumentation *in)
{
	if (is->ninstr == INSTR_MAX || !in->nr_params || in->nr_params > INSTR_MAX_PARAMS)
		return -ENOSPC;
	is->instr[is->ninstr++] = in;
	return 0;
}

bool instr_any_pending(struct instr_state *is)
{
	for (unsigned u = 0; u < is->ninstr; u++)
		if (is->instr[u]->pending && is->instr[u]->pending(is->instr[u]->self))
			return true;
	return false;
}

struct context_job {
	struct instr_state *is;
	struct instr_context *c;
};

static void context_job(void *arg)
{
	struct context_job *j = arg;

	for (unsigned u = 0; u < j->is->ninstr; u++) {
		struct instrumentation *in = j->is->instr[u];

		j->c->status[u] =
		    in->context_open ? in->context_open(in->self, j->c, &j->c->priv[u]) : 0;
	}
}

struct instr_context *instr_context_open(struct instr_state *is, CUcontext ctx)
{
	struct context_job j = {is};

	if (is->ncontexts == INSTR_MAX_CTXS)
		return NULL;
	j.c = &is->contexts[is->ncontexts];
	memset(j.c, 0, sizeof(*j.c));
	j.c->ctx = ctx;
	j.c->index = is->ncontexts;
	/* the resources are grtrace's: made on its worker thread, with ctx current there */
	own_thread_run(ctx, context_job, &j);
	is->ncontexts++;
	return j.c;
}

int instr_start(struct inject_state *st, char *why, size_t why_len)
{
	struct instr_state *is;
	regex_t re;
	int err;

	if (st->cfg.kernels[0]) {
		char what[160];

		if (kernel_regex_compile(&re, st->cfg.kernels, what, sizeof(what))) {
			snprintf(why, why_len, "bad --gpu-kernels regex '%.64s': %s", st->cfg.kernels,
				 what);
			return -EINVAL;
		}
		regfree(&re);
	}
	if (inject_driver_ready()) {
		snprintf(why, why_len, "no libcuda.so.1");
		return -ENOENT;
	}
	if (inject_driver_missing()) {
		snprintf(why, why_len, "the driver lacks %s", inject_driver_missing());
		return -ENOSYS;
	}
	is = calloc(1, sizeof(*is));
	if (!is || handle_table_init(&is->funcs, FUNC_SLOTS) ||
	    handle_table_init(&is->modules, MODULE_SLOTS)) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	is->st = st;
	pthread_mutex_init(&is->lock, NULL);
	pthread_cond_init(&is->wake, NULL);
	st->drv.cuDriverGetVersion(&is->driver_version);
	err = st->cfg.probe_mode ? block_probes_register(is, why, why_len) : 0;
	if (!err && st->bpf)
		err = bpf_probes_register(is, why, why_len);
	if (err)
		return err;
	is->active = true;
	st->instr = is;
	return 0;
}

void instr_stop(struct inject_state *st)
{
	struct instr_state *is = st->instr;

	if (!is || !is->active)
		return;
	collector_stop(is);
	pthread_mutex_lock(&is->lock);
	is->active = false;
	/* at exit every launch must be finished: wait for each context's work, then collect */
	for (unsigned i = 0; i < is->ncontexts; i++) {
		if (st->drv.cuCtxPushCurrent_v2(is->contexts[i].ctx) == CUDA_SUCCESS) {
			CUcontext popped;

			st->drv.cuCtxSynchronize();
			st->drv.cuCtxPopCurrent_v2(&popped);
		}
	}
	pthread_mutex_unlock(&is->lock);
	/* a fit after the last launches, so their device times are bracketed */
	calib_refresh(st, 0);
	pthread_mutex_lock(&is->lock);
	for (unsigned u = 0; u < is->ninstr; u++)
		if (is->instr[u]->collect)
			is->instr[u]->collect(is->instr[u]->self, INSTR_COLLECT_EXIT);
	pthread_mutex_unlock(&is->lock);
	for (unsigned u = 0; u < is->ninstr; u++)
		if (is->instr[u]->stop)
			is->instr[u]->stop(is->instr[u]->self);
}
