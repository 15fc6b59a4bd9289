/* Block probes: rewrite the PTX of loaded modules, redirect launches, collect the probe buffers. */
#include <errno.h>
#include <sys/prctl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "inject/calib.h"
#include "inject/channel.h"
#include "inject/fatbin.h"
#include "inject/inject.h"
#include "inject/interpose.h"
#include "inject/launch_summary.h"
#include "inject/probe_cache.h"
#include "inject/probes.h"
#include "inject/ptx_rewrite.h"
#include "inject/ptx_summarize.h"
#include "sources/source.h"

#define FUNC_SLOTS 65536u /* function/kernel handles the application can have */
#define MODULE_SLOTS 16384u
#define MAX_CTXS 16
#define SIZE_CLASSES 24 /* slot sizes 64 KiB << 0..23 */
#define MIN_SLOT_BYTES (16u << 10) /* block mode's device totals fit */
#define ARENA_BYTES (16u << 20) /* the first arena of a class; later ones double */
#define ARENA_MAX_BYTES (256ull << 20)
#define EVENT_EVERY 64 /* launches per stream between completion events (syncs say more) */
#define STREAM_SLOTS 256
#define MAX_BATCH_BYTES (8u << 20) /* read per batch: the staging area's first size */
#define POOL_WAIT_NS 1000000000ULL
#define CALIB_PERIOD_NS                                                                            \
	100000000ULL /* globaltimer re-measured this often while launches complete */
#define MAX_QUERIES 512
#define SLOW_LAUNCH_NS 5000000ULL
#define MAX_STREAMS 64
#define MAX_SAVED_ATTRS 8
#define BLOCK_MSG_MAX 4096 /* block records per message */

/*
 * Handles map to our state through insert-only open-addressing tables: the
 * launch path looks them up without a lock (a key is published after its
 * value), inserts take ps->lock. A removed handle keeps its key with a NULL
 * value, so a reused handle value simply gets a new value.
 */
struct ptr_table {
	_Atomic uint64_t *keys;
	void *_Atomic *vals;
	uint32_t mask;
	uint32_t used;
};

struct inst_module {
	struct inst_module *next;
	uint64_t handle; /* CUmodule or CUlibrary of the application */
	bool library;
	bool tried; /* rewrite + JIT attempted */
	int status; /* 0 instrumented; negative errno: kernels run unchanged */
	char reason[160];
	struct fatbin_ptx ptx; /* kept until the rewrite */
	struct ptx_rewrite_result rw;
	CUmodule inst_mod;
	CUlibrary inst_lib;
	uint64_t extract_ns;
};

struct saved_attr {
	int attr;
	int value;
};

struct inst_func {
	uint64_t handle; /* CUfunction or CUkernel the application launches */
	struct inst_module *mod;
	char *name;
	uint64_t name_id;
	bool resolved;	       /* target looked up (or given up) */
	CUfunction target;     /* the instrumented function; NULL: launch unchanged */
	bool target_is_kernel; /* target is a CUkernel (library copy) */
	CUfunction target_fn; /* the CUkernel's function in target_ctx: launched without a lookup */
	CUcontext target_ctx;
	const struct ptx_kernel_result *k;
	struct saved_attr attrs[MAX_SAVED_ATTRS];
	unsigned nattrs;
	atomic_uint launches;
	atomic_int fallback_reported;
};

struct pool_slot {
	struct pool_slot *next;
	CUdeviceptr dptr;
	uint64_t size;
	uint64_t capacity; /* records after the head */
	CUcontext ctx;
	unsigned size_class;
	uint16_t tag; /* of the slot's latest launch: spans with another tag are stale */
};

struct ctx_res {
	CUcontext ctx;
	CUstream stream; /* ours: non-blocking, never ordered with the application's */
	CUevent *free_events;
	unsigned nfree_events, cap_events;
	CUevent done_event; /* blocking-sync: the drain thread sleeps on it */
	CUfunction summarize; /* __grt_summarize loaded in this context (block mode) */
	int summarize_state;  /* 0 not tried, 1 loaded, -1 failed: the host summarizes */
	CUdeviceptr scratch;  /* thread mode: where the launches whose records are not read write */
	uint64_t scratch_spans;
};

struct pending {
	struct pending *next;
	uint64_t seq;
	uint64_t launch_id;
	uint64_t stream_key;
	uint64_t stream;
	uint64_t api_enter_ns;
	uint64_t param; /* the probe parameter: buffer address and tag */
	uint16_t tag;
	CUcontext ctx;
	struct inst_func *fn;
	struct pool_slot *slot;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t tid;
	CUevent event;	     /* taken at launch: it is recorded after the launch when it is due */
	bool event_recorded; /* the event is on the stream behind this launch */
	atomic_bool launched; /* the launch was submitted (or failed): the collection may take it */
	bool failed;	      /* the instrumented launch failed: nothing to read, the slot goes back */
	bool unlisted;	      /* thread mode, records not read: no slot, not collected */
	bool complete;
	bool blocks_wanted;   /* per-block records go to the trace */
	bool summarized;      /* block mode: the device summarized it, only its totals are read */
	uint64_t staging_off; /* where its buffer landed in the staging copy */
};

struct stream_count {
	uint64_t key;
	unsigned since_event;
};

struct probe_state {
	struct inject_state *st;
	int mode;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_cond_t slot_freed;
	pthread_t thread;
	bool thread_started;
	bool stop;
	bool active;
	struct ptr_table funcs, modules;
	struct inst_module *all_modules;
	struct pending *head, *tail;
	unsigned npending;
	struct pool_slot *free_slots[SIZE_CLASSES];
	unsigned nfree[SIZE_CLASSES];
	unsigned low_water[SIZE_CLASSES]; /* pool_top_up adds an arena below this many free */
	struct ctx_res *class_ctx[SIZE_CLASSES]; /* where the class was last used */
	uint64_t pool_used;
	struct ctx_res ctxs[MAX_CTXS];
	unsigned nctxs;
	struct stream_count streams[STREAM_SLOTS];
	atomic_ullong seq;
	uint64_t max_complete_seq; /* no launch after this one is marked complete */
	atomic_uint captures;
	void *staging; /* host buffer the drain thread copies into */
	size_t staging_size;
	struct grt_probe_summary_job *jobs; /* mapped pinned: the summarizer's work list */
	size_t jobs_cap;
	int driver_version;
	unsigned sm_slots; /* block mode: SM slots read back per launch (0: not known yet) */
	unsigned arenas[SIZE_CLASSES]; /* arenas made per class: each is larger than the last */
	atomic_ullong fallbacks, no_buffer, lost_blocks;
	atomic_int sync_seen;	  /* a synchronizing call ended since the last collection */
	uint64_t last_collect_ns; /* when the collection last ran */
	struct pending *free_pending; /* entries kept for the next launches */
};

/* ---- handle tables ---- */

static int table_init(struct ptr_table *t, uint32_t slots)
{
	t->keys = calloc(slots, sizeof(*t->keys));
	t->vals = calloc(slots, sizeof(*t->vals));
	t->mask = slots - 1;
	t->used = 0;
	return t->keys && t->vals ? 0 : -ENOMEM;
}

static uint32_t slot_of(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (uint32_t)key;
}

static void *table_get(const struct ptr_table *t, uint64_t key)
{
	if (!t->keys || !key)
		return NULL;
	for (uint32_t i = slot_of(key) & t->mask, n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
		uint64_t k = atomic_load_explicit(&t->keys[i], memory_order_acquire);

		if (k == key)
			return atomic_load_explicit(&t->vals[i], memory_order_acquire);
		if (!k)
			return NULL;
	}
	return NULL;
}

/* Under ps->lock. -ENOSPC when full (kept at most 3/4 full so lookups stay short). */
static int table_put(struct ptr_table *t, uint64_t key, void *val)
{
	for (uint32_t i = slot_of(key) & t->mask;; i = (i + 1) & t->mask) {
		uint64_t k = atomic_load_explicit(&t->keys[i], memory_order_relaxed);

		if (k == key) {
			atomic_store_explicit(&t->vals[i], val, memory_order_release);
			return 0;
		}
		if (k)
			continue;
		if ((t->used + 1) * 4 > (t->mask + 1) * 3)
			return -ENOSPC;
		atomic_store_explicit(&t->vals[i], val, memory_order_relaxed);
		atomic_store_explicit(&t->keys[i], key, memory_order_release);
		t->used++;
		return 0;
	}
}

/* ---- small driver helpers ---- */

static unsigned device_arch(struct inject_state *st)
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

/*
 * SM slots worth reading back: the device's SM count rounded up to 16 (SM ids
 * may run a little past the count), all of them when it cannot be asked. A
 * block on an SM beyond stays uncounted and shows as a lost block.
 */
static unsigned device_sm_slots(struct inject_state *st)
{
	CUdevice dev;
	int sms = 0;

	if (st->drv.cuCtxGetDevice(&dev) ||
	    st->drv.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) ||
	    sms <= 0 || sms > (int)GRT_PROBE_SM_SLOTS - 16)
		return GRT_PROBE_SM_SLOTS;
	return ((unsigned)sms + 15) / 16 * 16;
}

