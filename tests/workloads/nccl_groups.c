/* Ranks that split their communicator and pass data point to point, two of them late on purpose. */
#include <stdlib.h>
#include "nccl_workload.h"

/*
 * nccl_groups [SPLIT_LATE_MS [P2P_LATE_MS]]: 4 processes, rank r on device r.
 * - ncclCommSplit with color r % 2 and key -r: {0, 2} and {1, 3}, numbered by key, so
 *   parent rank 2 is rank 0 of the first and parent rank 3 rank 0 of the second.
 * - two all-reduces in each half; parent rank 3 comes SPLIT_LATE_MS (default 300) late to the
 *   first: in its half, rank 1 waits that long for rank 0.
 * - an all-reduce of everyone (the halves meet again), then a ring of sends and receives: rank r
 *   sends to r + 1 and receives from r - 1; rank 2 comes P2P_LATE_MS (default 150) late, so
 *   rank 1's send and rank 3's receive wait for it.
 */
#define RANKS 4
#define ELEMENTS (1u << 16)

static int run_rank(const ncclUniqueId *id, int rank, const struct nccl_workload_args *a)
{
	CUcontext ctx;
	CUdeviceptr buf;
	ncclComm_t world, half;

	expect(cuInit(0), 0, "cuInit");
	expect(cuDevicePrimaryCtxRetain(&ctx, rank), 0, "primary");
	expect(cuCtxSetCurrent(ctx), 0, "set");
	expect(cuMemAlloc_v2(&buf, ELEMENTS * 4), 0, "alloc");
	expect(ncclCommInitRank(&world, RANKS, *id, rank), ncclSuccess, "ncclCommInitRank");
	expect(ncclCommSplit(world, rank % 2, -rank, &half, NULL), ncclSuccess, "ncclCommSplit");
	for (int i = 0; i < 2; i++) {
		if (i == 0 && rank == 3)
			usleep((useconds_t)a->late_ms[0] * 1000);
		expect(ncclAllReduce((void *)buf, (void *)buf, ELEMENTS, ncclFloat32, ncclSum, half, NULL),
		       ncclSuccess, "ncclAllReduce (half)");
	}
	expect(ncclAllReduce((void *)buf, (void *)buf, ELEMENTS, ncclFloat32, ncclSum, world, NULL),
	       ncclSuccess, "ncclAllReduce (world)");
	if (rank == 2)
		usleep((useconds_t)a->late_ms[1] * 1000);
	expect(ncclSend((void *)buf, ELEMENTS, ncclFloat32, (rank + 1) % RANKS, world, NULL), ncclSuccess,
	       "ncclSend");
	expect(ncclRecv((void *)buf, ELEMENTS, ncclFloat32, (rank + RANKS - 1) % RANKS, world, NULL),
	       ncclSuccess, "ncclRecv");
	expect(cuStreamSynchronize(NULL), 0, "sync");
	expect(ncclCommDestroy(half), ncclSuccess, "ncclCommDestroy (half)");
	expect(ncclCommDestroy(world), ncclSuccess, "ncclCommDestroy (world)");
	return 0;
}

int main(int argc, char **argv)
{
	struct nccl_workload_args a = {
	    .ranks = RANKS,
	    .late_ms = {argc > 1 ? atoi(argv[1]) : 300, argc > 2 ? atoi(argv[2]) : 150},
	};

	return nccl_workload_run(&a, run_rank);
}
