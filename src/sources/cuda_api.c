/* Tables over GRT_CUDA_API_LIST: which probe class decodes each api and how its ABI looks. */
#include <ctype.h>
#include <stdio.h>
#include "sources/cuda_api.h"

struct api_info {
	enum cuda_probe_class cls;
	const char *symbol;
	const char *class_name; /* the class token as written in the list: "MEM_ALLOC" */
};

/* A class token missing from enum cuda_probe_class fails to compile here. */
static const struct api_info apis[GRT_CUDA_API_COUNT] = {
#define CUDA_API_INFO(suffix, sym, probe_class)                                                    \
	[GRT_CUDA_##suffix] = {                                                                    \
	    .cls = CUDA_CLASS_##probe_class, .symbol = sym, .class_name = #probe_class},
    GRT_CUDA_API_LIST(CUDA_API_INFO)
#undef CUDA_API_INFO
};

/*
 * The unsuffixed originals of entry points that got a _v2 in CUDA 3.2, when
 * CUdeviceptr and byte counts grew from 32 to 64 bits.
 */
static const uint16_t legacy32_apis[] = {
    GRT_CUDA_MEM_ALLOC,		GRT_CUDA_MEM_ALLOC_HOST,    GRT_CUDA_MEM_ALLOC_PITCH,
    GRT_CUDA_MEM_FREE,		GRT_CUDA_MEMCPY_HTOD,	    GRT_CUDA_MEMCPY_DTOH,
    GRT_CUDA_MEMCPY_DTOD,	GRT_CUDA_MEMCPY_HTOD_ASYNC, GRT_CUDA_MEMCPY_DTOH_ASYNC,
    GRT_CUDA_MEMCPY_DTOD_ASYNC, GRT_CUDA_MEMCPY_2D,	    GRT_CUDA_MEMCPY_2D_UNALIGNED,
    GRT_CUDA_MEMCPY_2D_ASYNC,	GRT_CUDA_MEMCPY_3D,	    GRT_CUDA_MEMCPY_3D_ASYNC,
    GRT_CUDA_MEMSET_D8,		GRT_CUDA_MEMSET_D16,	    GRT_CUDA_MEMSET_D32,
};

enum cuda_probe_class cuda_api_class(uint32_t api)
{
	if (api == GRT_CUDA_API_UNKNOWN || api >= GRT_CUDA_API_COUNT)
		return CUDA_CLASS_COUNT;
	return apis[api].cls;
}

const char *cuda_api_symbol(uint32_t api)
{
	if (api == GRT_CUDA_API_UNKNOWN || api >= GRT_CUDA_API_COUNT)
		return NULL;
	return apis[api].symbol;
}

bool cuda_api_is_legacy32(uint32_t api)
{
	for (size_t i = 0; i < sizeof(legacy32_apis) / sizeof(legacy32_apis[0]); i++)
		if (legacy32_apis[i] == api)
			return true;
	return false;
}

bool cuda_class_is_launch(enum cuda_probe_class cls)
{
	return cls == CUDA_CLASS_LAUNCH || cls == CUDA_CLASS_LAUNCH_EX ||
	       cls == CUDA_CLASS_GRAPH_LAUNCH;
}

int cuda_class_program_name(enum cuda_probe_class cls, enum cuda_program_kind kind, char *buf,
			    size_t len)
{
	static const char *const prefixes[] = {
	    [CUDA_PROGRAM_ENTER] = "enter",
	    [CUDA_PROGRAM_EXIT] = "exit",
	    [CUDA_PROGRAM_SESSION] = "session",
	};
	const char *token = NULL;
	size_t at;

	for (uint32_t api = 1; api < GRT_CUDA_API_COUNT && !token; api++)
		if (apis[api].cls == cls)
			token = apis[api].class_name;
	if (!token || (unsigned)kind > CUDA_PROGRAM_SESSION ||
	    (kind == CUDA_PROGRAM_SESSION && !cuda_class_is_launch(cls)))
		return -1;
	at = (size_t)snprintf(buf, len, "%s_", prefixes[kind]);
	for (; *token && at + 1 < len; token++)
		buf[at++] = (char)tolower((unsigned char)*token);
	buf[at < len ? at : len - 1] = 0;
	return 0;
}
