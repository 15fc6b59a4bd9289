/* Live one-line renderings of the kernel sources' records for `grtrace snoop syscall|fence|xid`. */
#ifndef GRT_SNOOP_KERNEL_H
#define GRT_SNOOP_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

/* The column header for a snoop of source ("syscall", "fence", "xid"); nothing for others. */
void snoop_kernel_header(FILE *out, const char *source);

/*
 * Prints rec as one compact line when it is a syscall, nv_ioctl, fence or xid
 * record and returns true; returns false for any other type (print it the
 * generic way). base_ns is subtracted from timestamps. An nv_ioctl line
 * follows its syscall's line as an indented decoding of the same call.
 */
bool snoop_kernel_print(FILE *out, const struct grt_record *rec, const struct grt_strings *strings,
			uint64_t base_ns);

#endif
