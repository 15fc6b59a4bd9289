/* Names of the format's enumerations. */
#include "trace/grt_format.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/trace_names.h"

static const char *const source_names[GRT_SRC_MAX] = {
#define GRT_SOURCE_NAME(upper, name, id) [GRT_SRC_##upper] = #name,
	GRT_SOURCE_IDS(GRT_SOURCE_NAME)
#undef GRT_SOURCE_NAME
};

const char *grt_source_name(uint32_t source)
{
	return GRT_NAME_OF(source_names, source);
}

static const char *const end_reasons[] = {
	[GRT_END_TARGET_EXIT] = "target-exit", [GRT_END_SIGNAL] = "signal",
	[GRT_END_DURATION] = "duration",       [GRT_END_IDLE] = "idle-timeout",
	[GRT_END_WRITE_ERROR] = "write-error", [GRT_END_SOURCE_ERROR] = "source-error",
};

const char *grt_end_reason_name(uint32_t reason)
{
	return GRT_NAME_OF(end_reasons, reason);
}

static const char *const cuda_api_names[GRT_CUDA_API_COUNT] = {
#define GRT_CUDA_API_NAME(suffix, symbol, probe_class) [GRT_CUDA_##suffix] = symbol,
	GRT_CUDA_API_LIST(GRT_CUDA_API_NAME)
#undef GRT_CUDA_API_NAME
};

const char *grt_cuda_api_name(uint32_t api)
{
	return GRT_NAME_OF(cuda_api_names, api);
}

static const char *const alloc_kinds[] = {
	[GRT_ALLOC_DEVICE] = "device", [GRT_ALLOC_ASYNC] = "async",
	[GRT_ALLOC_MANAGED] = "managed", [GRT_ALLOC_HOST] = "host",
	[GRT_ALLOC_HOST_ALLOC] = "host_alloc", [GRT_ALLOC_PITCH] = "pitch",
	[GRT_ALLOC_POOL_ASYNC] = "pool_async",
};

const char *grt_alloc_kind_name(uint32_t kind)
{
	return GRT_NAME_OF(alloc_kinds, kind);
}

static const char *const copy_kinds[] = {
	[GRT_COPY_UNKNOWN] = "Unknown", [GRT_COPY_HTOD] = "HtoD", [GRT_COPY_DTOH] = "DtoH",
	[GRT_COPY_DTOD] = "DtoD",	[GRT_COPY_HTOH] = "HtoH", [GRT_COPY_PEER] = "Peer",
	[GRT_COPY_DEFAULT] = "Default",
};

const char *grt_copy_kind_name(uint32_t kind)
{
	return GRT_NAME_OF(copy_kinds, kind);
}

static const char *const sync_kinds[] = {
	[GRT_SYNC_CTX] = "ctx",
	[GRT_SYNC_STREAM] = "stream",
	[GRT_SYNC_EVENT] = "event",
	[GRT_SYNC_STREAM_WAIT_EVENT] = "stream_wait_event",
	[GRT_SYNC_EVENT_RECORD] = "event_record",
	[GRT_SYNC_EVENT_QUERY] = "event_query",
	[GRT_SYNC_STREAM_QUERY] = "stream_query",
};

const char *grt_sync_kind_name(uint32_t kind)
{
	return GRT_NAME_OF(sync_kinds, kind);
}

static const char *const module_kinds[] = {
	[GRT_MODULE_LOAD_FILE] = "module_load_file", [GRT_MODULE_LOAD_DATA] = "module_load_data",
	[GRT_MODULE_LOAD_FATBIN] = "module_load_fatbin", [GRT_MODULE_UNLOAD] = "module_unload",
	[GRT_LIBRARY_LOAD_DATA] = "library_load_data", [GRT_LIBRARY_LOAD_FILE] = "library_load_file",
	[GRT_LIBRARY_UNLOAD] = "library_unload",
};

const char *grt_module_kind_name(uint32_t kind)
{
	return GRT_NAME_OF(module_kinds, kind);
}
