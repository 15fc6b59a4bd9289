/* CUPTI serves one client: when the application brings its own, grtrace steps aside and says so. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/channel.h"
#include "inject/cupti.h"
#include "inject/cupti_decls.h"
#include "inject/cupti_handover.h"
#include "inject/inject.h"
#include "inject/interpose.h"
#include "inject/own_thread.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * CUPTI allows one subscriber, and one pair of activity buffer callbacks, per
 * process: a profiler inside the application (torch.profiler, Nsight's
 * injection, a CUPTI sample) that starts while grtrace holds CUPTI fails with
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and records nothing. The
 * library is preloaded, so its exports below come first: the application's
 * first call that makes it a CUPTI client hands CUPTI over (grtrace's
 * activity flushed and disabled, its subscriber gone, CUPTI's clock back to
 * the default) and then reaches the real CUPTI, which now has room for it.
 * Block probes and the host-side timing go on; what is lost from then on is
 * said in one status line (shown on stderr by the recorder) and a
 * source_status record at the time of the handover.
 */

static pthread_mutex_t handover_lock = PTHREAD_MUTEX_INITIALIZER;

static const char lost_after[] =
    "grtrace's CUPTI kernel, copy and memset records end here; launches of instrumented "
    "kernels keep their block-probe START/END, other kernels (no PTX) and copies are no "
    "longer timed";
static const char lost_all[] =
    "no CUPTI kernel, copy or memset records from grtrace for this process; launches of "
    "instrumented kernels keep their block-probe START/END";

/* The handover's one line, once the ring is open (a client may come before CUDA starts). */
static void report(struct inject_state *st)
{
	struct cupti_handover *h = &st->handover;

	if (!h->why[0] || h->reported || !st->chan.ring || !st->cfg.cupti)
		return;
	h->reported = true;
	/* stamped when it happened, not when it could be sent */
	if (h->had_cupti)
		channel_status_at(&st->chan, INJ_PART_CUPTI_HANDOVER, -EBUSY, h->at_ns,
				  "CUPTI handed over to the application's profiler (it called %s): %s",
				  h->why, lost_after);
	else
		channel_status_at(&st->chan, INJ_PART_CUPTI_HANDOVER, -EBUSY, h->at_ns,
				  "CUPTI left to %s: %s", h->why, lost_all);
}

static void release_job(void *arg)
{
	cupti_release(arg);
}

/* The application's first CUPTI client call: grtrace lets go of CUPTI, once. */
static void hand_over(const char *call)
{
	struct inject_state *st = inject();

	pthread_mutex_lock(&handover_lock);
	if (!st->handover.why[0]) {
		st->handover.at_ns = inject_now_ns();
		st->handover.had_cupti = st->cupti != NULL;
		if (st->cupti) {
			snprintf(st->handover.why, sizeof(st->handover.why), "%s", call);
			own_thread_run(NULL, release_job, st); /* CUPTI's flushing is grtrace's */
		} else if (st->cfg.other_injection[0]) {
			/* the driver started that tool inside cuInit, before grtrace's CUPTI */
			snprintf(st->handover.why, sizeof(st->handover.why),
				 "another tool (CUDA_INJECTION64_PATH=%.200s)",
				 st->cfg.other_injection);
		} else {
			snprintf(st->handover.why, sizeof(st->handover.why),
				 "the application's profiler (it called %s before grtrace started "
				 "CUPTI)",
				 call);
		}
		report(st);
	}
	pthread_mutex_unlock(&handover_lock);
}

void cupti_handover_report(struct inject_state *st)
{
	pthread_mutex_lock(&handover_lock);
	report(st);
	pthread_mutex_unlock(&handover_lock);
}

int cupti_start_unless_taken(struct inject_state *st, bool kernels, char *why, size_t why_len)
{
	int err;

	if (st->cfg.other_injection[0]) {
		cupti_handover_other_tool(st, st->cfg.other_injection);
		return -EALREADY;
	}
	pthread_mutex_lock(&handover_lock);
	err = st->handover.why[0] ? -EALREADY : cupti_start(st, kernels, why, why_len);
	report(st);
	pthread_mutex_unlock(&handover_lock);
	return err;
}

bool cupti_handover_done(const struct inject_state *st)
{
	return st->handover.why[0] != 0;
}

void cupti_handover_other_tool(struct inject_state *st, const char *path)
{
	pthread_mutex_lock(&handover_lock);
	if (!st->handover.why[0]) {
		st->handover.at_ns = inject_now_ns();
		snprintf(st->handover.why, sizeof(st->handover.why),
			 "another tool (CUDA_INJECTION64_PATH=%.200s)", path);
	}
	report(st);
	pthread_mutex_unlock(&handover_lock);
}

bool cupti_handover_other_injection(char *path, size_t len)
{
	const char *set = getenv("CUDA_INJECTION64_PATH");
	char theirs[PATH_MAX], ours[PATH_MAX];
	Dl_info self;

	if (!set || !*set)
		return false;
	snprintf(path, len, "%s", set);
	/* grtrace sets the hook to this library itself (sources/gpu.c) */
	if (!dladdr((void *)cupti_handover_other_injection, &self) || !self.dli_fname ||
	    !realpath(self.dli_fname, ours) || !realpath(set, theirs))
		return strcmp(set, self.dli_fname ? self.dli_fname : "") != 0;
	return strcmp(ours, theirs) != 0;
}

