/* A streaming writer of the protocol buffers wire format: varints, fixed64, strings, nested messages. */
#ifndef GRT_PB_WRITER_H
#define GRT_PB_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PB_MAX_DEPTH 8

struct async_output;

/*
 * A nested message's length comes before its bytes, and is only known at
 * its end. The writer reserves one byte for it, the minimal varint of any
 * message under 128 bytes (nearly all of a trace's), and patches it at
 * pb_end(); a longer message shifts its body by the extra length bytes then,
 * within the buffer. So the output is canonical (no padded varints) and the
 * writer still streams: buffers go out while the file is written, and a
 * buffer that fills up in the middle of a message keeps only that message's
 * start for the next one.
 */
struct pb_writer {
	uint8_t *buf;		/* being filled */
	size_t len;
	size_t cap;
	uint8_t *spare;		/* the buffer the output thread has or had */
	size_t spare_cap;
	size_t tag_at[PB_MAX_DEPTH];	/* where each open message's tag starts */
	size_t len_at[PB_MAX_DEPTH];	/* where its reserved length byte is */
	int depth;
	struct async_output *out;
	int error;		/* first error, negative errno: the output is incomplete */
	uint64_t written;	/* bytes handed to the output so far */
};

enum pb_wire_type {
	PB_VARINT = 0,
	PB_FIXED64 = 1,
	PB_LEN = 2,
};

/* cap: the size of each of the two buffers. Returns 0 or -ENOMEM. */
int pb_writer_init(struct pb_writer *w, FILE *out, size_t cap);
/* Writes the rest, stops the output thread, frees the buffers: 0 or the first error. */
int pb_writer_finish(struct pb_writer *w);

void pb_make_room(struct pb_writer *w, size_t n);

/* Room for n more bytes (n small), or NULL after an error. */
static inline uint8_t *pb_room(struct pb_writer *w, size_t n)
{
	if (__builtin_expect(w->cap - w->len < n, 0)) {
		pb_make_room(w, n);
		if (w->cap - w->len < n)
			return NULL;
	}
	return w->buf + w->len;
}

static inline size_t pb_put_varint(uint8_t *d, uint64_t v)
{
	size_t n = 0;

	/* tags, iids, small deltas: one or two bytes, and constant tags fold away */
	if (v < 0x80) {
		d[0] = (uint8_t)v;
		return 1;
	}
	if (v < 0x4000) {
		d[0] = (uint8_t)(v | 0x80);
		d[1] = (uint8_t)(v >> 7);
		return 2;
	}
	while (v >= 0x80) {
		d[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	d[n++] = (uint8_t)v;
	return n;
}

/*
 * Encoding into a caller's buffer, for messages built aside (d needs 20
 * bytes for a varint field, 18 for a fixed64 one, 20 for a length prefix).
 */
static inline size_t pb_put_field_varint(uint8_t *d, uint32_t field, uint64_t v)
{
	size_t n = pb_put_varint(d, (uint64_t)field << 3 | PB_VARINT);

	return n + pb_put_varint(d + n, v);
}

static inline size_t pb_put_field_fixed64(uint8_t *d, uint32_t field, uint64_t v)
{
	size_t n = pb_put_varint(d, (uint64_t)field << 3 | PB_FIXED64);

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v); /* the format is little-endian */
#endif
	__builtin_memcpy(d + n, &v, 8);
	return n + 8;
}

/* The tag and length of a length-delimited field whose len bytes follow. */
static inline size_t pb_put_field_len(uint8_t *d, uint32_t field, size_t len)
{
	size_t n = pb_put_varint(d, (uint64_t)field << 3 | PB_LEN);

	return n + pb_put_varint(d + n, len);
}

static inline void pb_varint(struct pb_writer *w, uint32_t field, uint64_t v)
{
	uint8_t *d = pb_room(w, 20);
	size_t n;

	if (!d)
		return;
	n = pb_put_varint(d, (uint64_t)field << 3 | PB_VARINT);
	w->len += n + pb_put_varint(d + n, v);
}

/* int64 fields: negative values are ten-byte varints, as the format says. */
static inline void pb_int64(struct pb_writer *w, uint32_t field, int64_t v)
{
	pb_varint(w, field, (uint64_t)v);
}

static inline void pb_bool(struct pb_writer *w, uint32_t field, bool v)
{
	pb_varint(w, field, v);
}

static inline void pb_fixed64(struct pb_writer *w, uint32_t field, uint64_t v)
{
	uint8_t *d = pb_room(w, 18);

	if (d)
		w->len += pb_put_field_fixed64(d, field, v);
}

/* A length-delimited field: a string, bytes, or a message encoded aside. */
void pb_bytes(struct pb_writer *w, uint32_t field, const void *p, size_t n);
/* Bytes already in wire format (fields encoded aside), as they are. */
void pb_raw(struct pb_writer *w, const void *p, size_t n);

static inline void pb_string(struct pb_writer *w, uint32_t field, const char *s)
{
	pb_bytes(w, field, s, __builtin_strlen(s));
}

/* A nested message in field: pb_begin(), its fields, pb_end(). */
void pb_begin(struct pb_writer *w, uint32_t field);
void pb_end(struct pb_writer *w);

#endif
