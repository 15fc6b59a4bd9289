/* A thread that takes buffers the caller fills and processes them in order, one at a time. */
#ifndef GRT_BUFFER_WORKER_H
#define GRT_BUFFER_WORKER_H

#include <stddef.h>

/*
 * Two stages of a stream on two cores: the caller fills a buffer while the
 * worker processes the one handed over before (writes it to a file, encodes
 * what it holds). The caller owns its buffers and alternates between two:
 * buffer_worker_hand() waits until the buffer handed over before is done,
 * then hands over this one; the caller must not touch it until the next
 * buffer_worker_hand() or buffer_worker_finish() returns.
 */
struct buffer_worker;

/* process returns 0 or a negative errno; after an error the rest is not processed. */
typedef int (*buffer_worker_fn)(void *ctx, const void *buf, size_t len);

/* NULL when no thread can be started (the caller then processes buffers itself). */
struct buffer_worker *buffer_worker_start(buffer_worker_fn process, void *ctx);
void buffer_worker_hand(struct buffer_worker *w, const void *buf, size_t len);
/* Waits until every buffer handed over is processed: 0 or process's first error. */
int buffer_worker_wait(struct buffer_worker *w);
/* process's first error so far, without waiting: 0 while none failed. */
int buffer_worker_error(struct buffer_worker *w);
/* Waits for the last buffer, stops the thread, frees w: 0 or process's first error. */
int buffer_worker_finish(struct buffer_worker *w);

#endif