/*
 * The functions a program can also look up with dlsym on its libcupti
 * handle (a binding that loads CUPTI itself): interpose.c hands out our
 * wrapper for them, and the address it was given is kept here for the
 * wrapper to call.
 */
static struct {
	const char *name;
	void *_Atomic real;
} swapped[] = {
#define SWAPPED(fn) {#fn, NULL}
    SWAPPED(cuptiSubscribe),
    SWAPPED(cuptiSubscribe_v2),
    SWAPPED(cuptiActivityRegisterCallbacks),
    SWAPPED(cuptiActivityEnable),
    SWAPPED(cuptiActivityEnableContext),
    SWAPPED(cuptiActivityEnableAndDump),
    SWAPPED(cuptiActivityEnableDriverApi),
    SWAPPED(cuptiActivityEnableRuntimeApi),
#undef SWAPPED
};

static void *noted_real(const char *name)
{
	for (size_t i = 0; i < sizeof(swapped) / sizeof(swapped[0]); i++)
		if (!strcmp(swapped[i].name, name))
			return atomic_load(&swapped[i].real);
	return NULL;
}

/*
 * The real CUPTI function behind one of our exports: in the libcupti grtrace
 * loaded (the application's, when they share the soname), the next object
 * after us, the caller's own dependencies, or a libcupti already loaded.
 * NULL when there is none (the application's call then fails as it would
 * without CUPTI).
 */
static void *real_cupti(const char *name, const void *self, const void *caller)
{
	struct inject_state *st = inject();
	void *p = noted_real(name), *h;
	Dl_info info;

	if (!p && st->cupti && cupti_handle(st))
		p = inject_real_dlsym(cupti_handle(st), name);
	if (!p)
		p = inject_real_dlsym(RTLD_NEXT, name);
	if (!p && dladdr(caller, &info) && info.dli_fname &&
	    (h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
		p = inject_real_dlsym(h, name);
		dlclose(h);
	}
	if (!p && (h = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD))) {
		p = inject_real_dlsym(h, name);
		dlclose(h);
	}
	return p == self ? NULL : p;
}

/* A call of the application's (not grtrace's, not libcupti's own) makes it a CUPTI client. */
static bool from_application(const void *caller)
{
	return !inject_in_tool && !cupti_owns(inject(), caller);
}

#define CUPTI_WRAPPER(name, params, args, types)                                                   \
	EXPORT CUptiResult name params                                                             \
	{                                                                                          \
		const void *caller = __builtin_return_address(0);                                  \
		CUptiResult(*real) types = real_cupti(#name, (void *)name, caller);                \
                                                                                                   \
		if (from_application(caller))                                                      \
			hand_over(#name);                                                          \
		return real ? real args : CUPTI_ERROR_NOT_INITIALIZED;                             \
	}

CUPTI_WRAPPER(cuptiSubscribe,
	      (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void *userdata),
	      (subscriber, callback, userdata), (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))
CUPTI_WRAPPER(cuptiSubscribe_v2,
	      (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void *userdata,
	       void *params),
	      (subscriber, callback, userdata, params),
	      (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *, void *))
CUPTI_WRAPPER(cuptiActivityRegisterCallbacks,
	      (CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc done),
	      (requested, done), (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))
CUPTI_WRAPPER(cuptiActivityEnable, (int kind), (kind), (int))
CUPTI_WRAPPER(cuptiActivityEnableContext, (CUcontext ctx, int kind), (ctx, kind), (CUcontext, int))
CUPTI_WRAPPER(cuptiActivityEnableAndDump, (int kind), (kind), (int))
CUPTI_WRAPPER(cuptiActivityEnableDriverApi, (uint32_t cbid, uint8_t enable), (cbid, enable),
	      (uint32_t, uint8_t))
CUPTI_WRAPPER(cuptiActivityEnableRuntimeApi, (uint32_t cbid, uint8_t enable), (cbid, enable),
	      (uint32_t, uint8_t))

void *cupti_handover_swap(const char *name, void *real, const void *caller)
{
	static void *const wrappers[] = {
	    (void *)cuptiSubscribe,
	    (void *)cuptiSubscribe_v2,
	    (void *)cuptiActivityRegisterCallbacks,
	    (void *)cuptiActivityEnable,
	    (void *)cuptiActivityEnableContext,
	    (void *)cuptiActivityEnableAndDump,
	    (void *)cuptiActivityEnableDriverApi,
	    (void *)cuptiActivityEnableRuntimeApi,
	};

	_Static_assert(sizeof(wrappers) / sizeof(wrappers[0]) == sizeof(swapped) / sizeof(swapped[0]),
		       "one wrapper per swapped name, in the same order");
	if (!from_application(caller))
		return real;
	for (size_t i = 0; i < sizeof(swapped) / sizeof(swapped[0]); i++)
		if (!strcmp(swapped[i].name, name) && real != wrappers[i]) {
			atomic_store(&swapped[i].real, real);
			return wrappers[i];
		}
	return real;
}
