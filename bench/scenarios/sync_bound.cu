// Ground truth: sync-bound. Tiny kernels with a stream sync after every launch.
#include "common.cuh"

int main()
{
	int *sink;
	cudaStream_t s;
	CHECK(cudaMalloc(&sink, sizeof(int)));
	CHECK(cudaStreamCreate(&s));
	for (int i = 0; i < 3000; i++) {
		spin_kernel<<<1, 32, 0, s>>>(2000, sink);
		CHECK(cudaStreamSynchronize(s)); // the GPU runs dry while the host waits and relaunches
	}
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(sink));
	printf("sync_bound: 3000 x (2 us kernel + sync)\n");
	return 0;
}
