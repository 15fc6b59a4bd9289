/* Filling a new trace's file header: host, kernel, driver, CUDA version, command line. */
#ifndef GRT_RECORD_HEADER_H
#define GRT_RECORD_HEADER_H

#include <sys/types.h>
#include "trace/grt_format.h"

/* libcuda_path may be NULL (CUDA version then unknown); argv is the traced command or NULL. */
void record_header_fill(struct grt_file_header *h, const char *libcuda_path, pid_t pid,
			char *const *argv, uint32_t sources_mask);

#endif
