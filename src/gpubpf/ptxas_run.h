/* Compiling PTX with the CUDA toolkit's ptxas, when it is installed, and reading its statistics. */
#ifndef GRT_GPUBPF_PTXAS_RUN_H
#define GRT_GPUBPF_PTXAS_RUN_H

#include <stddef.h>

struct ptxas_entry_stats {
	char name[128];
	unsigned registers;
	unsigned instructions; /* SASS instructions (16 bytes each from sm_70 on) */
	unsigned stack_bytes;
};

struct ptxas_result {
	int exit_status;   /* ptxas's; 0 accepted */
	char message[256]; /* the first error line when rejected */
	struct ptxas_entry_stats entries[64];
	size_t nr_entries;
};

/* The ptxas to use ($PTXAS, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin) into buf, or NULL. */
const char *ptxas_find(char *buf, size_t len);

/*
 * Compiles ptx for arch with `ptxas -v` in a scratch directory. Returns 0 and
 * fills *res (res->exit_status says whether ptxas accepted it), or a negative
 * errno when ptxas could not be run.
 */
int ptxas_compile(const char *ptxas, const char *ptx, const char *arch, struct ptxas_result *res);

#endif