static CUcontext current_ctx(struct inject_state *st)
{
	CUcontext ctx = NULL;

	if (!st->drv.cuCtxGetCurrent || st->drv.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
		return NULL;
	return ctx;
}

/* Per-context resources; under ps->lock; NULL when none can be made. */
static struct ctx_res *ctx_res_get(struct probe_state *ps, CUcontext ctx)
{
	struct ctx_res *r;

	for (unsigned i = 0; i < ps->nctxs; i++)
		if (ps->ctxs[i].ctx == ctx)
			return &ps->ctxs[i];
	if (ps->nctxs == MAX_CTXS)
		return NULL;
	r = &ps->ctxs[ps->nctxs];
	memset(r, 0, sizeof(*r));
	r->ctx = ctx;
	if (ps->st->drv.cuStreamCreate(&r->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return NULL;
	ps->nctxs++;
	return r;
}

static CUevent event_get(struct probe_state *ps, struct ctx_res *r)
{
	CUevent e = NULL;

	if (r->nfree_events)
		return r->free_events[--r->nfree_events];
	if (ps->st->drv.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		return NULL;
	return e;
}

static void event_put(struct ctx_res *r, CUevent e)
{
	if (r->nfree_events == r->cap_events) {
		unsigned cap = r->cap_events ? r->cap_events * 2 : 64;
		CUevent *bigger = realloc(r->free_events, cap * sizeof(*bigger));

		if (!bigger)
			return; /* leaks one event handle; harmless */
		r->free_events = bigger;
		r->cap_events = cap;
	}
	r->free_events[r->nfree_events++] = e;
}

/* ---- module instrumentation ---- */

typedef CUresult (*library_load_data_fn)(CUlibrary *, const void *, CUjit_option *, void **,
					 unsigned int, CUlibraryOption *, void **, unsigned int);
typedef CUresult (*library_get_kernel_fn)(CUkernel *, CUlibrary, const char *);
typedef CUresult (*func_set_attr_fn)(CUfunction, int, int);
typedef CUresult (*kernel_set_attr_fn)(int, int, CUkernel, CUdevice);

static uint64_t elapsed(uint64_t since)
{
	return inject_now_ns() - since;
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

/* Compiled PTX, from the disk cache or the JIT (then cached). */
static int compile_cached(struct probe_state *ps, const char *ptx, size_t len, unsigned arch,
			  void **image, size_t *size, bool *hit, char *why, size_t why_len)
{
	struct probe_cache_key key = {
	    .ptx_hash = probe_cache_hash(ptx, len),
	    .ptx_len = len,
	    .arch = arch,
	    .driver_version = ps->driver_version,
	};
	const char *dir = ps->st->cfg.cache_dir;
	int err;

	*hit = probe_cache_load(dir, &key, image, size) == 0;
	if (*hit)
		return 0;
	err = jit_ptx(ps->st, ptx, len, image, size, why, why_len);
	if (!err)
		probe_cache_store(dir, &key, *image, *size); /* a read-only cache only costs time */
	return err;
}

static int load_instrumented(struct inject_state *st, struct inst_module *m, const void *image,
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

static void report_kernels(struct probe_state *ps, struct inst_module *m)
{
	for (size_t i = 0; i < m->rw.nr_kernels; i++) {
		const struct ptx_kernel_result *k = &m->rw.kernels[i];

		if (m->status)
			channel_instrument(&ps->st->chan, k->name, m->status, m->reason);
		else
			channel_instrument(&ps->st->chan, k->name, k->instrumented ? 0 : -ENOTSUP,
					   k->instrumented ? "" : k->reason);
	}
}

static void set_module_failure(struct inst_module *m, int err, const char *why)
{
	m->status = err;
	snprintf(m->reason, sizeof(m->reason), "%s", why);
}

/*
 * Rewrites, compiles and loads the instrumented copy. Needs a current
 * context (the JIT does); called with ps->lock held.
 */
static void instrument_module(struct probe_state *ps, struct inst_module *m)
{
	struct ptx_rewrite_opts opts = {.mode = ps->mode};
	struct inject_state *st = ps->st;
	uint64_t t0 = inject_now_ns(), rewrite_ns, jit_ns;
	char why[200] = "";
	void *image = NULL;
	size_t size = 0;
	bool hit = false;
	unsigned arch;
	int err;

	m->tried = true;
	if (m->status)
		return; /* no PTX: kernels are reported as they are looked up */
	opts.kernel_regex = st->cfg.kernels[0] ? st->cfg.kernels : NULL;
	err = ptx_rewrite(m->ptx.text, m->ptx.len, &opts, &m->rw);
	rewrite_ns = elapsed(t0);
	fatbin_ptx_free(&m->ptx);
	if (err) {
		set_module_failure(m, err, m->rw.error[0] ? m->rw.error : "PTX rewrite failed");
		return;
	}
	if (!m->rw.nr_instrumented) {
		report_kernels(ps, m);
		m->status = -ENOENT;
		snprintf(m->reason, sizeof(m->reason), "no kernel selected for probes");
		return;
	}
	arch = device_arch(st);
	t0 = inject_now_ns();
	err = compile_cached(ps, m->rw.ptx, m->rw.ptx_len, arch, &image, &size, &hit, why,
			     sizeof(why));
	if (!err)
		err = load_instrumented(st, m, image, why, sizeof(why));
	jit_ns = elapsed(t0);
	free(image);
	if (err)
		set_module_failure(m, err, why);
	report_kernels(ps, m);
	channel_status(
	    &st->chan, INJ_PART_PROBES, err,
	    "probes: %s %#llx: %zu of %zu kernels instrumented; attach %.2f ms (extract %.2f, "
	    "rewrite %.2f, %s %.2f)%s%s",
	    m->library ? "library" : "module", (unsigned long long)m->handle,
	    err ? 0 : m->rw.nr_instrumented, m->rw.nr_kernels,
	    (m->extract_ns + rewrite_ns + jit_ns) / 1e6, m->extract_ns / 1e6, rewrite_ns / 1e6,
	    hit ? "cache hit" : "JIT", jit_ns / 1e6, err ? ": " : "", err ? why : "");
	/* the rewritten text is no longer needed; the kernel table is */
	free(m->rw.ptx);
	m->rw.ptx = NULL;
}

static void module_seen(CUmodule handle, bool library, const void *image, const char *path)
{
	struct inject_state *st = inject();
	struct probe_state *ps = st->probes;
	struct inst_module *m;
	uint64_t t0;
	int err;

	if (!ps || !ps->active || !handle)
		return;
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	inject_enter_tool();
	m->handle = (uint64_t)(uintptr_t)handle;
	m->library = library;
	t0 = inject_now_ns();
	/* the image may be freed once the load returns: take the PTX now */
	err = image ? fatbin_find_ptx(image, FATBIN_LEN_UNKNOWN, device_arch(st), &m->ptx)
		    : fatbin_find_ptx_file(path, device_arch(st), &m->ptx);
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
	pthread_mutex_lock(&ps->lock);
	m->next = ps->all_modules;
	ps->all_modules = m;
	if (table_put(&ps->modules, m->handle, m))
		set_module_failure(m, -ENOSPC, "too many modules");
	pthread_mutex_unlock(&ps->lock);
	inject_leave_tool();
}

void probes_module_loaded(CUmodule mod, const void *image, const char *path)
{
	module_seen(mod, false, image, path);
}

void probes_library_loaded(CUlibrary lib, const void *image, const char *path)
{
	module_seen((CUmodule)lib, true, image, path);
}

static void module_gone(uint64_t handle)
{
	struct probe_state *ps = inject()->probes;

	if (!ps || !ps->active)
		return;
	pthread_mutex_lock(&ps->lock);
	/* functions of it keep a pointer to the entry, so the entry itself stays */
	if (table_get(&ps->modules, handle))
		table_put(&ps->modules, handle, NULL);
	for (uint32_t i = 0; i <= ps->funcs.mask; i++) {
		struct inst_func *f = atomic_load(&ps->funcs.vals[i]);

		if (f && f->mod && f->mod->handle == handle)
			atomic_store(&ps->funcs.vals[i], NULL);
	}
	pthread_mutex_unlock(&ps->lock);
}

void probes_module_unloaded(CUmodule mod)
{
	module_gone((uint64_t)(uintptr_t)mod);
}

void probes_library_unloaded(CUlibrary lib)
{
	module_gone((uint64_t)(uintptr_t)lib);
}

void probes_library_module(CUlibrary lib, CUmodule mod)
{
	struct probe_state *ps = inject()->probes;
	struct inst_module *m;

	if (!ps || !ps->active)
		return;
	pthread_mutex_lock(&ps->lock);
	m = table_get(&ps->modules, (uint64_t)(uintptr_t)lib);
	if (m && !table_get(&ps->modules, (uint64_t)(uintptr_t)mod))
		table_put(&ps->modules, (uint64_t)(uintptr_t)mod, m);
	pthread_mutex_unlock(&ps->lock);
}

/* ---- functions ---- */

static void apply_attrs(struct probe_state *ps, struct inst_func *f)
{
	func_set_attr_fn set_func = (func_set_attr_fn)interpose_real_for("cuFuncSetAttribute");
	kernel_set_attr_fn set_kernel =
	    (kernel_set_attr_fn)interpose_real_for("cuKernelSetAttribute");
	CUdevice dev = 0;

	if (!f->target)
		return;
	ps->st->drv.cuCtxGetDevice(&dev);
	for (unsigned i = 0; i < f->nattrs; i++) {
		if (f->target_is_kernel && set_kernel)
			set_kernel(f->attrs[i].attr, f->attrs[i].value, (CUkernel)f->target, dev);
		else if (!f->target_is_kernel && set_func)
			set_func(f->target, f->attrs[i].attr, f->attrs[i].value);
	}
}

/* Finds the instrumented twin of f; under ps->lock with a context current. */
static void resolve_target(struct probe_state *ps, struct inst_func *f)
{
	library_get_kernel_fn get_kernel =
	    (library_get_kernel_fn)interpose_real_for("cuLibraryGetKernel");
	struct inst_module *m = f->mod;
	CUkernel kernel = NULL;
	CUresult r;

	f->resolved = true;
	if (!m)
		return;
	if (!m->tried)
		instrument_module(ps, m);
	if (m->status) {
		if (!m->rw.nr_kernels) /* never rewritten: say why once per function */
			channel_instrument(&ps->st->chan, f->name, m->status, m->reason);
		return;
	}
	f->k = ptx_rewrite_find(&m->rw, f->name);
	if (!f->k || !f->k->instrumented)
		return;
	if (m->library) {
		r = get_kernel ? get_kernel(&kernel, m->inst_lib, f->name) : CUDA_ERROR_NOT_FOUND;
		f->target = (CUfunction)kernel;
		f->target_is_kernel = true;
	} else {
		r = ps->st->drv.cuModuleGetFunction(&f->target, m->inst_mod, f->name);
	}
	if (r) {
		f->target = NULL;
		channel_instrument(&ps->st->chan, f->name, -EIO,
				   "the instrumented copy lacks this kernel (lookup failed)");
		return;
	}
	if (f->target_is_kernel) {
		typedef CUresult (*kernel_get_function_fn)(CUfunction *, CUkernel);
		kernel_get_function_fn get_fn =
		    (kernel_get_function_fn)interpose_real_for("cuKernelGetFunction");

		f->target_ctx = current_ctx(ps->st);
		if (!get_fn || get_fn(&f->target_fn, (CUkernel)f->target))
			f->target_fn = NULL;
	}
	apply_attrs(ps, f);
}

static void function_seen(uint64_t module, uint64_t handle, const char *name)
{
	struct inject_state *st = inject();
	struct probe_state *ps = st->probes;
	struct inst_func *f;

	if (!ps || !ps->active || !handle || !name)
		return;
	pthread_mutex_lock(&ps->lock);
	f = table_get(&ps->funcs, handle);
	if (f && f->name && !strcmp(f->name, name)) {
		pthread_mutex_unlock(&ps->lock);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name))) {
		free(f);
		pthread_mutex_unlock(&ps->lock);
		return;
	}
	f->handle = handle;
	f->mod = table_get(&ps->modules, module);
	/*
	 * The rewrite and JIT wait for the first launch: runtimes look up every
	 * kernel they register, most of which never run.
	 */
	if (!f->mod) {
		f->resolved = true;
		channel_instrument(
		    &st->chan, name, -ENOENT,
		    "its module was loaded before grtrace attached (or by a path it does not see)");
	} else if (f->mod->status && !f->mod->rw.nr_kernels) {
		f->resolved = true;
		channel_instrument(&st->chan, name, f->mod->status, f->mod->reason);
	}
	if (table_put(&ps->funcs, handle, f))
		channel_instrument(&st->chan, name, -ENOSPC,
				   "too many kernels for the function table");
	pthread_mutex_unlock(&ps->lock);
}

void probes_function(CUmodule mod, CUfunction fn, const char *name)
{
	function_seen((uint64_t)(uintptr_t)mod, (uint64_t)(uintptr_t)fn, name);
}

void probes_kernel(CUlibrary lib, CUkernel k, const char *name)
{
	function_seen((uint64_t)(uintptr_t)lib, (uint64_t)(uintptr_t)k, name);
}

void probes_kernel_function(CUkernel k, CUfunction fn)
{
	struct probe_state *ps = inject()->probes;
	struct inst_func *kf;

	if (!ps || !ps->active)
		return;
	kf = table_get(&ps->funcs, (uint64_t)(uintptr_t)k);
	if (kf && kf->mod)
		function_seen(kf->mod->handle, (uint64_t)(uintptr_t)fn, kf->name);
}

void probes_attribute(CUfunction fn, int attr, int value)
{
	struct probe_state *ps = inject()->probes;
	struct inst_func *f;

	if (!ps || !ps->active)
		return;
	pthread_mutex_lock(&ps->lock);
	f = table_get(&ps->funcs, (uint64_t)(uintptr_t)fn);
	if (f) {
		unsigned i;

		for (i = 0; i < f->nattrs && f->attrs[i].attr != attr; i++)
			;
		if (i < MAX_SAVED_ATTRS) {
			f->attrs[i] = (struct saved_attr){attr, value};
			if (i == f->nattrs)
				f->nattrs++;
		}
		inject_enter_tool();
		apply_attrs(ps, f);
		inject_leave_tool();
	}
	pthread_mutex_unlock(&ps->lock);
}

void probes_capture(int delta)
{
	struct probe_state *ps = inject()->probes;

	if (!ps)
		return;
	if (delta > 0)
		atomic_fetch_add(&ps->captures, 1);
	else if (atomic_load(&ps->captures))
		atomic_fetch_sub(&ps->captures, 1);
}

/* ---- probe buffers ---- */

static unsigned size_class(uint64_t bytes)
{
	unsigned c = 0;

	while (c + 1 < SIZE_CLASSES && ((uint64_t)MIN_SLOT_BYTES << c) < bytes)
		c++;
	return c;
}

/*
 * Slots come from arenas of one size class: one allocation, one memset and
 * three strided 32-bit memsets write every slot's head (magic, mode,
 * capacity), all on our stream, once: the probes never write the head and
 * tag their spans, so a slot is reused without being cleaned (block mode's
 * totals are zeroed after they are read). The launch path then only takes a
 * slot off a list; the drain thread tops the lists up ahead of need
 * (pool_top_up).
 * Arenas double per class up to ARENA_MAX_BYTES or a quarter of the budget.
 */
static uint64_t arena_bytes(struct probe_state *ps, unsigned cls)
{
	uint64_t slot = (uint64_t)MIN_SLOT_BYTES << cls, bytes = ARENA_BYTES;
	uint64_t cap = ps->st->cfg.pool_bytes / 4 < ARENA_MAX_BYTES ? ps->st->cfg.pool_bytes / 4
								    : ARENA_MAX_BYTES;

	/* doubling per class, a quarter of the budget at most: several classes must fit */
	for (unsigned i = 0; i < ps->arenas[cls] && bytes * 2 <= cap; i++)
		bytes *= 2;
	if (bytes < slot)
		bytes = slot;
	if (ps->pool_used + bytes > ps->st->cfg.pool_bytes)
		bytes = slot; /* near the budget: one slot at a time */
	return ps->pool_used + bytes > ps->st->cfg.pool_bytes ? 0 : bytes;
}

/* Allocates and formats an arena (no lock needed); returns its slots as a list, or NULL. */
static struct pool_slot *arena_alloc(struct probe_state *ps, struct ctx_res *r, unsigned cls,
				     uint64_t bytes)
{
	struct inject_driver *d = &ps->st->drv;
	uint64_t slot = (uint64_t)MIN_SLOT_BYTES << cls, n = bytes / slot;
	uint64_t capacity =
	    (slot - grt_probe_spans_off(ps->mode)) / sizeof(struct grt_probe_span);
	struct pool_slot *list = NULL;
	CUdeviceptr base = 0;

	if (d->cuMemAlloc_v2(&base, bytes))
		return NULL;
	/* the tag rides in the parameter's top bits: the buffer must sit below them */
	if ((base + bytes - 1) & ~GRT_PROBE_ADDR_MASK ||
	    d->cuMemsetD8Async(base, 0, bytes, r->stream) ||
	    d->cuMemsetD2D32Async(base, slot, GRT_PROBE_MAGIC, 1, n, r->stream) ||
	    d->cuMemsetD2D32Async(base + 4, slot, (unsigned)ps->mode, 1, n, r->stream) ||
	    d->cuMemsetD2D32Async(base + 8, slot, (unsigned)capacity, 1, n, r->stream) ||
	    d->cuStreamSynchronize(r->stream)) {
		d->cuMemFree_v2(base);
		return NULL;
	}
	/* one array, never freed (the arena is not either): the launch path walks the slots in
	 * memory order. Built from the top so that slots come off the list in ascending, adjacent
	 * order. */
	struct pool_slot *arr = calloc(n, sizeof(*arr));

	if (!arr) {
		d->cuMemFree_v2(base);
		return NULL;
	}
	for (uint64_t i = n; i-- > 0;) {
		struct pool_slot *sl = &arr[i];

		sl->dptr = base + i * slot;
		sl->size = slot;
		sl->capacity = capacity;
		sl->ctx = r->ctx;
		sl->size_class = cls;
		sl->next = list;
		list = sl;
	}
	return list;
}

/* Puts an arena's slots on the free list. Under ps->lock. */
static void arena_publish(struct probe_state *ps, unsigned cls, struct pool_slot *list)
{
	struct pool_slot *last = list;
	unsigned n = 1;

	if (!list)
		return;
	for (; last->next; last = last->next)
		n++;
	last->next = ps->free_slots[cls];
	ps->free_slots[cls] = list;
	ps->nfree[cls] += n;
}

/* A new arena for the launch path (out of slots): under ps->lock, as rarely as possible. */
static int arena_new(struct probe_state *ps, struct ctx_res *r, unsigned cls)
{
	uint64_t bytes = arena_bytes(ps, cls);
	struct pool_slot *list;

	if (!bytes)
		return -ENOSPC;
	list = arena_alloc(ps, r, cls, bytes);
	if (!list)
		return -ENOMEM;
	ps->pool_used += bytes;
	ps->arenas[cls]++;
	arena_publish(ps, cls, list);
	ps->low_water[cls] = (unsigned)(bytes / ((uint64_t)MIN_SLOT_BYTES << cls) / 4);
	return 0;
}

/*
 * The drain thread's look ahead: a class the application uses that is
 * running low gets its next arena now, off the launch path. Under ps->lock,
 * which is dropped while the driver works.
 */
static void pool_top_up(struct probe_state *ps)
{
	for (unsigned cls = 0; cls < SIZE_CLASSES; cls++) {
		struct ctx_res *r = ps->class_ctx[cls];
		struct pool_slot *list;
		uint64_t bytes;
		CUcontext popped;

		if (!r || ps->nfree[cls] >= ps->low_water[cls] || !(bytes = arena_bytes(ps, cls)))
			continue;
		ps->pool_used += bytes; /* reserved while the lock is dropped */
		ps->arenas[cls]++;
		pthread_mutex_unlock(&ps->lock);
		list = NULL;
		if (!ps->st->drv.cuCtxPushCurrent_v2(r->ctx)) {
			list = arena_alloc(ps, r, cls, bytes);
			ps->st->drv.cuCtxPopCurrent_v2(&popped);
		}
		pthread_mutex_lock(&ps->lock);
		if (!list) {
			ps->pool_used -= bytes;
			continue;
		}
		arena_publish(ps, cls, list);
		/* keep a quarter of the latest arena in reserve */
		ps->low_water[cls] = (unsigned)(bytes / ((uint64_t)MIN_SLOT_BYTES << cls) / 4);
	}
}

/* A slot of at least bytes in ctx, or NULL. Under ps->lock. */
static struct pool_slot *slot_get(struct probe_state *ps, struct ctx_res *r, uint64_t bytes)
{
	unsigned cls = size_class(bytes);

	if (((uint64_t)MIN_SLOT_BYTES << cls) < bytes)
		return NULL; /* larger than the largest class */
	ps->class_ctx[cls] = r;
	for (int attempt = 0; attempt < 2; attempt++) {
		for (unsigned c = cls; c < SIZE_CLASSES && c <= cls + 2; c++) {
			for (struct pool_slot **at = &ps->free_slots[c]; *at; at = &(*at)->next) {
				struct pool_slot *sl = *at;

				if (sl->ctx != r->ctx)
					continue;
				*at = sl->next;
				sl->next = NULL;
				ps->nfree[c]--;
				ps->class_ctx[c] = r;
				return sl;
			}
		}
		if (attempt || arena_new(ps, r, cls))
			break;
	}
	return NULL;
}

static void slot_put(struct probe_state *ps, struct pool_slot *s)
{
	s->next = ps->free_slots[s->size_class];
	ps->free_slots[s->size_class] = s;
	ps->nfree[s->size_class]++;
}

/* ---- launch redirection ---- */

static uint64_t stream_key(CUstream s, bool ptsz)
{
	uintptr_t v = (uintptr_t)s;

	if ((v == 0 && ptsz) || v == 0x2)
		return ((uint64_t)inject_tid() << 8) | 0x2; /* per-thread default stream */
	if (v == 0 || v == 0x1)
		return 0x1; /* legacy default stream */
	return v;
}

/* Whether to record a completion event after this launch; under ps->lock. */
static bool event_due(struct probe_state *ps, uint64_t key)
{
	struct stream_count *c = &ps->streams[slot_of(key) % STREAM_SLOTS];

	if (c->key != key) {
		c->key = key;
		c->since_event = 0;
	}
	if (++c->since_event >= EVENT_EVERY || ps->pool_used * 4 >= ps->st->cfg.pool_bytes * 3) {
		c->since_event = 0;
		return true;
	}
	return false;
}

/* The application's argument buffer (CU_LAUNCH_PARAM_BUFFER_*) with our pointer appended. */
static void **extend_extra(void **extra, const struct ptx_kernel_result *k, uint64_t buf,
			   void **storage, size_t *size_storage)
{
	void *data = NULL;
	size_t *size = NULL;
	uint8_t *copy;

	for (void **e = extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
		if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			data = e[1];
		else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			size = e[1];
		else
			return NULL; /* an option we do not know: leave the launch alone */
	}
	if (!data || !size || k->param_offset + sizeof(buf) > k->param_size)
		return NULL;
	copy = calloc(1, k->param_size);
	if (!copy)
		return NULL;
	memcpy(copy, data, *size < k->param_offset ? *size : k->param_offset);
	memcpy(copy + k->param_offset, &buf, sizeof(buf));
	*size_storage = k->param_size;
	storage[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	storage[1] = copy;
	storage[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	storage[3] = size_storage;
	storage[4] = CU_LAUNCH_PARAM_END;
	return storage;
}

static void report_fallback(struct probe_state *ps, struct inst_func *f, const char *fmt,
			    CUresult r)
{
	char why[160];

	atomic_fetch_add(&ps->fallbacks, 1);
	if (atomic_exchange(&f->fallback_reported, 1))
		return;
	snprintf(why, sizeof(why), fmt, r);
	channel_instrument(&ps->st->chan, f->name, -EIO, why);
}

/* Waits (pool_wait mode) for the drain thread to free a slot; under ps->lock. */
static struct pool_slot *slot_wait(struct probe_state *ps, struct ctx_res *r, uint64_t bytes,
				   CUstream stream, bool ptsz)
{
	uint64_t deadline = inject_now_ns() + POOL_WAIT_NS;
	struct pool_slot *slot = NULL;
	CUevent e = event_get(ps, r);

	struct pending *last = NULL;
	uint64_t key = stream_key(stream, ptsz);

	/* make sure what holds the slots can complete: an event after this stream's launches */
	for (struct pending *p = ps->head; p; p = p->next)
		if (p->stream_key == key && atomic_load_explicit(&p->launched, memory_order_acquire))
			last = p;
	if (e && last && !last->event && ps->st->drv.cuEventRecord(e, stream) == CUDA_SUCCESS) {
		last->event = e;
		last->event_recorded = true;
	} else if (e) {
		event_put(r, e);
	}
	pthread_cond_signal(&ps->wake);
	while (!slot && ps->npending && inject_now_ns() < deadline) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&ps->slot_freed, &ps->lock, &ts);
		slot = slot_get(ps, r, bytes);
	}
	return slot;
}

static int start_drain_thread(struct probe_state *ps);
static bool summarizer_ready(struct probe_state *ps, struct ctx_res *r);
static void collection_buffers(struct probe_state *ps);

/* The kernel arguments with the probe buffer's address appended; NULL when it cannot be done. */
static void **extend_params(void **params, const struct ptx_kernel_result *k, uint64_t *buf,
			    void **small, unsigned small_len)
{
	unsigned n = k->nr_params;
	void **out = n + 1 <= small_len ? small : malloc((n + 1) * sizeof(void *));

	if (!out)
		return NULL;
	memcpy(out, params, n * sizeof(void *));
	out[n] = buf;
	return out;
}

/* ps->lock on the launch path, with the wait counted (the drain thread is the other taker). */
static void timed_lock(struct probe_state *ps)
{
	uint64_t start;

	if (!pthread_mutex_trylock(&ps->lock))
		return;
	start = inject_now_ns();
	pthread_mutex_lock(&ps->lock);
	stat_add(&ps->st->stats.probe_lock_ns, inject_now_ns() - start);
}

#define PENDING_CHUNK 256

/*
 * A zeroed pending entry from the free list, refilled a chunk at a time
 * (entries are never freed: the launch path does no malloc); under ps->lock.
 */
static struct pending *pending_new(struct probe_state *ps)
{
	struct pending *p = ps->free_pending;

	if (!p) {
		struct pending *chunk = calloc(PENDING_CHUNK, sizeof(*chunk));

		if (!chunk)
			return NULL;
		for (unsigned i = PENDING_CHUNK; i-- > 1;) {
			chunk[i].next = ps->free_pending;
			ps->free_pending = &chunk[i];
		}
		return &chunk[0];
	}
	ps->free_pending = p->next;
	memset(p, 0, sizeof(*p));
	return p;
}

/* Under ps->lock; kept for the next launch (a launch path without malloc and free). */
static void pending_free(struct probe_state *ps, struct pending *p)
{
	p->next = ps->free_pending;
	ps->free_pending = p;
}

/*
 * Thread mode's launches whose records are not read (all but the first of
 * each kernel) all write one scratch buffer per context, grown to the
 * largest launch: the probe runs in full, nothing is collected, and the
 * buffer, rewritten launch after launch, tends to stay in the GPU's L2
 * cache. Buffers outgrown stay allocated (a launch may still be writing
 * one). Fills *out; NULL when over the pool budget. Under ps->lock.
 */
static struct pending *launch_scratch(struct probe_state *ps, struct ctx_res *r,
				      struct inst_func *fn, uint64_t spans, struct pending *out)
{
	uint64_t bytes = grt_probe_buffer_size(GRT_PROBE_THREAD, spans);
	CUdeviceptr d;

	if (spans > r->scratch_spans) {
		if (ps->pool_used + bytes > ps->st->cfg.pool_bytes ||
		    ps->st->drv.cuMemAlloc_v2(&d, bytes))
			return NULL;
		if ((d + bytes - 1) & ~GRT_PROBE_ADDR_MASK) { /* the tag rides in the top bits */
			ps->st->drv.cuMemFree_v2(d);
			return NULL;
		}
		ps->pool_used += bytes;
		r->scratch = d;
		r->scratch_spans = spans;
	}
	memset(out, 0, sizeof(*out));
	out->unlisted = true;
	out->fn = fn;
	out->seq = atomic_fetch_add(&ps->seq, 1) + 1;
	out->param = grt_probe_param(r->scratch, 1);
	return out;
}

/*
 * The launch's probe buffer and its pending entry, appended to the list in
 * launch order but not yet `launched` (the collection skips it until then):
 * one critical section per launch. NULL when the launch runs uninstrumented.
 * Under ps->lock.
 */
static struct pending *launch_prepare(struct probe_state *ps, struct inst_func *fn,
				      CUcontext ctx, const CUlaunchConfig *cfg, bool ptsz,
				      struct pending *local)
{
	struct inject_state *st = ps->st;
	uint64_t slots = (uint64_t)cfg->gridDimX * cfg->gridDimY * cfg->gridDimZ;
	struct pool_slot *slot;
	struct ctx_res *r;
	struct pending *p;
	bool wanted;

	if (!fn->resolved)
		resolve_target(ps, fn);
	if (!ps->sm_slots)
		ps->sm_slots = device_sm_slots(st);
	if (!fn->target || start_drain_thread(ps) || !(r = ctx_res_get(ps, ctx)))
		return NULL;
	summarizer_ready(ps, r);
	collection_buffers(ps);
	wanted = st->cfg.block_launches < 0 ||
		 atomic_fetch_add(&fn->launches, 1) < (unsigned)st->cfg.block_launches;
	if (ps->mode == GRT_PROBE_THREAD)
		slots *= (uint64_t)cfg->blockDimX * cfg->blockDimY * cfg->blockDimZ;
	if (ps->mode == GRT_PROBE_THREAD && !wanted) {
		p = launch_scratch(ps, r, fn, slots, local);
		if (!p)
			atomic_fetch_add(&ps->no_buffer, 1); /* runs unchanged; counted as lost */
		return p;
	}
	slot = slot_get(ps, r, grt_probe_buffer_size(ps->mode, slots));
	/* a long GRTRACE_GPU_DRAIN_MS must not let the pool run dry: wake the collection, once,
	 * as the class crosses its low-water mark (a wake is a system call) */
	if (slot && ps->nfree[slot->size_class] + 1 == ps->low_water[slot->size_class])
		pthread_cond_signal(&ps->wake);
	/* nothing frees a slot before exit when collection waits for it */
	if (!slot && st->cfg.pool_wait && !st->cfg.collect_at_exit)
		slot = slot_wait(ps, r, grt_probe_buffer_size(ps->mode, slots), cfg->hStream, ptsz);
	if (!slot || !(p = pending_new(ps))) {
		if (slot)
			slot_put(ps, slot);
		atomic_fetch_add(&ps->no_buffer, 1);
		return NULL; /* runs unchanged; counted as lost */
	}
	p->seq = atomic_fetch_add(&ps->seq, 1) + 1;
	p->launch_id = ((uint64_t)st->pid << 32) | (p->seq & 0xffffffffu);
	p->stream_key = stream_key(cfg->hStream, ptsz);
	p->stream = (uint64_t)(uintptr_t)cfg->hStream;
	p->ctx = ctx;
	p->fn = fn;
	p->slot = slot;
	/* never 0: that is what fresh memory holds */
	p->tag = slot->tag = slot->tag == UINT16_MAX ? 1 : slot->tag + 1;
	p->param = grt_probe_param(slot->dptr, p->tag);
	p->grid[0] = cfg->gridDimX, p->grid[1] = cfg->gridDimY, p->grid[2] = cfg->gridDimZ;
	p->block[0] = cfg->blockDimX, p->block[1] = cfg->blockDimY, p->block[2] = cfg->blockDimZ;
	p->blocks_wanted = wanted;
	if (event_due(ps, p->stream_key))
		p->event = event_get(ps, r);
	if (ps->tail)
		ps->tail->next = p;
	else
		ps->head = p;
	ps->tail = p;
	ps->npending++;
	return p;
}

/* The redirected launch: the instrumented function with the probe parameter appended. */
static CUresult launch_instrumented(struct pending *p, CUcontext ctx, const CUlaunchConfig *cfg,
				    void **params, void **extra, bool ex, bool ptsz)
{
	struct inst_func *fn = p->fn;
	void *storage_extra[5], **new_extra = NULL, **new_params = NULL, *small_params[64];
	size_t extra_size = 0;
	CUresult res;

	if (params)
		new_params = extend_params(params, fn->k, &p->param, small_params, 64);
	else if (extra)
		new_extra = extend_extra(extra, fn->k, p->param, storage_extra, &extra_size);
	/* the application's launch, only redirected: CUPTI must not take it for ours */
	inject_leave_tool();
	res = new_params || new_extra
		  ? interpose_launch_real(ex, ptsz,
					  fn->target_fn && fn->target_ctx == ctx ? fn->target_fn
										 : fn->target,
					  cfg, new_params, new_extra)
		  : CUDA_ERROR_INVALID_VALUE;
	inject_enter_tool();
	if (new_params && new_params != small_params)
		free(new_params);
	if (new_extra)
		free(new_extra[1]);
	return res;
}

/*
 * The launch path's own cost, for the report: timed on one launch in
 * TIMED_EVERY, picked by a hash of its number: the driver's launch cost has
 * periods of its own (its queue and flushes), which a plain `seq % 8` aliased
 * with on an H100 (timed launches looked 2x slower than the rest).
 */
#define TIMED_EVERY 8

static bool launch_timed(uint64_t seq)
{
	return ((seq * 0x9E3779B97F4A7C15ull) >> 32) % TIMED_EVERY == 0;
}

static void count_probe_launch(struct inject_state *st, const struct pending *p, uint64_t real_ns)
{
	uint64_t host_ns = inject_now_ns() - p->api_enter_ns - real_ns;

	/* a first launch that JIT-compiled or calibrated is counted apart from the steady state */
	if (host_ns < SLOW_LAUNCH_NS) {
		stat_add(&st->stats.probe_timed, 1);
		stat_add(&st->stats.probe_real_ns, real_ns);
		stat_add(&st->stats.probe_host_ns, host_ns);
	} else {
		stat_add(&st->stats.probe_slow, 1);
	}
}

bool probes_launch(CUfunction f, const CUlaunchConfig *cfg, void **params, void **extra, bool ex,
		   bool ptsz, CUresult *ret)
{
	struct inject_state *st = inject();
	struct probe_state *ps = st->probes;
	struct inst_func *fn;
	struct pending *p, local;
	CUcontext ctx;
	CUresult res;
	uint64_t api_enter_ns, real_start = 0, real_ns = 0;
	bool timed;

	if (!ps || !ps->active || atomic_load_explicit(&st->finished, memory_order_relaxed))
		return false;
	fn = table_get(&ps->funcs, (uint64_t)(uintptr_t)f);
	if (!fn || (fn->resolved && !fn->target) || atomic_load(&ps->captures))
		return false;
	ctx = current_ctx(st);
	if (!ctx)
		return false;
	api_enter_ns = inject_api_enter_ns ? inject_api_enter_ns : inject_now_ns();
	inject_enter_tool();
	timed_lock(ps);
	p = launch_prepare(ps, fn, ctx, cfg, ptsz, &local);
	pthread_mutex_unlock(&ps->lock);
	if (!p) {
		inject_leave_tool();
		return false;
	}
	p->api_enter_ns = api_enter_ns;
	p->tid = inject_tid();
	timed = launch_timed(p->seq);
	if (timed)
		real_start = inject_now_ns();
	res = launch_instrumented(p, ctx, cfg, params, extra, ex, ptsz);
	if (timed)
		real_ns = inject_now_ns() - real_start;
	if (res != CUDA_SUCCESS) {
		/* never let the probes change the application's outcome: run the original */
		inject_leave_tool();
		*ret = interpose_launch_real(ex, ptsz, f, cfg, params, extra);
		inject_enter_tool();
		report_fallback(
		    ps, fn, "the instrumented launch failed (CUDA error %d); ran unchanged", res);
		p->failed = true;
	} else {
		*ret = CUDA_SUCCESS;
		p->event_recorded =
		    p->event && st->drv.cuEventRecord(p->event, cfg->hStream) == CUDA_SUCCESS;
		stat_add(&st->stats.probe_launches, 1);
	}
	/* from here on the collection may take it */
	if (!p->unlisted)
		atomic_store_explicit(&p->launched, true, memory_order_release);
	if (timed)
		count_probe_launch(st, p, real_ns);
	inject_leave_tool();
	return true;
}

uint64_t probes_sync_begin(void)
{
	struct probe_state *ps = inject()->probes;

	return ps ? atomic_load(&ps->seq) : 0;
}

/*
 * The application synchronized: what it launched before is complete, a good
 * moment to collect (collect_due). Not while it waits: a context-wide
 * synchronize waits for our stream too, so work queued then could lengthen
 * the application's wait.
 */
void probes_sync_end(void)
{
	struct probe_state *ps = inject()->probes;

	if (!ps)
		return;
	atomic_store(&ps->sync_seen, 1);
	if (ps->npending)
		pthread_cond_signal(&ps->wake);
}

void probes_synchronized(CUstream s, bool all, bool ptsz, uint64_t token)
{
	struct probe_state *ps = inject()->probes;
	uint64_t key = stream_key(s, ptsz);
	bool any = false;

	if (!ps || !ps->active)
		return;
	pthread_mutex_lock(&ps->lock);
	for (struct pending *p = ps->head; p && p->seq <= token; p = p->next)
		if ((all || p->stream_key == key) && !p->complete &&
		    atomic_load_explicit(&p->launched, memory_order_acquire))
			p->complete = any = true;
	if (any && token > ps->max_complete_seq)
		ps->max_complete_seq = token;
	if (any)
		pthread_cond_signal(&ps->wake);
	pthread_mutex_unlock(&ps->lock);
}

/* ---- collection (the drain thread) ---- */

struct stream_done {
	uint64_t key;
	uint64_t seq; /* launches up to here on the stream are complete */
	bool blocked; /* an event of it is not done: later ones are not either */
};

static struct stream_done *stream_done_of(struct stream_done *d, unsigned *n, uint64_t key)
{
	for (unsigned i = 0; i < *n; i++)
		if (d[i].key == key)
			return &d[i];
	if (*n == MAX_STREAMS)
		return NULL;
	d[*n] = (struct stream_done){.key = key};
	return &d[(*n)++];
}

/*
 * Marks launches complete whose stream passed a completion event. Called
 * with ps->lock held; the driver is queried without it. Only this thread
 * frees pending entries, so the pointers stay valid meanwhile.
 */
static void poll_events(struct probe_state *ps)
{
	struct pending *queries[MAX_QUERIES];
	struct stream_done done[MAX_STREAMS];
	unsigned nq = 0, nd = 0;
	uint64_t max_seq = 0;

	for (struct pending *p = ps->head; p && nq < MAX_QUERIES; p = p->next)
		if (!p->complete && atomic_load_explicit(&p->launched, memory_order_acquire) &&
		    p->event_recorded)
			queries[nq++] = p;
	if (!nq)
		return;
	pthread_mutex_unlock(&ps->lock);
	/*
	 * A stream runs in order. Its newest event first: when that one is done
	 * (the usual case once the GPU caught up) one query settles the stream;
	 * otherwise walk from the oldest until one is pending.
	 */
	for (unsigned i = nq; i-- > 0;) {
		struct stream_done *d = stream_done_of(done, &nd, queries[i]->stream_key);

		if (!d || d->seq || d->blocked)
			continue;
		if (ps->st->drv.cuEventQuery(queries[i]->event) == CUDA_SUCCESS)
			d->seq = queries[i]->seq;
		else
			d->blocked = true; /* newest pending: look at the older ones below */
	}
	for (unsigned i = 0; i < nd; i++)
		done[i].blocked = false;
	for (unsigned i = 0; i < nq; i++) {
		struct stream_done *d = stream_done_of(done, &nd, queries[i]->stream_key);

		if (!d || d->blocked || queries[i]->seq <= d->seq)
			continue;
		if (ps->st->drv.cuEventQuery(queries[i]->event) == CUDA_SUCCESS)
			d->seq = queries[i]->seq;
		else
			d->blocked = true;
	}
	pthread_mutex_lock(&ps->lock);
	for (unsigned i = 0; i < nd; i++)
		if (done[i].seq > max_seq)
			max_seq = done[i].seq;
	/* the list is in launch order: nothing after the newest completed launch can be complete */
	for (struct pending *p = ps->head; p && p->seq <= max_seq; p = p->next) {
		struct stream_done *d = stream_done_of(done, &nd, p->stream_key);

		if (d && p->seq <= d->seq)
			p->complete = true;
	}
	if (max_seq > ps->max_complete_seq)
		ps->max_complete_seq = max_seq;
}

/*
 * At most what the collection reads of a launch: block mode's summary when the
 * device summarizes it, else the whole slot. Under ps->lock.
 */
static uint64_t read_bound(struct probe_state *ps, const struct pending *p)
{
	struct ctx_res *r = ctx_res_get(ps, p->ctx);

	if (ps->mode == GRT_PROBE_BLOCK && !p->blocks_wanted && r && r->summarize_state > 0)
		return grt_probe_totals_bytes(ps->sm_slots);
	return p->slot->size;
}

/* Takes completed launches (oldest first, one context) off the list, up to MAX_BATCH_BYTES read. */
static struct pending *take_completed(struct probe_state *ps)
{
	struct pending *batch = NULL, **batch_tail = &batch, **at = &ps->head, *prev = NULL;
	uint64_t bytes = 0;
	CUcontext ctx = NULL;

	while (*at && (*at)->seq <= ps->max_complete_seq) {
		struct pending *p = *at;

		if (!atomic_load_explicit(&p->launched, memory_order_acquire) ||
		    (!p->complete && !p->failed) || (ctx && p->ctx != ctx) ||
		    (bytes && bytes + read_bound(ps, p) > MAX_BATCH_BYTES)) {
			prev = p;
			at = &p->next;
			continue;
		}
		ctx = p->ctx;
		bytes += read_bound(ps, p);
		*at = p->next;
		if (ps->tail == p)
			ps->tail = prev;
		ps->npending--;
		p->next = NULL;
		*batch_tail = p;
		batch_tail = &p->next;
	}
	return batch;
}

static uint64_t used_bytes(const struct probe_state *ps, const struct pending *p)
{
	uint64_t slots = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];

	if (ps->mode == GRT_PROBE_THREAD)
		slots *= (uint64_t)p->block[0] * p->block[1] * p->block[2];
	if (p->summarized)
		return grt_probe_totals_bytes(ps->sm_slots);
	if (slots > p->slot->capacity)
		slots = p->slot->capacity;
	return grt_probe_buffer_size(ps->mode, slots);
}

/*
 * The host side of the copies back: pinned, so that they are real DMA and
 * asynchronous (a pageable target makes the driver stage and wait).
 * Called on the drain thread with the context current.
 */
static int ensure_staging(struct probe_state *ps, size_t need)
{
	size_t size = MAX_BATCH_BYTES;

	if (ps->staging && ps->staging_size >= need)
		return 0;
	while (size < need)
		size *= 2;
	if (ps->staging)
		ps->st->drv.cuMemFreeHost(ps->staging);
	ps->staging = NULL;
	ps->staging_size = 0;
	if (ps->st->drv.cuMemHostAlloc(&ps->staging, size, CU_MEMHOSTALLOC_PORTABLE))
		return -ENOMEM;
	ps->staging_size = size;
	return 0;
}

static void send_blocks(struct inject_state *st, const struct pending *p,
			const struct grt_gpu_block_rec *blocks, size_t n)
{
	for (size_t done = 0; done < n;) {
		size_t chunk = n - done < BLOCK_MSG_MAX ? n - done : BLOCK_MSG_MAX;
		uint32_t len = (uint32_t)(sizeof(struct inj_blocks) + chunk * sizeof(*blocks));
		struct inj_blocks *msg =
		    st->chan.ring ? shm_ring_reserve(st->chan.ring, INJ_MSG_BLOCKS, len) : NULL;

		if (!msg)
			return;
		channel_fill_head(&msg->head, blocks[done].start_ns);
		msg->head.tid = p->tid;
		msg->count = (uint32_t)chunk;
		msg->reserved = 0;
		memcpy(msg->recs, blocks + done, chunk * sizeof(*blocks));
		shm_ring_commit(st->chan.ring, msg);
		done += chunk;
	}
}

/* Any device time of the launch (the first span it wrote), to pick its calibration. */
static uint64_t first_time(const struct pending *p, const struct grt_probe_span *spans, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (spans[i].tag == p->tag && spans[i].start_ns)
			return spans[i].start_ns;
	return 0;
}

/* The calibration fits around device time t, in map (left empty when there are none). */
static void launch_clock(struct probe_state *ps, uint64_t t, struct clock_fit fits[2],
			 struct clock_pair *map)
{
	if (!calib_bracket(ps->st, t, &fits[0], &fits[1])) {
		map->a = &fits[0];
		map->b = &fits[1];
	}
}

static void send_launch(struct probe_state *ps, const struct pending *p, struct inj_launch *msg,
			uint64_t missing)
{
	struct inject_state *st = ps->st;

	msg->rec.launch_id = p->launch_id;
	msg->rec.api_enter_ns = p->api_enter_ns;
	msg->rec.stream = p->stream;
	msg->rec.lost_blocks = missing;
	msg->name_id = channel_name(&st->chan, p->fn->name);
	channel_fill_head(&msg->head, msg->rec.start_ns ? msg->rec.start_ns : p->api_enter_ns);
	msg->head.tid = p->tid;
	channel_send(&st->chan, INJ_MSG_LAUNCH, msg, sizeof(*msg));
	atomic_fetch_add(&ps->lost_blocks, missing);
}

/* A block-mode launch the device summarized: its summary from the totals. */
static void process_totals(struct probe_state *ps, const struct pending *p, const uint8_t *buf)
{
	const struct grt_probe_sm *sm = (const void *)(buf + GRT_PROBE_SM_OFF);
	uint64_t blocks = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];
	struct clock_fit fits[2];
	struct clock_pair map = {0};
	struct inj_launch msg = {0};

	launch_clock(ps, launch_totals_first_start(sm, ps->sm_slots), fits, &map);
	launch_summarize_totals(sm, ps->sm_slots, (const void *)(buf + GRT_PROBE_HIST_OFF), &map,
				&msg.rec);
	send_launch(ps, p, &msg, blocks > msg.rec.blocks ? blocks - msg.rec.blocks : 0);
}

/* Turns one launch's buffer (copied to host) into block records and its summary. */
static void process_launch(struct probe_state *ps, const struct pending *p, const uint8_t *buf)
{
	const struct grt_probe_head *head = (const void *)buf;
	const struct grt_probe_span *spans = (const void *)(buf + grt_probe_spans_off(ps->mode));
	struct clock_fit fits[2];
	struct clock_pair map = {0};
	uint64_t blocks = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2], missing = 0, n;
	uint32_t tpb = p->block[0] * p->block[1] * p->block[2];
	struct inj_launch msg = {0};
	struct grt_gpu_block_rec *recs;
	size_t got;

	if (head->magic != GRT_PROBE_MAGIC)
		return;
	if (p->summarized) {
		process_totals(ps, p, buf);
		return;
	}
	n = (used_bytes(ps, p) - grt_probe_spans_off(ps->mode)) / sizeof(*spans);
	recs = calloc(blocks ? blocks : 1, sizeof(*recs));
	if (!recs)
		return;
	/* the fits around this launch (its first span is close enough to pick them) */
	launch_clock(ps, first_time(p, spans, n), fits, &map);
	if (ps->mode == GRT_PROBE_THREAD) {
		got = launch_blocks_from_thread_spans(spans, n, p->tag, tpb, p->grid, blocks, &map,
						      p->launch_id, recs, &missing);
	} else {
		got = launch_blocks_from_spans(spans, n, p->tag, p->grid, &map, p->launch_id, recs,
					       &missing);
		missing += blocks - n;
	}
	if (p->blocks_wanted)
		send_blocks(ps->st, p, recs, got);
	launch_summarize(recs, got, &msg.rec);
	send_launch(ps, p, &msg, missing);
	free(recs);
}

/*
 * Waits for our stream with a blocking-sync event: the thread sleeps in the
 * kernel. Polling (cuStreamQuery in a loop) or a spinning synchronize keeps
 * taking the driver's locks and slowed the application's launches 3x on an
 * H100 (bench/RESULTS.md).
 */
static CUresult wait_stream(struct probe_state *ps, struct ctx_res *r)
{
	struct inject_driver *d = &ps->st->drv;
	CUresult res;

	if (!r->done_event &&
	    d->cuEventCreate(&r->done_event, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING))
		return d->cuStreamSynchronize(r->stream);
	res = d->cuEventRecord(r->done_event, r->stream);
	return res ? res : d->cuEventSynchronize(r->done_event);
}

static int by_address(const void *a, const void *b)
{
	const struct pending *x = *(struct pending *const *)a, *y = *(struct pending *const *)b;

	return x->slot->dptr < y->slot->dptr ? -1 : x->slot->dptr > y->slot->dptr;
}

/* How many slots from sorted[i] on sit back to back in one arena and read the same bytes. */
static size_t run_length(const struct probe_state *ps, struct pending **sorted, size_t i, size_t n)
{
	uint64_t bytes = used_bytes(ps, sorted[i]);
	size_t j = i + 1;

	while (j < n && sorted[j]->slot->size_class == sorted[i]->slot->size_class &&
	       sorted[j]->slot->dptr == sorted[j - 1]->slot->dptr + sorted[j - 1]->slot->size &&
	       used_bytes(ps, sorted[j]) == bytes)
		j++;
	return j - i;
}

/* One run of adjacent slots that all read `bytes`: the first bytes of each, one 2-D copy. */
static CUresult copy_rows(struct probe_state *ps, struct ctx_res *r, struct pending **sorted,
			  size_t len, uint64_t bytes, uint64_t off)
{
	CUDA_MEMCPY2D c = {
	    .srcMemoryType = CU_MEMORYTYPE_DEVICE,
	    .srcDevice = sorted[0]->slot->dptr,
	    .srcPitch = sorted[0]->slot->size,
	    .dstMemoryType = CU_MEMORYTYPE_HOST,
	    .dstHost = (uint8_t *)ps->staging + off,
	    .dstPitch = bytes,
	    .WidthInBytes = bytes,
	    .Height = len,
	};

	for (size_t j = 0; j < len; j++)
		sorted[j]->staging_off = off + j * bytes;
	return ps->st->drv.cuMemcpy2DAsync_v2(&c, r->stream);
}

/*
 * Queues the copies of what is read of the launches' buffers to the staging
 * area: one 2-D copy per run of adjacent slots that read the same bytes
 * (block mode's summaries: the PCIe traffic of the copies back slows the
 * application's launches, bench/RESULTS.md), one plain copy per slot
 * otherwise. Returns the driver's result; the caller waits for the stream.
 */
static CUresult copy_back(struct probe_state *ps, struct ctx_res *r, struct pending **sorted,
			  size_t n)
{
	uint64_t off = 0, need = 0;
	CUresult res = CUDA_SUCCESS;

	for (size_t i = 0; i < n; i++)
		need += used_bytes(ps, sorted[i]);
	if (ensure_staging(ps, need))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n && !res;) {
		size_t len = run_length(ps, sorted, i, n);
		uint64_t bytes = used_bytes(ps, sorted[i]);

		stat_add(&ps->st->stats.drain_driver_calls, 1);
		res = copy_rows(ps, r, sorted + i, len, bytes, off);
		off += len * bytes;
		i += len;
	}
	return res;
}

