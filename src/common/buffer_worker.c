/* The worker thread of a two-stage stream: one handed-over buffer in flight at a time. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include "common/buffer_worker.h"

struct buffer_worker {
	buffer_worker_fn process;
	void *ctx;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const void *pending;	/* the buffer the thread processes or is to process */
	size_t pending_len;
	bool stop;
	int error;		/* the first error, negative errno */
};

static void *worker_main(void *arg)
{
	struct buffer_worker *w = arg;
	const void *p;
	size_t n;
	int err;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->pending && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->pending)
			break;
		p = w->pending;
		n = w->pending_len;
		pthread_mutex_unlock(&w->lock);
		/* after an error the rest is dropped: the output is broken anyway */
		err = w->error ? 0 : w->process(w->ctx, p, n);
		pthread_mutex_lock(&w->lock);
		if (err && !w->error)
			w->error = err;
		w->pending = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct buffer_worker *buffer_worker_start(buffer_worker_fn process, void *ctx)
{
	struct buffer_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->process = process;
	w->ctx = ctx;
	if (pthread_mutex_init(&w->lock, NULL))
		goto no_lock;
	if (pthread_cond_init(&w->cond, NULL))
		goto no_cond;
	if (pthread_create(&w->thread, NULL, worker_main, w))
		goto no_thread;
	return w;
no_thread:
	pthread_cond_destroy(&w->cond);
no_cond:
	pthread_mutex_destroy(&w->lock);
no_lock:
	free(w);
	return NULL;
}

void buffer_worker_hand(struct buffer_worker *w, const void *buf, size_t len)
{
	if (!len)
		return;
	pthread_mutex_lock(&w->lock);
	while (w->pending)
		pthread_cond_wait(&w->cond, &w->lock);
	w->pending = buf;
	w->pending_len = len;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

int buffer_worker_wait(struct buffer_worker *w)
{
	int err;

	pthread_mutex_lock(&w->lock);
	while (w->pending)
		pthread_cond_wait(&w->cond, &w->lock);
	err = w->error;
	pthread_mutex_unlock(&w->lock);
	return err;
}

int buffer_worker_error(struct buffer_worker *w)
{
	int err;

	pthread_mutex_lock(&w->lock);
	err = w->error;
	pthread_mutex_unlock(&w->lock);
	return err;
}

int buffer_worker_finish(struct buffer_worker *w)
{
	int err;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	err = w->error;
	free(w);
	return err;
}
