/* A CUDA program with a profiler inside (a CUPTI client), started before CUDA or in mid-run. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "app_common.h"
#include "cupti_client.h"

/*
 * Usage: app_profiler start|mid|mid-dlsym N. "start": the profiler subscribes
 * before the first CUDA call; "mid": after N launches and a synchronize, as
 * torch.profiler does when it starts at step k; "mid-dlsym": the same through
 * entry points it looks up with dlsym on its libcupti handle, as a binding
 * that loads CUPTI itself does. Then N launches it should all see. Prints the
 * CUPTI results of its calls and what it saw, which must be the same with and
 * without grtrace recording.
 */


static int launch(void *f, int n)
{
	CUdeviceptr a = 0;
	int len = 64, failed = 0;
	void *params[] = {&a, &a, &a, &len};

	for (int i = 0; i < n; i++)
		failed |= cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
	return failed | cuCtxSynchronize();
}

/* The client's entry points from its own lookup in libcupti. */
static void start_looked_up(void)
{
	void *cupti = dlopen("libcupti.so.13", RTLD_NOW);
	struct cupti_entry_points ep = {0};

	if (cupti) {
		*(void **)&ep.subscribe = dlsym(cupti, "cuptiSubscribe");
		*(void **)&ep.register_callbacks = dlsym(cupti, "cuptiActivityRegisterCallbacks");
		*(void **)&ep.enable = dlsym(cupti, "cuptiActivityEnable");
	}
	if (!ep.subscribe || !ep.register_callbacks || !ep.enable) {
		fprintf(stderr, "app_profiler: no libcupti.so.13 to look CUPTI up in\n");
		exit(1);
	}
	client_start_with(&ep, "vector_add");
}

int main(int argc, char **argv)
{
	bool at_start = argc > 1 && !strcmp(argv[1], "start");
	bool looked_up = argc > 1 && !strcmp(argv[1], "mid-dlsym");
	int n = argc > 2 ? atoi(argv[2]) : 10, failed = 0;
	void *ctx, *mod, *add;

	if (at_start)
		client_start("vector_add");
	if (cuInit(0) || cuCtxCreate_v2(&ctx, 0, 0) || cuModuleLoadData(&mod, module_ptx) ||
	    cuModuleGetFunction(&add, mod, "vector_add"))
		return 1;
	if (!at_start) {
		failed |= launch(add, n);
		if (looked_up)
			start_looked_up();
		else
			client_start("vector_add");
	}
	failed |= launch(add, n);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	printf("subscribe=%d register=%d enable=%d kernels_seen=%u foreign_buffers=%u "
	       "other_clock=%u failed=%d\n",
	       client.subscribe, client.registered, client.enabled,
	       atomic_load(&client.kernels_seen), atomic_load(&client.foreign_buffers),
	       atomic_load(&client.other_clock), failed);
	return failed;
}
