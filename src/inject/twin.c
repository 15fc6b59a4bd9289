/* The application's functions and kernels, resolved to their instrumented twins at first launch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "inject/channel.h"
#include "inject/inject.h"
#include "inject/interpose.h"
#include "inject/module_jit.h"
#include "inject/own_thread.h"
#include "inject/twin.h"

typedef CUresult (*library_get_kernel_fn)(CUkernel *, CUlibrary, const char *);
typedef CUresult (*kernel_get_function_fn)(CUfunction *, CUkernel);
typedef CUresult (*func_set_attr_fn)(CUfunction, int, int);
typedef CUresult (*kernel_set_attr_fn)(int, int, CUkernel, CUdevice);

static CUcontext current_ctx(struct inject_state *st)
{
	CUcontext ctx = NULL;

	if (!st->drv.cuCtxGetCurrent || st->drv.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
		return NULL;
	return ctx;
}

static void apply_attrs(struct inject_state *st, struct twin *f)
{
	func_set_attr_fn set_func = (func_set_attr_fn)interpose_real_for("cuFuncSetAttribute");
	kernel_set_attr_fn set_kernel =
	    (kernel_set_attr_fn)interpose_real_for("cuKernelSetAttribute");
	CUdevice dev = 0;

	if (!f->target)
		return;
	st->drv.cuCtxGetDevice(&dev);
	for (unsigned i = 0; i < f->nattrs; i++) {
		if (f->target_is_kernel && set_kernel)
			set_kernel(f->attrs[i].attr, f->attrs[i].value, (CUkernel)f->target, dev);
		else if (!f->target_is_kernel && set_func)
			set_func(f->target, f->attrs[i].attr, f->attrs[i].value);
	}
}

struct resolve_job {
	struct instr_state *is;
	struct twin *f;
};

/* The real cuKernelGetFunction: a kernel's function in the current context. */
static CUresult kernel_function(CUfunction *fn, CUkernel k)
{
	kernel_get_function_fn get_fn =
	    (kernel_get_function_fn)interpose_real_for("cuKernelGetFunction");

	return get_fn ? get_fn(fn, k) : CUDA_ERROR_NOT_FOUND;
}

/*
 * Loads the application's own function now, beside its twin's JIT. Under lazy
 * loading (the default since CUDA 12.2) the driver loads a function at its
 * first launch, and a probed kernel's first launch of the original is its
 * first launch without a probe buffer: in the middle of a busy loop, where
 * that load took 171-192 ms in the driver on an H100 (bench/RESULTS.md).
 * Loaded here it costs what the application's own first launch would have.
 */
static void load_original(struct inject_state *st, struct twin *f)
{
	CUfunction fn = (CUfunction)(uintptr_t)f->handle;

	if (!st->drv.cuFuncLoad)
		return;
	if (f->target_is_kernel && kernel_function(&fn, (CUkernel)(uintptr_t)f->handle))
		return;
	st->drv.cuFuncLoad(fn);
}

/* The twin of f, or none; f->target stays NULL when f launches unchanged. */
static void find_target(struct instr_state *is, struct twin *f)
{
	library_get_kernel_fn get_kernel =
	    (library_get_kernel_fn)interpose_real_for("cuLibraryGetKernel");
	struct inject_state *st = is->st;
	struct instr_module *m = f->mod;
	CUkernel kernel = NULL;
	CUresult r;

	f->unprobed = "its module was loaded before grtrace attached";
	if (!m)
		return;
	if (!m->tried)
		module_jit_instrument(is, m);
	f->unprobed = "its module has no PTX grtrace could rewrite";
	if (m->status) {
		/* the module's own reason where it has one: "no kernel selected for probes" is not "no PTX" */
		if (m->reason[0])
			f->unprobed = m->reason;
		if (!m->nr_kernels) /* never rewritten: say why once per function */
			channel_instrument(&st->chan, f->name, m->status, m->reason);
		return;
	}
	f->k = module_jit_kernel(m, f->name);
	f->unprobed = "left out by the kernel filter, or its rewrite failed";
	if (!f->k || !f->k->users)
		return;
	f->unprobed = "the instrumented copy lacks it";
	if (m->library) {
		r = get_kernel ? get_kernel(&kernel, m->inst_lib, f->name) : CUDA_ERROR_NOT_FOUND;
		f->target = (CUfunction)kernel;
		f->target_is_kernel = true;
	} else {
		r = st->drv.cuModuleGetFunction(&f->target, m->inst_mod, f->name);
	}
	if (r) {
		f->target = NULL;
		channel_instrument(&st->chan, f->name, -EIO,
				   "the instrumented copy lacks this kernel (lookup failed)");
		return;
	}
	f->unprobed = NULL;
	if (f->target_is_kernel) {
		f->target_ctx = current_ctx(st);
		if (kernel_function(&f->target_fn, (CUkernel)f->target))
			f->target_fn = NULL;
	}
	apply_attrs(st, f);
	load_original(st, f);
}

