/* What a copy or memset call puts on the device, read from its name and arguments. */
#ifndef GRT_INJECT_COPY_SHAPE_H
#define GRT_INJECT_COPY_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

/* CUDA_MEMCPY3D and CUDA_MEMCPY3D_PEER (cuda.h): 11 words a side, then the extent */
#define COPY_3D_OFF_SRC_TYPE 32
#define COPY_3D_OFF_DST_TYPE 120
#define COPY_3D_OFF_WIDTH 176

/* Where a call's byte count comes from. */
enum copy_bytes_from {
	COPY_BYTES_NONE,	/* not known from the call (3D batches): 0 */
	COPY_BYTES_ARG,		/* args[bytes_arg] */
	COPY_BYTES_COUNT,	/* memsets: args[bytes_arg] elements of elem bytes */
	COPY_BYTES_2D_SET,	/* 2D memsets: width args[3] x height args[4] elements */
	COPY_BYTES_2D_DESC,	/* args[0] is a CUDA_MEMCPY2D */
	COPY_BYTES_3D_DESC,	/* args[0] is a CUDA_MEMCPY3D or CUDA_MEMCPY3D_PEER */
	COPY_BYTES_BATCH,	/* args[2] is an array of args[3] sizes */
};

/* Which stream a call's work goes to. */
enum copy_stream_from {
	COPY_STREAM_ARG,	 /* args[stream_arg] (asynchronous calls: their last argument) */
	COPY_STREAM_LEGACY,	 /* the legacy default stream (synchronous calls) */
	COPY_STREAM_PER_THREAD,	 /* the thread's default stream (synchronous _ptds calls) */
};

struct copy_shape {
	uint8_t kind;	 /* enum grt_copy_kind, GRT_GPU_COPY_MEMSET for memsets */
	uint8_t bytes_from, stream_from;
	uint8_t bytes_arg, stream_arg;
	uint8_t elem;	 /* memsets: bytes per element */
	bool ptsz;	 /* per-thread default stream semantics for stream 0 */
	bool kind_by_pointers; /* cuMemcpy/cuMemcpyAsync: the pointers' memory types decide */
	bool kind_by_desc;     /* 2D/3D copies: the descriptor's memory types decide */
};

/*
 * The shape of driver entry point name taking nargs integer arguments; false
 * when it is not a copy or memset (graph launches), or not one this knows.
 */
bool copy_shape_of(const char *name, unsigned nargs, struct copy_shape *out);

/* The bytes a call of this shape moves or sets (0 when not known from its arguments). */
uint64_t copy_shape_bytes(const struct copy_shape *s, const uint64_t *args);
/* The stream handle its work goes to (0x1 legacy, 0x2 per-thread default). */
uint64_t copy_shape_stream(const struct copy_shape *s, const uint64_t *args);
/*
 * The kind of a 2D/3D copy from its descriptor's memory types; kind of the
 * pointers for cuMemcpy/cuMemcpyAsync given their memory types (CU_MEMORYTYPE_*,
 * 0 when the driver does not know the pointer: pageable host memory).
 */
uint32_t copy_shape_kind_of_types(unsigned src_type, unsigned dst_type);
uint32_t copy_shape_desc_kind(const struct copy_shape *s, const uint64_t *args);

#endif
