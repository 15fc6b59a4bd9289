/*
 * launch_pairs (bench/gpu_inproc/launch_pairs.h) on the fake driver, any machine: with
 * FAKE_CUDA_LAUNCH_TOUCH_KB set, each fake launch works through that much memory, as a real
 * launch does between the two halves of the recording wrapper.
 * usage: fake_launch_pairs [LAUNCHES_PER_BATCH] [PAIRS]
 * build: cc -O2 -Itests/fake_libcuda -Ibench -o fake_launch_pairs bench/fake_launch_pairs.c
 *        -LBUILD/fixtures/fake -l:libcuda.so.1 -Wl,-rpath,BUILD/fixtures/fake
 */
#define _GNU_SOURCE
#include "fake_cuda.h"
#include "gpu_inproc/launch_pairs.h"

static void no_sync(void)
{
}

int main(int argc, char **argv)
{
	int per_batch = argc > 1 ? atoi(argv[1]) : 256, pairs = argc > 2 ? atoi(argv[2]) : 200;
	pairs_launch_fn direct = (pairs_launch_fn)pairs_libcuda_symbol("cuLaunchKernel");
	CUmodule module;
	CUfunction kernel;
	void *params[] = {NULL};

	if (!direct || cuModuleLoad(&module, "/opt/fake/storm.cubin") ||
	    cuModuleGetFunction(&kernel, module, "storm")) {
		fprintf(stderr, "fake_launch_pairs: no fake libcuda\n");
		return 1;
	}
	return pairs_run((pairs_launch_fn)cuLaunchKernel, direct, kernel, params, per_batch, pairs,
			 no_sync);
}
