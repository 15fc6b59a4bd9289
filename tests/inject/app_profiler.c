/* A CUDA program with a profiler inside (a CUPTI client), started before CUDA or in mid-run. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "app_common.h"
#include "cupti_client.h"

/*
 * Usage: app_profiler start|mid N. "start": the profiler subscribes before
 * the first CUDA call; "mid": after N launches and a synchronize, as
 * torch.profiler does when it starts at step k. Then N launches it should
 * all see. Prints the CUPTI results of its calls and what it saw, which must
 * be the same with and without grtrace recording.
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

int main(int argc, char **argv)
{
	bool at_start = argc > 1 && !strcmp(argv[1], "start");
	int n = argc > 2 ? atoi(argv[2]) : 10, failed = 0;
	void *ctx, *mod, *add;

	if (at_start)
		client_start("vector_add");
	if (cuInit(0) || cuCtxCreate_v2(&ctx, 0, 0) || cuModuleLoadData(&mod, module_ptx) ||
	    cuModuleGetFunction(&add, mod, "vector_add"))
		return 1;
	if (!at_start) {
		failed |= launch(add, n);
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
