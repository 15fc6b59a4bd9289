/* The library's threads: a worker that makes driver calls for application threads, and the rest. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include "inject/inject.h"
#include "inject/own_thread.h"
#include "inject/call_record.h"
#include "sources/source.h"

struct own_start {
	void *(*fn)(void *);
	void *arg;
	char name[16];
};

/* One request at a time: the worker serves whichever application thread asked. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t posted, done;
	pthread_t thread;
	bool started, failed;
	void (*fn)(void *); /* the pending request, NULL when none */
	void *arg;
	CUcontext ctx;
	unsigned long served, taken; /* requests finished; the one being served */
} worker = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .posted = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

static __thread bool own_thread __attribute__((tls_model("initial-exec")));

bool own_thread_is_mine(void)
{
	return own_thread;
}

void own_thread_enter(const char *name)
{
	char full[32]; /* the kernel keeps 15 characters */

	own_thread = true;
	inject_enter_tool(); /* for good: everything these threads do is the library's */
	snprintf(full, sizeof(full), GRT_OWN_THREAD_PREFIX "%s", name);
	prctl(PR_SET_NAME, full);
	call_record_comm_changed();
}

/*
 * An application capturing a CUDA graph in global mode (the default) forbids
 * every thread in that mode from potentially unsafe driver calls (module
 * loads, synchronizations, allocations): one such call fails and breaks the
 * application's capture. The library's threads make those calls at any time
 * (calibration, JIT, collection), so they run in relaxed mode, which the
 * driver provides for exactly such threads. Their own streams are
 * non-blocking, so none of their work depends on a capturing stream.
 */
static void relax_capture_mode(void)
{
	struct inject_driver *d = &inject()->drv;
	int mode = CU_STREAM_CAPTURE_MODE_RELAXED;

	if (d->cuThreadExchangeStreamCaptureMode)
		d->cuThreadExchangeStreamCaptureMode(&mode);
}

static void *started(void *arg)
{
	struct own_start s = *(struct own_start *)arg;

	free(arg);
	own_thread_enter(s.name);
	relax_capture_mode();
	return s.fn(s.arg);
}

struct record_job {
	CUevent event;
	CUstream stream;
	CUresult res;
};

static void record_job(void *arg)
{
	struct record_job *j = arg;

	j->res = inject()->drv.cuEventRecord(j->event, j->stream);
}

CUresult own_thread_record_event(CUevent e, CUstream stream, bool lend)
{
	struct record_job j = {e, stream, CUDA_ERROR_INVALID_VALUE};

	if (lend)
		own_thread_lend(record_job, &j);
	else
		record_job(&j);
	return j.res;
}

int own_thread_start(pthread_t *thread, const char *name, void *(*fn)(void *), void *arg)
{
	struct own_start *s = malloc(sizeof(*s));

	if (!s)
		return -EAGAIN;
	*s = (struct own_start){.fn = fn, .arg = arg};
	snprintf(s->name, sizeof(s->name), "%s", name);
	if (pthread_create(thread, NULL, started, s)) {
		free(s);
		return -EAGAIN;
	}
	return 0;
}

static void *worker_main(void *unused)
{
	struct inject_driver *d = &inject()->drv;

	pthread_mutex_lock(&worker.lock);
	for (;;) {
		void (*fn)(void *);
		CUcontext popped;

		while (!worker.fn)
			pthread_cond_wait(&worker.posted, &worker.lock);
		fn = worker.fn;
		pthread_mutex_unlock(&worker.lock);
		/* the application thread's context, so the work lands where it asked for it */
		if (worker.ctx && !d->cuCtxPushCurrent_v2(worker.ctx)) {
			fn(worker.arg);
			d->cuCtxPopCurrent_v2(&popped);
		} else {
			fn(worker.arg);
		}
		pthread_mutex_lock(&worker.lock);
		worker.fn = NULL;
		worker.served++;
		pthread_cond_broadcast(&worker.done);
	}
	return unused;
}

void own_thread_run(CUcontext ctx, void (*fn)(void *), void *arg)
{
	unsigned long ticket;

	if (own_thread) {
		fn(arg);
		return;
	}
	pthread_mutex_lock(&worker.lock);
	if (!worker.started && !worker.failed) {
		worker.failed = own_thread_start(&worker.thread, "worker", worker_main, NULL) != 0;
		worker.started = !worker.failed;
		if (worker.started)
			pthread_detach(worker.thread);
	}
	if (worker.failed) {
		/* no thread to hand it to: better done here, and visible, than not at all */
		pthread_mutex_unlock(&worker.lock);
		fn(arg);
		return;
	}
	while (worker.fn)
		pthread_cond_wait(&worker.done, &worker.lock);
	worker.fn = fn;
	worker.arg = arg;
	worker.ctx = ctx;
	ticket = ++worker.taken;
	pthread_cond_signal(&worker.posted);
	while (worker.served < ticket)
		pthread_cond_wait(&worker.done, &worker.lock);
	pthread_mutex_unlock(&worker.lock);
}

void own_thread_after_fork(void)
{
	pthread_mutex_init(&worker.lock, NULL);
	pthread_cond_init(&worker.posted, NULL);
	pthread_cond_init(&worker.done, NULL);
	worker.started = worker.failed = false;
	worker.fn = NULL;
	worker.served = worker.taken = 0;
}

void own_thread_lend(void (*fn)(void *), void *arg)
{
	char name[32] = "";

	if (own_thread || prctl(PR_GET_NAME, name)) {
		fn(arg);
		return;
	}
	/*
	 * The in-process cuda path is not told: fn calls the driver directly, not
	 * through a wrapper that would record it, and the name is back before the
	 * thread's next recorded call. Told, every recorded call after an
	 * instrumented launch would read the name again (a system call).
	 */
	prctl(PR_SET_NAME, GRT_OWN_THREAD_PREFIX "lent");
	fn(arg);
	prctl(PR_SET_NAME, name);
}