/*
 * Loads __grt_summarize in r's context (current), once: on the first launch
 * in the context, which compiles the application's module too (a JIT later,
 * on the drain thread, would hold the driver while the application launches).
 * False when the host must summarize.
 */
static bool summarizer_ready(struct probe_state *ps, struct ctx_res *r)
{
	struct inject_driver *d = &ps->st->drv;
	char why[200] = "";
	void *image = NULL;
	size_t size;
	bool hit;
	CUmodule mod;
	CUresult res = CUDA_ERROR_INVALID_VALUE;

	if (r->summarize_state || ps->mode != GRT_PROBE_BLOCK)
		return r->summarize_state > 0;
	r->summarize_state = -1;
	if (!compile_cached(ps, grt_summarize_ptx, strlen(grt_summarize_ptx), device_arch(ps->st),
			    &image, &size, &hit, why, sizeof(why))) {
		res = d->cuModuleLoadDataEx(&mod, image, 0, NULL, NULL);
		if (!res)
			res = d->cuModuleGetFunction(&r->summarize, mod, GRT_SUMMARIZE_KERNEL);
	}
	free(image);
	if (res) {
		channel_status(&ps->st->chan, INJ_PART_PROBES, -EIO,
			       "the probe summarizer did not load (CUDA error %d%s%s): launches are "
			       "summarized on the host from their spans",
			       res, why[0] ? ", " : "", why);
		return false;
	}
	r->summarize_state = 1;
	return true;
}

