/* The library's driver work runs on its own threads (grtrace-*), never on the application's. */
#ifndef GRT_INJECT_OWN_THREAD_H
#define GRT_INJECT_OWN_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include "inject/cuda_decls.h"

/*
 * The cuda source records every driver call by thread; calls on threads named
 * GRT_OWN_THREAD_PREFIX are grtrace's own (GRT_CUDA_F_OWN), calls on any
 * other thread are the application's. So the library's own driver calls
 * (loading its modules and instrumented copies, allocating and formatting
 * probe buffers, calibrating, collecting) go through these:
 *
 *  - own_thread_run(): from an application thread, runs fn on the
 *    library's worker thread (grtrace-worker) with ctx current there, and
 *    waits for it; on one of the library's threads it just calls fn;
 *  - own_thread_start(): a thread of the library's for a job of its own;
 *  - own_thread_lend(): for the one call that must be made on the
 *    application's thread itself (a completion event recorded right behind
 *    a launch on the thread's own default stream): the thread carries a
 *    grtrace-* name for the duration of the call, so the call is recorded as
 *    grtrace's, and gets its name back.
 *
 * fn must not wait for anything the caller holds (the caller may hold the
 * instrumentations' lock: fn never takes it).
 */
void own_thread_run(CUcontext ctx, void (*fn)(void *), void *arg);

void own_thread_lend(void (*fn)(void *), void *arg);
/*
 * cuEventRecord(e, stream) through own_thread_lend(): an event in the
 * application's stream order, on its thread, as grtrace's call. lend false:
 * without the loan (a benchmark switch). The driver's result.
 */
CUresult own_thread_record_event(CUevent e, CUstream stream, bool lend);

/* Starts a named thread (GRT_OWN_THREAD_PREFIX + name) running fn(arg). 0 or -EAGAIN. */
int own_thread_start(pthread_t *thread, const char *name, void *(*fn)(void *), void *arg);

/* Whether the calling thread is one of the library's. */
bool own_thread_is_mine(void);

/* In a forked child: the worker did not survive the fork. */
void own_thread_after_fork(void);

/* Called first by every thread of the library: names it and marks it own. */
void own_thread_enter(const char *name);

#endif