/*
 * Marked resolved only once the answer is known: a launch on another thread
 * meanwhile waits for the lock (and the JIT) instead of taking "no twin" for
 * the answer and running unprobed.
 */
static void resolve_job(void *arg)
{
	struct resolve_job *j = arg;

	find_target(j->is, j->f);
}

/* Mirrors f's saved attributes onto its twin, on the worker thread. */
static void attrs_job(void *arg)
{
	struct resolve_job *j = arg;

	apply_attrs(j->is->st, j->f);
}

void twin_resolve(struct instr_state *is, struct twin *f, CUcontext ctx)
{
	struct resolve_job j = {is, f};

	/* loading the instrumented copy and looking the twin up are grtrace's own calls */
	own_thread_run(ctx, resolve_job, &j);
	atomic_store_explicit(&f->resolved, true, memory_order_release);
}

void twin_function_seen(uint64_t module, uint64_t handle, const char *name)
{
	struct inject_state *st = inject();
	struct instr_state *is = st->instr;
	struct twin *f;

	if (!is || !is->active || !handle || !name)
		return;
	pthread_mutex_lock(&is->lock);
	f = handle_table_get(&is->funcs, handle);
	if (f && f->name && !strcmp(f->name, name)) {
		pthread_mutex_unlock(&is->lock);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name))) {
		free(f);
		pthread_mutex_unlock(&is->lock);
		return;
	}
	f->handle = handle;
	f->mod = handle_table_get(&is->modules, module);
	/*
	 * The rewrite and JIT wait for the first launch: runtimes look up every
	 * kernel they register, most of which never run.
	 */
	if (!f->mod) {
		f->resolved = true;
		f->unprobed = "its module was loaded before grtrace attached";
		channel_instrument(
		    &st->chan, name, -ENOENT,
		    "its module was loaded before grtrace attached (or by a path it does not see)");
	} else if (f->mod->status && !f->mod->nr_kernels) {
		f->resolved = true;
		f->unprobed = "its module has no PTX grtrace could rewrite";
		channel_instrument(&st->chan, name, f->mod->status, f->mod->reason);
	}
	if (handle_table_put(&is->funcs, handle, f))
		channel_instrument(&st->chan, name, -ENOSPC,
				   "too many kernels for the function table");
	pthread_mutex_unlock(&is->lock);
}

void twin_kernel_function(CUkernel k, CUfunction fn)
{
	struct instr_state *is = inject()->instr;
	struct twin *kf;

	if (!is || !is->active)
		return;
	kf = handle_table_get(&is->funcs, (uint64_t)(uintptr_t)k);
	if (kf && kf->mod)
		twin_function_seen(kf->mod->handle, (uint64_t)(uintptr_t)fn, kf->name);
}

void twin_attribute(CUfunction fn, int attr, int value)
{
	struct instr_state *is = inject()->instr;
	struct twin *f;

	if (!is || !is->active)
		return;
	pthread_mutex_lock(&is->lock);
	f = handle_table_get(&is->funcs, (uint64_t)(uintptr_t)fn);
	if (f) {
		unsigned i;

		for (i = 0; i < f->nattrs && f->attrs[i].attr != attr; i++)
			;
		if (i < TWIN_MAX_SAVED_ATTRS) {
			f->attrs[i] = (struct saved_attr){attr, value};
			if (i == f->nattrs)
				f->nattrs++;
		}
		struct resolve_job j = {is, f};

		inject_enter_tool();
		own_thread_run(current_ctx(is->st), attrs_job, &j);
		inject_leave_tool();
	}
	pthread_mutex_unlock(&is->lock);
}

const char *twin_name(CUfunction f)
{
	struct instr_state *is = inject()->instr;
	struct twin *t = is ? handle_table_get(&is->funcs, (uint64_t)(uintptr_t)f) : NULL;

	return t ? t->name : NULL;
}

static bool of_module(const void *val, uint64_t module)
{
	const struct twin *f = val;

	return f->mod && f->mod->handle == module;
}

void twin_forget_module(struct instr_state *is, uint64_t module)
{
	handle_table_clear_if(&is->funcs, of_module, module);
}
