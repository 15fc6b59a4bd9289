/* Background writing of full output buffers: a buffer worker that write(2)s them. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/async_output.h"
#include "common/buffer_worker.h"

struct async_output {
	FILE *out;
	int fd;
	struct buffer_worker *worker;	/* NULL: buffers go out through the FILE, synchronously */
	int error;			/* the fallback's first error */
};

static int write_all(void *ctx, const void *buf, size_t n)
{
	const struct async_output *a = ctx;
	const char *p = buf;

	while (n) {
		ssize_t done = write(a->fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return done < 0 ? -errno : -EIO;
		p += done;
		n -= (size_t)done;
	}
	return 0;
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
		a->worker = buffer_worker_start(write_all, a);
	return a;
}

void async_output_write(struct async_output *a, const void *buf, size_t len)
{
	if (a->worker) {
		buffer_worker_hand(a->worker, buf, len);
		return;
	}
	if (len && fwrite_unlocked(buf, 1, len, a->out) != len && !a->error)
		a->error = errno ? -errno : -EIO;
}

int async_output_finish(struct async_output *a)
{
	int err;

	if (!a)
		return 0;
	err = a->worker ? buffer_worker_finish(a->worker) : a->error;
	free(a);
	return err;
}