/* Room for n jobs in the mapped pinned work list; its device address in *dptr. */
static int ensure_jobs(struct probe_state *ps, size_t n, CUdeviceptr *dptr)
{
	struct inject_driver *d = &ps->st->drv;
	size_t cap = ps->jobs_cap ? ps->jobs_cap : 1024;
	void *host;

	while (cap < n)
		cap *= 2;
	if (cap != ps->jobs_cap) {
		if (d->cuMemHostAlloc(&host, cap * sizeof(*ps->jobs),
				      CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE))
			return -ENOMEM;
		if (ps->jobs)
			d->cuMemFreeHost(ps->jobs);
		ps->jobs = host;
		ps->jobs_cap = cap;
	}
	return d->cuMemHostGetDevicePointer_v2(dptr, ps->jobs, 0) ? -EIO : 0;
}

/*
 * The collection's pinned host buffers, made once on the first launch (which
 * compiles modules anyway) with the application's context current: pinning
 * memory takes the driver's locks for milliseconds, which at the first
 * collection would stall launches being submitted. A batch reads at most
 * MAX_BATCH_BYTES, so the staging area rarely grows later. Under ps->lock.
 */
static void collection_buffers(struct probe_state *ps)
{
	CUdeviceptr unused;

	if (ps->staging)
		return;
	ensure_staging(ps, MAX_BATCH_BYTES);
	if (ps->mode == GRT_PROBE_BLOCK)
		ensure_jobs(ps, 1, &unused);
}

