// What recording adds to a driver-API launch on a GPU, paired inside one process
// (launch_pairs.h): an empty kernel, batches through the wrapper and through libcuda itself.
// usage: launch_pairs [LAUNCHES_PER_BATCH] [PAIRS]
// prints: pairs=N launches_wrapped=N wrapped_ns=MEDIAN direct_ns=MEDIAN added_ns=MEDIAN p25 p75
#include <cuda.h>
#include <cuda_runtime.h>
#include "launch_pairs.h"

extern "C" __global__ void grt_empty(int *p)
{
	if (p && threadIdx.x == 1024)
		*p = 1;
}

static void sync_device(void)
{
	cudaDeviceSynchronize();
}

int main(int argc, char **argv)
{
	int per_batch = argc > 1 ? atoi(argv[1]) : 256, pairs = argc > 2 ? atoi(argv[2]) : 200;
	CUfunction f;
	int *p = nullptr;
	void *params[] = {&p};

	if (cudaFree(0) != cudaSuccess || cudaGetFuncBySymbol(&f, (const void *)grt_empty) != cudaSuccess) {
		fprintf(stderr, "launch_pairs: no CUDA device\n");
		return 1;
	}
	auto direct = (pairs_launch_fn)pairs_libcuda_symbol("cuLaunchKernel");
	if (!direct) {
		fprintf(stderr, "launch_pairs: cuLaunchKernel not found in libcuda's symbol table\n");
		return 1;
	}
	return pairs_run((pairs_launch_fn)cuLaunchKernel, direct, f, params, per_batch, pairs, sync_device);
}
