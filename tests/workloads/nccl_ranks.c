/* Data-parallel ranks on fake devices: one process per rank, all-reduces, one rank late on purpose. */
#include <stdlib.h>
#include <sys/wait.h>
#include "fake_nccl.h"
#include "workload.h"

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

static int run_rank(const ncclUniqueId *id, int ranks, int rank, int late_rank, int late_ms)
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
	expect(ncclCommInitRank(&comm, ranks, *id, rank), ncclSuccess, "ncclCommInitRank");
	expect(cuModuleLoad(&module, "/opt/fake/train.cubin"), 0, "module");
	expect(cuModuleGetFunction(&step, module, "step"), 0, "step");
	expect(cuMemAlloc_v2(&buf, ELEMENTS * 4), 0, "alloc");
	for (int i = 0; i < ITERATIONS; i++) {
		expect(cuLaunchKernel(step, 64, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL), 0, "step");
		if (i == LATE_STEP && rank == late_rank)
			usleep((useconds_t)late_ms * 1000);
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
	int ranks = argc > 1 ? atoi(argv[1]) : 2;
	int late_rank = argc > 2 ? atoi(argv[2]) : 1;
	int late_ms = argc > 3 ? atoi(argv[3]) : 200;
	ncclUniqueId id;
	int failed = 0, status;
	char count[8];

	if (ranks < 1 || ranks > FAKE_MAX_DEVICES)
		return 2;
	snprintf(count, sizeof(count), "%d", ranks);
	setenv("FAKE_CUDA_DEVICES", count, 1);
	workload_gate();
	expect(ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
	for (int r = 0; r < ranks; r++) {
		pid_t pid = fork();

		if (pid < 0)
			return 3;
		if (!pid)
			exit(run_rank(&id, ranks, r, late_rank, late_ms));
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	return failed ? 1 : 0;
}
