/* The instrumentation interface: what the module JIT, launch redirection and collection call. */
#ifndef GRT_INJECT_INSTRUMENT_H
#define GRT_INJECT_INSTRUMENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "inject/cuda_decls.h"
#include "inject/handle_table.h"
#include "inject/instr_kernel.h"
#include "inject/ptx_rewrite.h"

/*
 * An instrumentation changes kernels and keeps per-context device state. The
 * shared path drives every active one the same way (docs/ptx-rewrite.md,
 * "Instrumentations"):
 *
 *  (a) module JIT: at the first launch of one of a module's kernels, each
 *      instrumentation in turn rewrites the module's PTX (`rewrite`: the
 *      output of one is the input of the next); a kernel it changes gets its
 *      `nr_params` u64 parameters appended, after those of the ones before;
 *  (b) launch redirection: a launch of such a kernel goes to its instrumented
 *      twin, each instrumentation that changed it supplying its parameters
 *      (`launch_begin`, under the shared lock) and hearing how the launch went
 *      (`launch_end`, without the lock);
 *  (c) contexts and collection: `context_open` makes an instrumentation's
 *      device resources the first time a context launches an instrumented
 *      kernel; the collection thread (grtrace-probes) calls `tick` about
 *      every millisecond, and `collect` after the application synchronized,
 *      every GRTRACE_GPU_DRAIN_MS, when `collect_due` asks for it, and at exit.
 *
 * Hooks a part does not need are NULL. Every hook runs with the library's
 * own driver calls passing straight through (inject_in_tool); a hook that
 * makes driver calls runs on one of the library's threads, except
 * launch_begin/launch_end, which hand such calls to own_thread_run() (or, for
 * a call that must follow the launch on its thread, own_thread_lend()).
 */

#define INSTR_MAX_CTXS 16 /* contexts with instrumented launches */

struct inject_state;
struct instr_state;
struct instr_context;

/* One redirected launch as the instrumentations see it. */
struct instr_launch {
	struct twin *fn;		/* the application's function and its twin */
	struct instr_context *context;	/* where it runs */
	const CUlaunchConfig *cfg;
	bool ptsz;			/* per-thread default stream semantics */
	uint64_t stream_key;		/* the stream, per-thread default streams told apart */
	uint64_t seq;			/* launch order (1, 2, ...), for the sync tokens */
	uint64_t entry_ns;		/* the wrapper was entered (the library's cost starts) */
	uint64_t api_enter_ns;		/* the bracket around the real launch (call_bracket.h) */
	uint64_t api_return_ns;		/* set before launch_end */
	uint32_t tid;
	void *priv[INSTR_MAX];		/* each instrumentation's state of this launch */
};

enum instr_collect_reason {
	INSTR_COLLECT_RUNNING, /* the collection thread: a sync, the drain period, collect_due */
	INSTR_COLLECT_EXIT,    /* at exit, every context synchronized: collect everything */
};

struct instrumentation {
	const char *name;
	unsigned nr_params; /* u64 parameters appended to each kernel it changes (1..) */
	void *self;	    /* its state, passed back to every hook */

	/*
	 * (a) Rewrites len bytes of PTX into res (ptx_rewrite.h: every .entry
	 * listed; instrumented ones have param_offset of the first appended
	 * parameter, the others follow it 8 bytes apart). 0 or a negative errno
	 * with res->error set. On the worker thread, the launching thread holding the lock.
	 */
	int (*rewrite)(void *self, const char *ptx, size_t len, struct ptx_rewrite_result *res);

	/*
	 * (b) Fills params[0 .. nr_params-1] for launch l of a kernel it changed,
	 * and may keep state in l->priv[its index]. Negative errno: it cannot
	 * take this launch (then its parameters are 0 and, when no other
	 * instrumentation took it, the original kernel runs unchanged). Under
	 * the shared lock.
	 */
	int (*launch_begin)(void *self, struct instr_launch *l, unsigned index, uint64_t *params);
	/* After the redirected launch returned res (or was not made: res != 0). No lock. */
	void (*launch_end)(void *self, struct instr_launch *l, unsigned index, CUresult res);