/*
 * Block mode: queues the device summary (totals and histogram from the
 * spans) of the batch's launches whose blocks are not wanted, one CTA each,
 * on our stream ahead of the copies, and marks them summarized. When the
 * summarizer cannot run, nothing is marked and their spans are read instead.
 */
static void summarize_batch(struct probe_state *ps, struct ctx_res *r, struct pending **reads,
			    size_t n)
{
	size_t njobs = 0;
	CUdeviceptr jobs;
	unsigned sm_slots = ps->sm_slots;
	void *args[2] = {&jobs, &sm_slots};

	if (ps->mode != GRT_PROBE_BLOCK || !summarizer_ready(ps, r) || ensure_jobs(ps, n, &jobs))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct pending *p = reads[i];
		uint64_t blocks = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];

		if (p->blocks_wanted)
			continue;
		ps->jobs[njobs++] = (struct grt_probe_summary_job){
		    .buffer = p->slot->dptr,
		    .spans = (uint32_t)(blocks < p->slot->capacity ? blocks : p->slot->capacity),
		    .tag = p->tag,
		};
	}
	if (!njobs)
		return;
	stat_add(&ps->st->stats.drain_driver_calls, 1);
	if (ps->st->drv.cuLaunchKernel(r->summarize, (unsigned)njobs, 1, 1, GRT_SUMMARIZE_THREADS,
				       1, 1, 0, r->stream, args, NULL))
		return;
	for (size_t i = 0; i < n; i++)
		reads[i]->summarized = !reads[i]->blocks_wanted;
}

