/* Filling an instrumented copy's address slots with the application's module variables. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/channel.h"
#include "inject/inject.h"
#include "inject/module_jit.h"
#include "inject/module_vars.h"
#include "inject/own_thread.h"

#define NON_BLOCKING_STREAM 0x1 /* CU_STREAM_NON_BLOCKING: never waits for the legacy stream */

/* The slots of one module in one context. */
struct vars_context {
	CUcontext ctx;
	unsigned char *failed; /* per slot, numbered across the instrumentations' results */
	char reason[160];      /* the first failure */
};

struct module_vars {
	size_t nr_slots;
	unsigned nctx;
	struct vars_context ctx[INSTR_MAX_CTXS];
};

struct fill_job {
	struct inject_state *st;
	struct instr_module *m;
	struct vars_context *c;
};

static CUresult get_global(struct inject_state *st, bool library, uint64_t handle,
			   const char *name, CUdeviceptr *addr, size_t *bytes)
{
	if (library)
		return st->drv.cuLibraryGetGlobal
			   ? st->drv.cuLibraryGetGlobal(addr, bytes, (CUlibrary)(uintptr_t)handle,
							name)
			   : CUDA_ERROR_NOT_FOUND;
	return st->drv.cuModuleGetGlobal_v2
		   ? st->drv.cuModuleGetGlobal_v2(addr, bytes, (CUmodule)(uintptr_t)handle, name)
		   : CUDA_ERROR_NOT_FOUND;
}

/* Writes the address of s's variable into s's slot; why filled when it cannot. */
static int fill_slot(struct fill_job *j, const struct ptx_var_slot *s, CUstream stream, char *why,
		     size_t why_len)
{
	struct inject_state *st = j->st;
	struct instr_module *m = j->m;
	const char *get = m->library ? "cuLibraryGetGlobal" : "cuModuleGetGlobal";
	uint64_t copy = m->library ? (uint64_t)(uintptr_t)m->inst_lib
				   : (uint64_t)(uintptr_t)m->inst_mod;
	CUdeviceptr var = 0, slot = 0;
	size_t bytes = 0, slot_bytes = 0;
	CUresult r;

	r = get_global(st, m->library, m->handle, s->var, &var, &bytes);
	if (r) {
		snprintf(why, why_len, "module variable '%s': %s failed (CUDA error %d)", s->var,
			 get, r);
		return -ENOENT;
	}
	if (s->size && bytes < s->size) {
		snprintf(why, why_len,
			 "module variable '%s' is %zu bytes in the loaded module, %u in its PTX",
			 s->var, bytes, s->size);
		return -EINVAL;
	}
	r = get_global(st, m->library, copy, s->slot, &slot, &slot_bytes);
	if (!r && slot_bytes < sizeof(var))
		r = CUDA_ERROR_INVALID_VALUE;
	if (!r)
		r = st->drv.cuMemcpyHtoDAsync_v2(slot, &var, sizeof(var), stream);
	if (r) {
		snprintf(why, why_len, "module variable '%s': its slot in the copy (CUDA error %d)",
			 s->var, r);
		return -EIO;
	}
	return 0;
}

/* On the library's worker thread, j->c->ctx current. */
static void fill_job(void *arg)
{
	struct fill_job *j = arg;
	struct inject_state *st = j->st;
	struct instr_module *m = j->m;
	CUstream stream = NULL;
	size_t idx = 0;
	CUresult r;
	char why[160];

	r = st->drv.cuStreamCreate(&stream, NON_BLOCKING_STREAM);
	for (unsigned u = 0; u < m->nrw; u++)
		for (size_t i = 0; i < m->rw[u].nr_slots; i++, idx++) {
			if (r) {
				snprintf(why, sizeof(why),
					 "module variables: no stream to fill their slots (CUDA error %d)",
					 r);
			} else if (!fill_slot(j, &m->rw[u].slots[i], stream, why, sizeof(why))) {
				continue;
			}
			j->c->failed[idx] = 1;
			if (!j->c->reason[0])
				snprintf(j->c->reason, sizeof(j->c->reason), "%s", why);
		}
	if (r)
		return;
	r = st->drv.cuStreamSynchronize(stream);
	if (r) {
		memset(j->c->failed, 1, idx);
		snprintf(j->c->reason, sizeof(j->c->reason),
			 "module variables: writing their slots failed (CUDA error %d)", r);
	}
	if (st->drv.cuStreamDestroy_v2)
		st->drv.cuStreamDestroy_v2(stream);
}