	/*
	 * (c) First instrumented launch in a context: its resources for that
	 * context in *priv. On the library's worker thread with the context
	 * current there (own_thread.h), the launching thread holding the lock. Negative
	 * errno: no launch in that context is redirected for it.
	 */
	int (*context_open)(void *self, struct instr_context *c, void **priv);
	/* The application's synchronizing call returned: launches up to token on the stream
	 * (every stream with all) are complete. Under the shared lock. */
	void (*synchronized)(void *self, uint64_t stream_key, bool all, uint64_t token);
	/* Whether it has launches not yet collected. Under the shared lock. */
	bool (*pending)(void *self);
	/* The collection thread, about every millisecond: work ahead of need. Under the lock. */
	void (*tick)(void *self);
	/* Whether it needs a collection now whatever the period (e.g. a pool running low). */
	bool (*collect_due)(void *self);
	/* Reads back what completed and sends it. Under the lock, which it may drop meanwhile. */
	void (*collect)(void *self, enum instr_collect_reason why);
	/* After the final collection: closing lines. No lock. */
	void (*stop)(void *self);
};

/* A context the instrumentations have resources in. */
struct instr_context {
	CUcontext ctx;
	unsigned index;		/* in instr_state.contexts */
	int status[INSTR_MAX];	/* per instrumentation: 0 open, negative errno when it failed */
	void *priv[INSTR_MAX];	/* per instrumentation: its resources there */
};

/* The shared path's state: one per process. */
struct instr_state {
	struct inject_state *st;
	pthread_mutex_t lock; /* tables' inserts, contexts, every hook marked "under the lock" */
	pthread_cond_t wake;  /* the collection thread's */
	bool active;
	struct instrumentation *instr[INSTR_MAX];
	unsigned ninstr;
	struct handle_table funcs, modules;
	struct instr_module *all_modules;
	struct instr_context contexts[INSTR_MAX_CTXS];
	unsigned ncontexts;
	atomic_ullong seq;	  /* launches redirected so far: sync tokens */
	atomic_uint captures;	  /* stream captures open: no redirection, no collection */
	atomic_int sync_seen;	  /* a synchronizing call ended since the last collection */
	atomic_uint syncs;	  /* synchronizing calls ended so far (copy_timing.c's collection) */
	atomic_ullong fallbacks;  /* instrumented launches that failed and ran unchanged */
	int driver_version;
	/* the collection thread (collector.c) */
	pthread_t thread;
	bool thread_started;
	bool stop;
	uint64_t last_collect_ns;
};

/*
 * The shared path and the configured instrumentations (block probes unless
 * GRTRACE_GPU_PROBES=off, then the recorder's GPU eBPF programs if any). 0 or a negative errno with why filled.
 */
int instr_start(struct inject_state *st, char *why, size_t why_len);
/* At exit: the collection thread stopped, every context synchronized, the final collection. */
void instr_stop(struct inject_state *st);

/* Adds an instrumentation (before the first module is seen). 0 or -ENOSPC. */
int instr_register(struct instr_state *is, struct instrumentation *in);

/* Whether any instrumentation has launches not yet collected. Under the lock. */
bool instr_any_pending(struct instr_state *is);

/* A context seen first: opens it for every instrumentation. Under the lock. */
struct instr_context *instr_context_open(struct instr_state *is, CUcontext ctx);

/* The context's entry, opened on first use; NULL when there is no room. Under the lock. */
static inline struct instr_context *instr_context_get(struct instr_state *is, CUcontext ctx)
{
	for (unsigned i = 0; i < is->ncontexts; i++)
		if (is->contexts[i].ctx == ctx)
			return &is->contexts[i];
	return instr_context_open(is, ctx);
}

uint32_t inject_tid(void);

/* Stream identity: per-thread default streams are told apart by thread. */
static inline uint64_t instr_stream_key(CUstream s, bool ptsz)
{
	uintptr_t v = (uintptr_t)s;

	if ((v == 0 && ptsz) || v == 0x2)
		return ((uint64_t)inject_tid() << 8) | 0x2; /* per-thread default stream */
	if (v == 0 || v == 0x1)
		return 0x1; /* legacy default stream */
	return v;
}

#endif
