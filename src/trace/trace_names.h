/* Names of the format's enumerations, for every tool that prints them. */
#ifndef GRT_TRACE_NAMES_H
#define GRT_TRACE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Looks a value up in a sparse name table; "unknown" outside it or for holes. */
#define GRT_NAME_OF(table, value)                                                                  \
	grt_name_of((table), sizeof(table) / sizeof((table)[0]), (value))

static inline const char *grt_name_of(const char *const *table, uint32_t count, uint32_t value)
{
	return value < count && table[value] ? table[value] : "unknown";
}

const char *grt_source_name(uint32_t source);
const char *grt_end_reason_name(uint32_t reason);
const char *grt_cuda_api_name(uint32_t api);
const char *grt_alloc_kind_name(uint32_t kind);
const char *grt_copy_kind_name(uint32_t kind);
const char *grt_sync_kind_name(uint32_t kind);
const char *grt_module_kind_name(uint32_t kind);
/* "exited with status 7", "killed by SIGSEGV (core dumped)": how a process ended, into buf. */
const char *grt_describe_exit(int32_t exit_code, uint32_t signal, bool core_dumped, char *buf,
			      size_t len);

/*
 * The one name of a kernel whose name was never recorded, everywhere it is
 * shown (report tables, jobs, snoop): "func@0x..." after its function handle,
 * "func@unknown" without one. Returns buf.
 */
const char *grt_unknown_kernel_name(uint64_t function, char *buf, size_t len);

#endif
