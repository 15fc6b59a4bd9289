/* Data-parallel ranks on fake devices: one process per rank, all-reduces, one rank late on purpose. */
#include <stdlib.h>
#include "nccl_workload.h"

/*
 * nccl_ranks [RANKS [LATE_RANK [LATE_MS]]]: RANKS processes (default 2),
 * rank r on device r; each runs ITERATIONS steps of a "step" kernel then an
 * all-reduce of 1 Mi floats (4 MiB). Before the all-reduce of step
 * LATE_STEP, rank LATE_RANK (default 1) sleeps LATE_MS (default 200) ms:
 * the other ranks' all-reduce #2 waits that long for it.
 */
#define ITERATIONS 3
#define LATE_STEP 1
#define ELEMENTS (1u << 20)

static int run_rank(const ncclUniqueId *id, int rank, const struct nccl_workload_args *a)
{
	CUcontext ctx;
	CUmodule module;
	CUfunction step;
	CUdeviceptr buf;
	ncclComm_t comm;
	char bus_id[32];

	expect(cuInit(0), 0, "cuInit");
	expect(cuDevicePrimaryCtxRetain(&ctx, rank), 0, "primary");
	expect(cuCtxSetCurrent(ctx), 0, "set");
	expect(cuDeviceGetPCIBusId(bus_id, sizeof(bus_id), rank), 0, "bus id");
	expect(ncclCommInitRank(&comm, a->ranks, *id, rank), ncclSuccess, "ncclCommInitRank");
	expect(cuModuleLoad(&module, "/opt/fake/train.cubin"), 0, "module");
	expect(cuModuleGetFunction(&step, module, "step"), 0, "step");
	expect(cuMemAlloc_v2(&buf, ELEMENTS * 4), 0, "alloc");
	for (int i = 0; i < ITERATIONS; i++) {
		expect(cuLaunchKernel(step, 64, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL), 0, "step");
		if (i == LATE_STEP && rank == a->late_rank)
			usleep((useconds_t)a->late_ms[0] * 1000);
		expect(ncclAllReduce((void *)buf, (void *)buf, ELEMENTS, ncclFloat32, ncclSum, comm,
				     NULL),
		       ncclSuccess, "ncclAllReduce");
		expect(cuStreamSynchronize(NULL), 0, "sync");
	}
	expect(ncclCommDestroy(comm), ncclSuccess, "ncclCommDestroy");
	return 0;
}

int main(int argc, char **argv)
{
	struct nccl_workload_args a = {
	    .ranks = argc > 1 ? atoi(argv[1]) : 2,
	    .late_rank = argc > 2 ? atoi(argv[2]) : 1,
	    .late_ms = {argc > 3 ? atoi(argv[3]) : 200},
	};

	if (a.ranks < 1 || a.ranks > FAKE_MAX_DEVICES)
		return 2;
	return nccl_workload_run(&a, run_rank);
}