/* One launch's slot back to the pool: spans are tagged and totals rewritten, nothing to clean. */
static void return_slot(struct probe_state *ps, struct pending *p, CUresult res)
{
	if (res && !p->failed)
		atomic_fetch_add(&ps->no_buffer, 1); /* its records could not be read */
	slot_put(ps, p->slot);
}

/*
 * Copies back what is read of a batch's launches (block mode: the device's
 * summary, or the spans of launches whose blocks are wanted; thread mode:
 * the first launches only), reports them and returns the slots. Without
 * ps->lock.
 */
static void collect(struct probe_state *ps, struct pending *batch)
{
	struct inject_driver *d = &ps->st->drv;
	struct pending **sorted, **reads;
	struct ctx_res *r;
	size_t n = 0, nreads = 0;
	CUresult res;

	if (!batch)
		return;
	/* the launches are complete: a fit taken now brackets their device times */
	calib_refresh(ps->st, CALIB_PERIOD_NS);
	for (struct pending *p = batch; p; p = p->next)
		n++;
	sorted = malloc(2 * n * sizeof(*sorted));
	reads = sorted ? sorted + n : NULL;
	n = 0;
	for (struct pending *p = batch; sorted && p; p = p->next)
		sorted[n++] = p;
	if (sorted)
		qsort(sorted, n, sizeof(*sorted), by_address);
	for (size_t i = 0; i < n; i++)
		if (!sorted[i]->failed)
			reads[nreads++] = sorted[i];
	pthread_mutex_lock(&ps->lock);
	r = ctx_res_get(ps, batch->ctx);
	pthread_mutex_unlock(&ps->lock);
	res = !sorted || !r || d->cuCtxPushCurrent_v2(batch->ctx) ? CUDA_ERROR_INVALID_VALUE
								  : CUDA_SUCCESS;
	if (!res) {
		CUcontext popped;

		/* the summary, the copies behind it, then one wait: the fewer round trips
		 * through the driver beside the application's launches, the better */
		if (nreads)
			summarize_batch(ps, r, reads, nreads);
		res = nreads ? copy_back(ps, r, reads, nreads) : CUDA_SUCCESS;
		if (!res && nreads)
			res = wait_stream(ps, r);
		/* in launch order, as the recorder expects them */
		for (struct pending *p = batch; p && !res; p = p->next)
			if (!p->failed)
				process_launch(ps, p, (uint8_t *)ps->staging + p->staging_off);
		d->cuCtxPopCurrent_v2(&popped);
	}
	pthread_mutex_lock(&ps->lock);
	while (batch) {
		struct pending *next = batch->next;

		return_slot(ps, batch, res);
		if (batch->event && r)
			event_put(r, batch->event);
		pending_free(ps, batch);
		batch = next;
	}
	pthread_cond_broadcast(&ps->slot_freed);
	pthread_mutex_unlock(&ps->lock);
	free(sorted);
}

