/* The --bpf objects of record and snoop: collected from the options, loaded before the command starts. */
#include <stdlib.h>
#include "cli/gpu_bpf_args.h"
#include "common/clock.h"
#include "common/log.h"

int gpu_bpf_args_add(struct gpu_bpf_args *a, const char *cmd, const char *path)
{
	if (a->n == GPUBPF_MAX_OBJECTS) {
		grt_error("%s: more than %d --bpf objects; combine programs into fewer objects", cmd,
			  GPUBPF_MAX_OBJECTS);
		return GRT_EXIT_USAGE;
	}
	a->paths[a->n++] = path;
	return 0;
}

int gpu_bpf_args_load(struct gpu_bpf_args *a, const char *cmd)
{
	uint64_t t0 = grt_monotonic_ns();
	char err[512];

	if (!a->n)
		return 0;
	a->bundles = calloc(a->n, sizeof(*a->bundles));
	if (!a->bundles) {
		grt_error("%s: out of memory", cmd);
		return GRT_EXIT_FAILURE;
	}
	if (gpubpf_bundles_load(a->paths, a->n, a->bundles, err, sizeof(err))) {
		free(a->bundles);
		a->bundles = NULL;
		grt_error("%s: %s", cmd, err);
		return GRT_EXIT_FAILURE;
	}
	a->load_ns = grt_monotonic_ns() - t0;
	return 0;
}

void gpu_bpf_args_config(const struct gpu_bpf_args *a, struct grt_session_config *cfg)
{
	cfg->gpu_bpf = a->bundles;
	cfg->nr_gpu_bpf = a->bundles ? a->n : 0;
	cfg->gpu_bpf_load_ns = a->load_ns;
}

void gpu_bpf_args_free(struct gpu_bpf_args *a)
{
	if (a->bundles)
		gpubpf_bundles_free(a->bundles, a->n);
	free(a->bundles);
	a->bundles = NULL;
}
