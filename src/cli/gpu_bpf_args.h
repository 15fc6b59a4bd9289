/* The --bpf objects of record and snoop: collected from the options, loaded before the command starts. */
#ifndef GRT_CLI_GPU_BPF_ARGS_H
#define GRT_CLI_GPU_BPF_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include "gpubpf/gpubpf.h"
#include "sources/session.h"

struct gpu_bpf_args {
	const char *paths[GPUBPF_MAX_OBJECTS];
	size_t n;
	struct gpubpf_bundle *bundles; /* n of them once loaded; NULL before */
	uint64_t load_ns;	       /* how long loading, verifying and translating took */
};

/* One --bpf PATH of command cmd: 0, or GRT_EXIT_USAGE after saying there are too many. */
int gpu_bpf_args_add(struct gpu_bpf_args *a, const char *cmd, const char *path);

/*
 * Loads, verifies and translates every object (nothing when none): 0, or
 * GRT_EXIT_FAILURE after printing the first refusal's line as cmd's.
 */
int gpu_bpf_args_load(struct gpu_bpf_args *a, const char *cmd);

/* Hands the loaded objects to a session's gpu source. */
void gpu_bpf_args_config(const struct gpu_bpf_args *a, struct grt_session_config *cfg);

void gpu_bpf_args_free(struct gpu_bpf_args *a);

#endif