#define DRAIN_TICK_NS 1000000 /* how often the collection thread looks */

/*
 * Whether to collect now. The collection's driver calls slow the launches of
 * an application that is submitting work (bench/RESULTS.md, runs 11-13), so
 * it runs after an application thread synchronized (what it launched is
 * complete, and it often does host work next), when a pool class runs low,
 * and otherwise every GRTRACE_GPU_DRAIN_MS. Under ps->lock.
 */
static bool collect_due(struct probe_state *ps)
{
	if (atomic_exchange(&ps->sync_seen, 0) ||
	    inject_now_ns() - ps->last_collect_ns >= ps->st->cfg.drain_ms * 1000000ULL)
		return true;
	/* a class running low: grow the pool (16 KiB slots) while the budget allows */
	for (unsigned cls = 0; cls < SIZE_CLASSES; cls++)
		if (ps->class_ctx[cls] && ps->nfree[cls] < ps->low_water[cls] &&
		    !arena_bytes(ps, cls))
			return true;
	return false;
}

static void *drain_main(void *arg)
{
	struct probe_state *ps = arg;

	inject_enter_tool(); /* for good: everything this thread does is the library's */
	/* the name keeps this thread's driver calls out of the cuda source's records */
	prctl(PR_SET_NAME, GRT_OWN_THREAD_PREFIX "probes");
	pthread_mutex_lock(&ps->lock);
	ps->last_collect_ns = inject_now_ns();
	while (!ps->stop) {
		struct timespec ts;
		struct pending *batch;
		uint64_t t0, t1;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += DRAIN_TICK_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&ps->wake, &ps->lock, &ts);
		if (atomic_load(&ps->captures))
			continue;
		t0 = inject_now_ns();
		pool_top_up(ps);
		t1 = inject_now_ns();
		stat_add(&ps->st->stats.drain_topup_ns, t1 - t0);
		if (!ps->npending || ps->st->cfg.collect_at_exit || !collect_due(ps))
			continue;
		ps->last_collect_ns = t1;
		poll_events(ps);
		t0 = inject_now_ns();
		stat_add(&ps->st->stats.drain_poll_ns, t0 - t1);
		while ((batch = take_completed(ps))) {
			pthread_mutex_unlock(&ps->lock);
			collect(ps, batch);
			stat_add(&ps->st->stats.drain_batches, 1);
			pthread_mutex_lock(&ps->lock);
		}
		stat_add(&ps->st->stats.drain_collect_ns, inject_now_ns() - t0);
	}
	pthread_mutex_unlock(&ps->lock);
	return NULL;
}

