// Ground truth: exec-long-tail. 60 launches of one kernel take 5 ms; input 37 makes one take 50 ms.
#include "common.cuh"

// The kernel's work depends on its input, like a data-dependent loop.
__global__ void work_kernel(int input, int *sink)
{
	unsigned long long ns = input == 37 ? 50000000ull : 5000000ull;
	unsigned long long start = globaltimer();
	while (globaltimer() - start < ns)
		;
	if (threadIdx.x == 0)
		*sink = input;
}

int main()
{
	int *sink;
	cudaStream_t s;
	CHECK(cudaMalloc(&sink, sizeof(int)));
	CHECK(cudaStreamCreate(&s));
	work_kernel<<<1, 32, 0, s>>>(-1, sink); // warm-up: first-launch costs stay out of the loop
	CHECK(cudaStreamSynchronize(s));
	for (int i = 0; i < 60; i++) {
		work_kernel<<<1, 32, 0, s>>>(i, sink);
		CHECK(cudaStreamSynchronize(s));
	}
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(sink));
	printf("long_tail: 60 x 5 ms, input 37 takes 50 ms\n");
	return 0;
}
