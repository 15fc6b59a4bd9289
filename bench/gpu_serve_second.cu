// The second CUDA program of bench/gpu_serve.sh: two kernels launched a known number of times
// (argv[1] each) through the runtime, then it waits for a line on stdin so the agent can scrape
// its final counts while it is alive.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void second_add(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void second_scale(float *x) { x[threadIdx.x] *= 2.0f; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	float *x;
	char line[8];

	if (cudaMalloc(&x, 256 * sizeof(float)) != cudaSuccess)
		return 1;
	for (int i = 0; i < n; i++) {
		second_add<<<1, 256>>>(x);
		second_scale<<<1, 256>>>(x);
	}
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	printf("launched %d\n", 2 * n);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	cudaFree(x);
	return 0;
}
