/* Protocol buffers wire format into double buffers that a thread writes out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/async_output.h"
#include "common/pb_writer.h"

int pb_writer_init(struct pb_writer *w, FILE *out, size_t cap)
{
	*w = (struct pb_writer){ .cap = cap, .spare_cap = cap };
	w->buf = malloc(cap);
	w->spare = malloc(cap);
	if (!cap || !w->buf || !w->spare || !(w->out = async_output_start(out))) {
		free(w->buf);
		free(w->spare);
		*w = (struct pb_writer){ 0 };
		return -ENOMEM;
	}
	return 0;
}

static void fail(struct pb_writer *w, int err)
{
	if (!w->error)
		w->error = err;
}

static bool grow(struct pb_writer *w, size_t need)
{
	size_t cap = w->cap * 2 > need ? w->cap * 2 : need;
	uint8_t *bigger = realloc(w->buf, cap);

	if (!bigger) {
		fail(w, -ENOMEM);
		return false;
	}
	w->buf = bigger;
	w->cap = cap;
	return true;
}

/*
 * The buffer is full: everything before the outermost open message goes
 * out, and that message's start moves to the front of the other buffer.
 * A message larger than a buffer grows the buffer.
 */
void pb_make_room(struct pb_writer *w, size_t n)
{
	size_t keep = w->depth ? w->tag_at[0] : w->len;
	size_t tail = w->len - keep;
	uint8_t *full = w->buf;
	size_t full_cap = w->cap;

	if (w->error)
		return;
	if (keep) {
		async_output_write(w->out, full, keep);
		w->written += keep;
		w->buf = w->spare;
		w->cap = w->spare_cap;
		w->spare = full;
		w->spare_cap = full_cap;
		w->len = 0;
		if (tail > w->cap && !grow(w, tail))
			return;
		/* the thread only reads the part before keep */
		memcpy(w->buf, full + keep, tail);
		w->len = tail;
		for (int i = 0; i < w->depth; i++) {
			w->tag_at[i] -= keep;
			w->len_at[i] -= keep;
		}
	}
	if (w->cap - w->len < n)
		grow(w, w->len + n);
}

void pb_bytes(struct pb_writer *w, uint32_t field, const void *p, size_t n)
{
	uint8_t *d = pb_room(w, 20 + n);
	size_t k;

	if (!d)
		return;
	k = pb_put_field_len(d, field, n);
	memcpy(d + k, p, n);
	w->len += k + n;
}

void pb_raw(struct pb_writer *w, const void *p, size_t n)
{
	uint8_t *d = pb_room(w, n);

	if (d) {
		memcpy(d, p, n);
		w->len += n;
	}
}

void pb_begin(struct pb_writer *w, uint32_t field)
{
	uint8_t *d = pb_room(w, 11);

	if (w->depth == PB_MAX_DEPTH) {
		fail(w, -E2BIG); /* a writer bug, not the data's */
		return;
	}
	w->tag_at[w->depth] = w->len;
	if (d)
		w->len += pb_put_varint(d, (uint64_t)field << 3 | PB_LEN);
	w->len_at[w->depth] = w->len;
	if (d)
		w->len++;
	w->depth++;
}

void pb_end(struct pb_writer *w)
{
	size_t at, body, k;
	uint8_t len_bytes[10];

	if (!w->depth) {
		fail(w, -EINVAL);
		return;
	}
	at = w->len_at[w->depth - 1];
	body = w->len - at - 1;
	if (body >= 0x80 && !w->error) {
		k = pb_put_varint(len_bytes, body);
		/* the message stays open while making room: its start must stay in the buffer */
		if (pb_room(w, k - 1)) {
			at = w->len_at[w->depth - 1];
			memmove(w->buf + at + k, w->buf + at + 1, body);
			memcpy(w->buf + at, len_bytes, k);
			w->len += k - 1;
		}
	} else if (!w->error) {
		w->buf[at] = (uint8_t)body;
	}
	w->depth--;
}

int pb_writer_finish(struct pb_writer *w)
{
	int err;

	if (w->depth)
		fail(w, -EINVAL);
	if (w->out) {
		async_output_write(w->out, w->buf, w->len);
		w->written += w->len;
		err = async_output_finish(w->out);
		fail(w, err);
	}
	free(w->buf);
	free(w->spare);
	err = w->error;
	*w = (struct pb_writer){ 0 };
	return err;
}