/* Under ps->lock. */
static int start_drain_thread(struct probe_state *ps)
{
	if (ps->thread_started)
		return 0;
	if (pthread_create(&ps->thread, NULL, drain_main, ps))
		return -EAGAIN;
	ps->thread_started = true;
	return 0;
}

int probes_start(struct inject_state *st, char *why, size_t why_len)
{
	struct probe_state *ps;
	regex_t re;

	if (st->cfg.kernels[0]) {
		if (regcomp(&re, st->cfg.kernels, REG_EXTENDED | REG_NOSUB)) {
			snprintf(why, why_len, "bad --gpu-kernels regex '%s'", st->cfg.kernels);
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
	ps = calloc(1, sizeof(*ps));
	if (!ps || table_init(&ps->funcs, FUNC_SLOTS) || table_init(&ps->modules, MODULE_SLOTS)) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	ps->st = st;
	ps->mode = st->cfg.probe_mode;
	pthread_mutex_init(&ps->lock, NULL);
	pthread_cond_init(&ps->wake, NULL);
	pthread_cond_init(&ps->slot_freed, NULL);
	st->drv.cuDriverGetVersion(&ps->driver_version);
	ps->active = true;
	st->probes = ps;
	channel_status(&st->chan, INJ_PART_PROBES, 0, "%s probes on for %s (cache %s)",
		       ps->mode == GRT_PROBE_THREAD ? "thread" : "block",
		       st->cfg.kernels[0] ? st->cfg.kernels : "every kernel with PTX",
		       st->cfg.cache_dir);
	return 0;
}

void probes_stop(struct inject_state *st)
{
	struct probe_state *ps = st->probes;
	struct pending *batch;

	if (!ps || !ps->active)
		return;
	pthread_mutex_lock(&ps->lock);
	if (ps->thread_started) {
		ps->stop = true;
		pthread_cond_signal(&ps->wake);
		pthread_mutex_unlock(&ps->lock);
		pthread_join(ps->thread, NULL);
		pthread_mutex_lock(&ps->lock);
	}
	ps->active = false;
	/* at exit every launch must be finished: wait for each context's work, then collect */
	for (unsigned i = 0; i < ps->nctxs; i++) {
		if (st->drv.cuCtxPushCurrent_v2(ps->ctxs[i].ctx) == CUDA_SUCCESS) {
			CUcontext popped;

			st->drv.cuCtxSynchronize();
			st->drv.cuCtxPopCurrent_v2(&popped);
		}
	}
	for (struct pending *p = ps->head; p; p = p->next)
		p->complete = true;
	ps->max_complete_seq = UINT64_MAX;
	pthread_mutex_unlock(&ps->lock);
	calib_refresh(st, 0);
	pthread_mutex_lock(&ps->lock);
	while ((batch = take_completed(ps))) {
		pthread_mutex_unlock(&ps->lock);
		collect(ps, batch);
		pthread_mutex_lock(&ps->lock);
	}
	pthread_mutex_unlock(&ps->lock);
	channel_drops(&st->chan, INJ_DROP_PROBE, atomic_load(&ps->no_buffer));
	channel_status(&st->chan, INJ_PART_PROBES, 0,
		       "probes: %llu launches instrumented, %llu ran unchanged after a failed "
		       "instrumented launch, %llu without a probe buffer, %llu blocks lost",
		       (unsigned long long)atomic_load(&st->stats.probe_launches),
		       (unsigned long long)atomic_load(&ps->fallbacks),
		       (unsigned long long)atomic_load(&ps->no_buffer),
		       (unsigned long long)atomic_load(&ps->lost_blocks));
}
