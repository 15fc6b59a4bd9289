/* What a copy or memset call puts on the device, read from its name and arguments. */
#include <string.h>
#include "inject/copy_shape.h"
#include "inject/cuda_decls.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"

#define CU_MEMORYTYPE_ARRAY 3
#define CU_MEMORYTYPE_UNIFIED 4

static bool has(const char *name, const char *part)
{
	return strstr(name, part) != NULL;
}

/* The byte-count argument of the linear copies (cuda.h's argument order). */
static int linear_bytes_arg(const char *name)
{
	if (has(name, "AtoA") || has(name, "Peer"))
		return 4; /* (dst, dstoff|dstctx, src, srcoff|srcctx, bytes) */
	if (has(name, "DtoA") || has(name, "AtoD") || has(name, "HtoA") || has(name, "AtoH"))
		return 3; /* (one side, offset, other side, bytes) */
	return 2;	  /* (dst, src, bytes) */
}

static uint8_t kind_of_name(const char *name)
{
	if (has(name, "Peer"))
		return GRT_COPY_PEER;
	if (has(name, "HtoD") || has(name, "HtoA"))
		return GRT_COPY_HTOD;
	if (has(name, "DtoH") || has(name, "AtoH"))
		return GRT_COPY_DTOH;
	if (has(name, "DtoD") || has(name, "DtoA") || has(name, "AtoD") || has(name, "AtoA"))
		return GRT_COPY_DTOD;
	return GRT_COPY_UNKNOWN;
}

bool copy_shape_of(const char *name, unsigned nargs, struct copy_shape *out)
{
	bool async = has(name, "Async"), memset_op = !strncmp(name, "cuMemset", 8);

	memset(out, 0, sizeof(*out));
	if (!nargs || (!memset_op && strncmp(name, "cuMemcpy", 8)))
		return false;
	out->ptsz = has(name, "_ptsz") || has(name, "_ptds");
	if (async) {
		out->stream_from = COPY_STREAM_ARG;
		out->stream_arg = (uint8_t)(nargs - 1);
	} else {
		out->stream_from = out->ptsz ? COPY_STREAM_PER_THREAD : COPY_STREAM_LEGACY;
	}
	if (memset_op) {
		out->kind = GRT_GPU_COPY_MEMSET;
		out->elem = has(name, "D8") ? 1 : has(name, "D16") ? 2 : 4;
		out->bytes_from = has(name, "D2D") ? COPY_BYTES_2D_SET : COPY_BYTES_COUNT;
		out->bytes_arg = 2; /* (dst, value, count) */
		return true;
	}
	out->kind = kind_of_name(name);
	if (has(name, "3DBatch")) {
		out->bytes_from = COPY_BYTES_NONE;
	} else if (has(name, "Batch")) {
		out->bytes_from = COPY_BYTES_BATCH;
	} else if (has(name, "2D")) {
		out->bytes_from = COPY_BYTES_2D_DESC;
		out->kind_by_desc = true;
	} else if (has(name, "3D")) {
		out->bytes_from = COPY_BYTES_3D_DESC;
		out->kind_by_desc = !has(name, "Peer");
	} else {
		out->bytes_from = COPY_BYTES_ARG;
		out->bytes_arg = (uint8_t)linear_bytes_arg(name);
		out->kind_by_pointers = !strcmp(name, "cuMemcpy") || !strncmp(name, "cuMemcpy_", 9) ||
					!strncmp(name, "cuMemcpyAsync", 13);
	}
	return true;
}

uint64_t copy_shape_bytes(const struct copy_shape *s, const uint64_t *args)
{
	const uint8_t *desc = (const uint8_t *)(uintptr_t)args[0];
	const uint64_t *sizes, *extent;
	uint64_t n = 0;

	switch (s->bytes_from) {
	case COPY_BYTES_ARG:
		return args[s->bytes_arg];
	case COPY_BYTES_COUNT:
		return args[s->bytes_arg] * s->elem;
	case COPY_BYTES_2D_SET:
		return args[3] * args[4] * s->elem;
	case COPY_BYTES_2D_DESC:
		if (!desc)
			return 0;
		return ((const CUDA_MEMCPY2D *)desc)->WidthInBytes *
		       ((const CUDA_MEMCPY2D *)desc)->Height;
	case COPY_BYTES_3D_DESC:
		if (!desc)
			return 0;
		extent = (const uint64_t *)(desc + COPY_3D_OFF_WIDTH);
		return extent[0] * extent[1] * (extent[2] ? extent[2] : 1);
	case COPY_BYTES_BATCH:
		sizes = (const uint64_t *)(uintptr_t)args[2];
		for (uint64_t i = 0; sizes && i < args[3]; i++)
			n += sizes[i];
		return n;
	default:
		return 0;
	}
}

uint64_t copy_shape_stream(const struct copy_shape *s, const uint64_t *args)
{
	if (s->stream_from == COPY_STREAM_ARG)
		return args[s->stream_arg];
	return s->stream_from == COPY_STREAM_PER_THREAD ? 0x2 : 0x1;
}

uint32_t copy_shape_kind_of_types(unsigned src_type, unsigned dst_type)
{
	/* pageable host memory is not the driver's: no type */
	bool src_dev = src_type == CU_MEMORYTYPE_DEVICE || src_type == CU_MEMORYTYPE_ARRAY;
	bool dst_dev = dst_type == CU_MEMORYTYPE_DEVICE || dst_type == CU_MEMORYTYPE_ARRAY;

	if (src_type == CU_MEMORYTYPE_UNIFIED || dst_type == CU_MEMORYTYPE_UNIFIED)
		return GRT_COPY_DEFAULT;
	if (src_dev && dst_dev)
		return GRT_COPY_DTOD;
	if (src_dev)
		return GRT_COPY_DTOH;
	if (dst_dev)
		return GRT_COPY_HTOD;
	return GRT_COPY_HTOH;
}

uint32_t copy_shape_desc_kind(const struct copy_shape *s, const uint64_t *args)
{
	const uint8_t *desc = (const uint8_t *)(uintptr_t)args[0];

	if (!s->kind_by_desc || !desc)
		return s->kind;
	if (s->bytes_from == COPY_BYTES_2D_DESC)
		return copy_shape_kind_of_types(
		    (unsigned)((const CUDA_MEMCPY2D *)desc)->srcMemoryType,
		    (unsigned)((const CUDA_MEMCPY2D *)desc)->dstMemoryType);
	return copy_shape_kind_of_types(*(const uint32_t *)(desc + COPY_3D_OFF_SRC_TYPE),
					*(const uint32_t *)(desc + COPY_3D_OFF_DST_TYPE));
}
