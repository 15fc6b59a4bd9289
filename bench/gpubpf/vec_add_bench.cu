// The overhead benchmark's program: LAUNCHES (10,000) launches of vec_add over N (1M) floats,
// after one warm-up launch (the instrumented module's JIT happens there, not in the timing);
// prints the host time of the launches up to the final synchronization, and a hash of the result.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

static double now_s()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1 << 20, launches = argc > 2 ? atoi(argv[2]) : 10000;
	int blocks = (n + 255) / 256;
	size_t bytes = (size_t)n * sizeof(float);
	float *h = (float *)malloc(bytes), *a, *b, *c;
	unsigned long long hash = 0xcbf29ce484222325ULL;
	double t0, t1;

	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 1000) * 0.5f;
	cudaMalloc(&a, bytes);
	cudaMalloc(&b, bytes);
	cudaMalloc(&c, bytes);
	cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice);
	cudaMemcpy(b, h, bytes, cudaMemcpyHostToDevice);
	vec_add<<<blocks, 256>>>(a, b, c, n);
	cudaDeviceSynchronize();
	t0 = now_s();
	for (int l = 0; l < launches; l++)
		vec_add<<<blocks, 256>>>(a, b, c, n);
	cudaDeviceSynchronize();
	t1 = now_s();
	cudaMemcpy(h, c, bytes, cudaMemcpyDeviceToHost);
	for (size_t i = 0; i < bytes; i++)
		hash = (hash ^ ((unsigned char *)h)[i]) * 0x100000001b3ULL;
	printf("launches %d n %d seconds %.6f result %016llx\n", launches, n, t1 - t0, hash);
	return cudaGetLastError() != cudaSuccess;
}
