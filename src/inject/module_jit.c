/* The application's modules: PTX taken at load, rewritten by the instrumentations, JIT-loaded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/channel.h"
#include "inject/inject.h"
#include "inject/interpose.h"
#include "inject/module_jit.h"
#include "inject/module_vars.h"
#include "inject/probe_cache.h"
#include "inject/twin.h"

typedef CUresult (*library_load_data_fn)(CUlibrary *, const void *, CUjit_option *, void **,
					 unsigned int, CUlibraryOption *, void **, unsigned int);

static uint64_t elapsed(uint64_t since)
{
	return inject_now_ns() - since;
}

unsigned module_jit_device_arch(struct inject_state *st)
{
	CUdevice dev = 0;
	int major = 0, minor = 0;

	if (st->drv.cuCtxGetDevice(&dev) != CUDA_SUCCESS &&
	    st->drv.cuDeviceGet(&dev, 0) != CUDA_SUCCESS)
		return 0;
	if (st->drv.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
					 dev) ||
	    st->drv.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
		return 0;
	return (unsigned)(major * 10 + minor);
}

/* JIT-compiles PTX to a cubin through the driver's linker. */
static int jit_ptx(struct inject_state *st, const char *ptx, size_t len, void **image, size_t *size,
		   char *why, size_t why_len)
{
	char log[2048] = "";
	CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[] = {log, (void *)(uintptr_t)sizeof(log)};
	CUlinkState link = NULL;
	void *cubin = NULL;
	size_t cubin_size = 0;
	CUresult r;

	if ((r = st->drv.cuLinkCreate_v2(2, opts, vals, &link))) {
		snprintf(why, why_len, "cuLinkCreate failed (CUDA error %d)", r);
		return -EIO;
	}
	r = st->drv.cuLinkAddData_v2(link, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, "grtrace-probes",
				     0, NULL, NULL);
	if (!r)
		r = st->drv.cuLinkComplete(link, &cubin, &cubin_size);
	if (r) {
		log[strcspn(log, "\n")] = 0;
		snprintf(why, why_len, "JIT of the rewritten PTX failed (CUDA error %d): %.100s", r,
			 log[0] ? log : "no log");
		st->drv.cuLinkDestroy(link);
		return -EINVAL;
	}
	*image = malloc(cubin_size);
	if (*image)
		memcpy(*image, cubin, cubin_size);
	*size = cubin_size;
	st->drv.cuLinkDestroy(link);
	if (!*image) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int module_jit_compile(struct inject_state *st, int driver_version, const char *ptx, size_t len,
		       unsigned arch, void **image, size_t *size, bool *hit, char *why,
		       size_t why_len)
{
	struct probe_cache_key key = {
	    .ptx_hash = probe_cache_hash(ptx, len),
	    .ptx_len = len,
	    .arch = arch,
	    .driver_version = driver_version,
	};
	const char *dir = st->cfg.cache_dir;
	int err;

	*hit = probe_cache_load(dir, &key, image, size) == 0;
	if (*hit)
		return 0;
	err = jit_ptx(st, ptx, len, image, size, why, why_len);
	if (!err)
		probe_cache_store(dir, &key, *image, *size); /* a read-only cache only costs time */
	return err;
}

static int load_instrumented(struct inject_state *st, struct instr_module *m, const void *image,
			     char *why, size_t why_len)
{
	library_load_data_fn load = (library_load_data_fn)interpose_real_for("cuLibraryLoadData");
	CUresult r;

	if (m->library) {
		r = load ? load(&m->inst_lib, image, NULL, NULL, 0, NULL, NULL, 0)
			 : CUDA_ERROR_NOT_FOUND;
	} else {
		r = st->drv.cuModuleLoadDataEx(&m->inst_mod, image, 0, NULL, NULL);
	}
	if (r) {
		snprintf(why, why_len, "loading the instrumented module failed (CUDA error %d)", r);
		return -EIO;
	}
	return 0;
}

static void report_kernels(struct inject_state *st, struct instr_module *m)
{
	for (size_t i = 0; i < m->nr_kernels; i++) {
		const struct instr_kernel *k = &m->kernels[i];

		if (m->status)
			channel_instrument(&st->chan, k->name, m->status, m->reason);
		else
			channel_instrument(&st->chan, k->name, k->users ? 0 : -ENOTSUP,
					   k->users ? "" : k->reason);
	}
}

static void set_module_failure(struct instr_module *m, int err, const char *why)
{
	m->status = err;
	snprintf(m->reason, sizeof(m->reason), "%s", why);
}

/* One kernel table out of each instrumentation's (instr_kernel.h). */
static int merge_kernels(struct instr_state *is, struct instr_module *m)
{
	unsigned nr_params[INSTR_MAX];

	m->kernels = calloc(m->rw[0].nr_kernels ? m->rw[0].nr_kernels : 1, sizeof(*m->kernels));
	if (!m->kernels)
		return -ENOMEM;
	m->nr_kernels = m->rw[0].nr_kernels;
	for (unsigned u = 0; u < m->nrw; u++)
		nr_params[u] = is->instr[u]->nr_params;
	return instr_kernels_merge(m->rw, m->nrw, nr_params, m->kernels, &m->nr_instrumented);
}

/*
 * Each instrumentation rewrites the text the one before produced; the last
 * text is compiled and loaded. 0, or a negative errno with the module's
 * reason set.
 */
static int rewrite_chain(struct instr_state *is, struct instr_module *m)
{
	const char *text = m->ptx.text;
	size_t len = m->ptx.len;
	int err;

	for (unsigned u = 0; u < is->ninstr; u++) {
		struct instrumentation *in = is->instr[u];

		err = in->rewrite(in->self, text, len, &m->rw[u]);
		m->nrw = u + 1;
		if (err) {
			set_module_failure(m, err,
					   m->rw[u].error[0] ? m->rw[u].error : "PTX rewrite failed");
			return err;
		}
		text = m->rw[u].ptx;
		len = m->rw[u].ptx_len;
	}
	err = merge_kernels(is, m);
	if (err)
		set_module_failure(m, err, "the instrumentations' kernel parameters do not line up");
	return err;
}

/* The rewritten texts are no longer needed once loaded; the kernel tables are. */
static void drop_texts(struct instr_module *m)
{
	for (unsigned u = 0; u < m->nrw; u++) {
		free(m->rw[u].ptx);
		m->rw[u].ptx = NULL;
	}
}

void module_jit_instrument(struct instr_state *is, struct instr_module *m)
{
	struct inject_state *st = is->st;
	uint64_t t0 = inject_now_ns(), rewrite_ns, jit_ns;
	const struct ptx_rewrite_result *last;
	char why[200] = "";
	void *image = NULL;
	size_t size = 0;
	bool hit = false;
	int err;

	m->tried = true;
	if (m->status)
		return; /* no PTX: kernels are reported as they are looked up */
	err = rewrite_chain(is, m);
	rewrite_ns = elapsed(t0);
	fatbin_ptx_free(&m->ptx);
	if (err) {
		drop_texts(m);
		return;
	}
	if (!m->nr_instrumented) {
		report_kernels(st, m);
		m->status = -ENOENT;
		snprintf(m->reason, sizeof(m->reason), "no kernel selected for probes");
		drop_texts(m);
		return;
	}
	last = &m->rw[m->nrw - 1];
	t0 = inject_now_ns();
	err = module_jit_compile(st, is->driver_version, last->ptx, last->ptx_len,
				 module_jit_device_arch(st), &image, &size, &hit, why, sizeof(why));
	if (!err)
		err = load_instrumented(st, m, image, why, sizeof(why));
	if (!err)
		module_vars_loaded(is, m);
	jit_ns = elapsed(t0);
	free(image);
	if (err)
		set_module_failure(m, err, why);
	report_kernels(st, m);
	channel_status(
	    &st->chan, INJ_PART_PROBES, err,
	    "probes: %s %#llx: %zu of %zu kernels instrumented; attach %.2f ms (extract %.2f, "
	    "rewrite %.2f, %s %.2f)%s%s",
	    m->library ? "library" : "module", (unsigned long long)m->handle,
	    err ? 0 : m->nr_instrumented, m->nr_kernels,
	    (m->extract_ns + rewrite_ns + jit_ns) / 1e6, m->extract_ns / 1e6, rewrite_ns / 1e6,
	    hit ? "cache hit" : "JIT", jit_ns / 1e6, err ? ": " : "", err ? why : "");
	drop_texts(m);
}

const struct instr_kernel *module_jit_kernel(const struct instr_module *m, const char *name)
{
	for (size_t i = 0; i < m->nr_kernels; i++)
		if (!strcmp(m->kernels[i].name, name))
			return &m->kernels[i];
	return NULL;
}

void module_jit_loaded(CUmodule handle, bool library, const void *image, const char *path)
{
	struct inject_state *st = inject();
	struct instr_state *is = st->instr;
	struct instr_module *m;
	unsigned arch;
	uint64_t t0;
	int err;

	if (!is || !is->active || !handle)
		return;
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	inject_enter_tool();
	m->handle = (uint64_t)(uintptr_t)handle;
	m->library = library;
	t0 = inject_now_ns();
	arch = module_jit_device_arch(st);
	/* the image may be freed once the load returns: take the PTX now */
	err = image ? fatbin_find_ptx(image, FATBIN_LEN_UNKNOWN, arch, &m->ptx)
		    : fatbin_find_ptx_file(path, arch, &m->ptx);
	m->extract_ns = elapsed(t0);
	if (err) {
		set_module_failure(m, err, m->ptx.reason[0] ? m->ptx.reason : "no usable PTX");
	} else if (m->ptx.len > st->cfg.max_ptx_bytes) {
		char why[128];

		snprintf(why, sizeof(why),
			 "PTX of %.1f MB is over the run-time JIT limit of %.1f MB "
			 "(GRTRACE_GPU_MAX_PTX_MB)",
			 m->ptx.len / 1048576.0, st->cfg.max_ptx_bytes / 1048576.0);
		set_module_failure(m, -EFBIG, why);
		fatbin_ptx_free(&m->ptx);
	}
	pthread_mutex_lock(&is->lock);
	m->next = is->all_modules;
	is->all_modules = m;
	if (handle_table_put(&is->modules, m->handle, m))
		set_module_failure(m, -ENOSPC, "too many modules");
	pthread_mutex_unlock(&is->lock);
	inject_leave_tool();
}

void module_jit_unloaded(uint64_t handle)
{
	struct instr_state *is = inject()->instr;

	if (!is || !is->active)
		return;
	pthread_mutex_lock(&is->lock);
	/* functions of it keep a pointer to the entry, so the entry itself stays */
	if (handle_table_get(&is->modules, handle))
		handle_table_put(&is->modules, handle, NULL);
	twin_forget_module(is, handle);
	pthread_mutex_unlock(&is->lock);
}

void module_jit_library_module(CUlibrary lib, CUmodule mod)
{
	struct instr_state *is = inject()->instr;
	struct instr_module *m;

	if (!is || !is->active)
		return;
	pthread_mutex_lock(&is->lock);
	m = handle_table_get(&is->modules, (uint64_t)(uintptr_t)lib);
	if (m && !handle_table_get(&is->modules, (uint64_t)(uintptr_t)mod))
		handle_table_put(&is->modules, (uint64_t)(uintptr_t)mod, m);
	pthread_mutex_unlock(&is->lock);
}
