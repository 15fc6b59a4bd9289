// Ground truth: host-bound. 50 us kernels, the host sleeps 1 ms between launches and never waits.
#include <unistd.h>
#include "common.cuh"

int main()
{
	int *sink;
	CHECK(cudaMalloc(&sink, sizeof(int)));
	for (int i = 0; i < 300; i++) {
		spin_kernel<<<1, 32>>>(50000, sink);
		CHECK(cudaGetLastError());
		usleep(1000); // host work the GPU waits for
	}
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(sink));
	printf("host_bound: 300 launches, 50 us each, 1 ms apart\n");
	return 0;
}
