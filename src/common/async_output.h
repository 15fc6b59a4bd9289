/* Writing full buffers to a file from a background thread while the caller fills the next one. */
#ifndef GRT_ASYNC_OUTPUT_H
#define GRT_ASYNC_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

/*
 * For outputs of gigabytes: the writers (JSON, protobuf) format into one
 * buffer while a thread write(2)s the previous one, so formatting and the
 * kernel's copy overlap. The caller owns its two buffers and alternates:
 * async_output_write() waits until the buffer handed over before is written,
 * then hands over this one and returns; the caller must not touch it until
 * the next async_output_write() or async_output_finish() returns.
 *
 * Without a descriptor (a memory stream) or a thread, buffers go through
 * the FILE, synchronously: same bytes, same calls.
 */
struct async_output;

/* Flushes out first (what went through the FILE comes first). NULL when out of memory. */
struct async_output *async_output_start(FILE *out);
void async_output_write(struct async_output *a, const void *buf, size_t len);
/* Waits for the last buffer, stops the thread, frees a; 0 or the first write error (-errno). */
int async_output_finish(struct async_output *a);

#endif
