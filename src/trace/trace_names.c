/* Names of the format's enumerations. */
#include <inttypes.h>
#include <stdio.h>
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

/* Linux's numbers, the same on every architecture grtrace runs on (x86-64, arm64). */
static const char *const signal_names[] = {
	[1] = "SIGHUP",	  [2] = "SIGINT",    [3] = "SIGQUIT",	[4] = "SIGILL",	   [5] = "SIGTRAP",
	[6] = "SIGABRT",  [7] = "SIGBUS",    [8] = "SIGFPE",	[9] = "SIGKILL",   [10] = "SIGUSR1",
	[11] = "SIGSEGV", [12] = "SIGUSR2",  [13] = "SIGPIPE",	[14] = "SIGALRM",  [15] = "SIGTERM",
	[16] = "SIGSTKFLT", [17] = "SIGCHLD", [18] = "SIGCONT", [19] = "SIGSTOP",  [20] = "SIGTSTP",
	[21] = "SIGTTIN", [22] = "SIGTTOU",  [23] = "SIGURG",	[24] = "SIGXCPU",  [25] = "SIGXFSZ",
	[26] = "SIGVTALRM", [27] = "SIGPROF", [28] = "SIGWINCH", [29] = "SIGIO",	   [30] = "SIGPWR",
	[31] = "SIGSYS",
};

const char *grt_describe_exit(int32_t exit_code, uint32_t signal, bool core_dumped, char *buf,
			      size_t len)
{
	if (signal && signal < sizeof(signal_names) / sizeof(signal_names[0]))
		snprintf(buf, len, "killed by %s%s", signal_names[signal],
			 core_dumped ? " (core dumped)" : "");
	else if (signal)
		snprintf(buf, len, "killed by signal %u%s", signal, core_dumped ? " (core dumped)" : "");
	else
		snprintf(buf, len, "exited with status %d", exit_code);
	return buf;
}

const char *grt_unknown_kernel_name(uint64_t function, char *buf, size_t len)
{
	if (function)
		snprintf(buf, len, "func@0x%" PRIx64, function);
	else
		snprintf(buf, len, "func@unknown");
	return buf;
}
