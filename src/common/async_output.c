/* Background writing of full output buffers: one buffer in flight at a time. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/async_output.h"

struct async_output {
	FILE *out;
	bool threaded;		/* false: buffers go out through the FILE, synchronously */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int fd;
	const void *pending;	/* a buffer the thread is writing or is to write */
	size_t pending_len;
	bool stop;
	int error;		/* first write error, negative errno */
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t done = write(fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return done < 0 ? -errno : -EIO;
		p += done;
		n -= (size_t)done;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct async_output *a = arg;
	const void *p;
	size_t n;
	int err;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->pending && !a->stop)
			pthread_cond_wait(&a->cond, &a->lock);
		if (!a->pending)
			break;
		p = a->pending;
		n = a->pending_len;
		pthread_mutex_unlock(&a->lock);
		/* after an error the rest is dropped: the output is broken anyway */
		err = a->error ? 0 : write_all(a->fd, p, n);
		pthread_mutex_lock(&a->lock);
		if (err && !a->error)
			a->error = err;
		a->pending = NULL;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Starts the thread; false, with nothing left to undo, when it cannot. */
static bool thread_start(struct async_output *a)
{
	if (pthread_mutex_init(&a->lock, NULL))
		return false;
	if (pthread_cond_init(&a->cond, NULL)) {
		pthread_mutex_destroy(&a->lock);
		return false;
	}
	if (pthread_create(&a->thread, NULL, writer_main, a)) {
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		return false;
	}
	return true;
}

struct async_output *async_output_start(FILE *out)
{
	struct async_output *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->out = out;
	fflush(out);
	a->fd = fileno(out);
	if (a->fd >= 0)
		a->threaded = thread_start(a);
	return a;
}

void async_output_write(struct async_output *a, const void *buf, size_t len)
{
	if (!len)
		return;
	if (!a->threaded) {
		if (fwrite_unlocked(buf, 1, len, a->out) != len && !a->error)
			a->error = errno ? -errno : -EIO;
		return;
	}
	pthread_mutex_lock(&a->lock);
	while (a->pending)
		pthread_cond_wait(&a->cond, &a->lock);
	a->pending = buf;
	a->pending_len = len;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

int async_output_finish(struct async_output *a)
{
	int err;

	if (!a)
		return 0;
	if (a->threaded) {
		pthread_mutex_lock(&a->lock);
		a->stop = true;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
	}
	err = a->error;
	free(a);
	return err;
}