/* Whether kernel i may read a slot that failed in c. */
static bool reaches_failed(const struct instr_module *m, size_t i, const struct vars_context *c)
{
	size_t base = 0;

	for (unsigned u = 0; u < m->nrw; u++) {
		const struct ptx_rewrite_result *rw = &m->rw[u];

		for (uint32_t s = 0; i < rw->nr_kernels && s < rw->kernels[i].nr_slots; s++)
			if (c->failed[base + rw->kernels[i].slots[s]])
				return true;
		base += rw->nr_slots;
	}
	return false;
}

/* The module's slots filled in ctx (on the worker, from wherever this runs); NULL: no room. */
static struct vars_context *fill_context(struct instr_state *is, struct instr_module *m,
					 CUcontext ctx)
{
	struct module_vars *v = m->vars;
	struct vars_context *c;
	struct fill_job j;

	if (v->nctx == INSTR_MAX_CTXS)
		return NULL;
	c = &v->ctx[v->nctx];
	c->failed = calloc(v->nr_slots, 1);
	if (!c->failed)
		return NULL;
	c->ctx = ctx;
	v->nctx++;
	j = (struct fill_job){is->st, m, c};
	own_thread_run(ctx, fill_job, &j);
	return c;
}

void module_vars_loaded(struct instr_state *is, struct instr_module *m)
{
	struct inject_state *st = is->st;
	struct vars_context *c;
	CUcontext ctx = NULL;
	size_t slots = 0;

	for (unsigned u = 0; u < m->nrw; u++)
		slots += m->rw[u].nr_slots;
	if (!slots)
		return;
	m->vars = calloc(1, sizeof(*m->vars));
	if (m->vars)
		m->vars->nr_slots = slots;
	if (st->drv.cuCtxGetCurrent)
		st->drv.cuCtxGetCurrent(&ctx);
	c = m->vars ? fill_context(is, m, ctx) : NULL;
	for (size_t i = 0; i < m->nr_kernels; i++) {
		struct instr_kernel *k = &m->kernels[i];

		if (!k->users || (c && !reaches_failed(m, i, c)))
			continue;
		k->users = 0;
		k->reason = c ? c->reason : "out of memory for its module variables' slots";
		m->nr_instrumented--;
	}
}

bool module_vars_ready(struct instr_state *is, struct instr_module *m,
		       const struct instr_kernel *k, CUcontext ctx)
{
	struct module_vars *v = m->vars;
	struct vars_context *c = NULL;
	unsigned affected = 0;

	if (!v)
		return true;
	for (unsigned i = 0; i < v->nctx && !c; i++)
		if (v->ctx[i].ctx == ctx)
			c = &v->ctx[i];
	if (c)
		return !reaches_failed(m, (size_t)(k - m->kernels), c);
	c = fill_context(is, m, ctx);
	if (!c)
		return false;
	for (size_t i = 0; i < m->nr_kernels; i++)
		affected += m->kernels[i].users && reaches_failed(m, i, c);
	if (affected)
		channel_status(&is->st->chan, INJ_PART_PROBES, -ENOENT,
			       "probes: %s %#llx in context %p: %s; %u kernels using it run "
			       "unchanged there",
			       m->library ? "library" : "module", (unsigned long long)m->handle,
			       (void *)ctx, c->reason, affected);
	return !reaches_failed(m, (size_t)(k - m->kernels), c);
}
