// Ground truth: queue-wait. A 50 ms kernel, then 1000 short kernels queued behind it on one stream.
#include "common.cuh"

int main()
{
	int *sink;
	cudaStream_t s;
	CHECK(cudaMalloc(&sink, sizeof(int)));
	CHECK(cudaStreamCreate(&s));
	for (int round = 0; round < 3; round++) {
		// 1000 launches stay under the driver's queue depth: the calls return at once
		spin_kernel<<<1, 32, 0, s>>>(50000000, sink);
		for (int i = 0; i < 1000; i++)
			spin_kernel<<<1, 32, 0, s>>>(20000, sink);
		CHECK(cudaGetLastError());
		CHECK(cudaStreamSynchronize(s));
	}
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(sink));
	printf("queue_bound: 3 x (50 ms + 1000 x 20 us) on one stream\n");
	return 0;
}
