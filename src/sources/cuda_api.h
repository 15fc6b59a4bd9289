/* Per-API facts of the cuda source, derived from GRT_CUDA_API_LIST: probe class, ABI, program
 * names. */
#ifndef GRT_CUDA_API_H
#define GRT_CUDA_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "sources/cuda.h"
#include "trace/records_cuda.h"

/* enum cuda_probe_class of an api id; CUDA_CLASS_COUNT for ids outside the list. */
enum cuda_probe_class cuda_api_class(uint32_t api);
/* The exported symbol probed for api ("cuMemAlloc_v2"), NULL outside the list. */
const char *cuda_api_symbol(uint32_t api);
/* Whether api is a pre-3.2 entry point whose device pointers and sizes are 32 bits wide. */
bool cuda_api_is_legacy32(uint32_t api);
/* The BPF programs of a class (cuda.bpf.c). */
enum cuda_program_kind {
	CUDA_PROGRAM_ENTER,   /* uprobe at the entry */
	CUDA_PROGRAM_EXIT,    /* uretprobe */
	CUDA_PROGRAM_SESSION, /* uprobe session (both ends), launch classes only */
};

/* A class's program name: "enter_mem_alloc", "exit_mem_alloc", "session_launch". */
int cuda_class_program_name(enum cuda_probe_class cls, enum cuda_program_kind kind, char *buf,
			    size_t len);
/* The launch classes: kernels, kernels through CUlaunchConfig, graphs (--launch-returns). */
bool cuda_class_is_launch(enum cuda_probe_class cls);

#endif
