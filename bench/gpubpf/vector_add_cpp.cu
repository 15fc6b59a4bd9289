// bpftime's example kernels, C++-mangled as its programs name them: vectorAdd(a, b, c) with a
// fixed n (_Z9vectorAddPKfS0_Pf) and vectorAdd(a, b, c, n) (_Z9vectorAddPKfS0_Pfi); LAUNCHES of
// each over N floats. Prints a hash of both results: a traced run must print the same.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__constant__ int fixed_n;

// -DFIXED_N=10000: the first kernel compares with a literal instead, so that it uses no module
// variable and can be instrumented (bench/gpu_bpf_recheck.sh runs bpftime's programs on both).
#ifdef FIXED_N
#define KERNEL_N FIXED_N
#else
#define KERNEL_N fixed_n
#endif

__global__ void vectorAdd(const float *a, const float *b, float *c)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < KERNEL_N)
		c[i] = a[i] + b[i];
}

__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] * 2.0f + b[i];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000, launches = argc > 2 ? atoi(argv[2]) : 2;
	int blocks = (n + 255) / 256;
	size_t bytes = (size_t)n * sizeof(float);
	float *h = (float *)malloc(bytes), *a, *b, *c, *d;
	unsigned long long hash = 0xcbf29ce484222325ULL;

	for (int i = 0; i < n; i++)
		h[i] = (float)i * 0.25f;
	cudaMalloc(&a, bytes);
	cudaMalloc(&b, bytes);
	cudaMalloc(&c, bytes);
	cudaMalloc(&d, bytes);
	cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice);
	cudaMemcpy(b, h, bytes, cudaMemcpyHostToDevice);
	cudaMemcpyToSymbol(fixed_n, &n, sizeof(n));
	for (int l = 0; l < launches; l++) {
		vectorAdd<<<blocks, 256>>>(a, b, c);
		vectorAdd<<<blocks, 256>>>(a, b, d, n);
		cudaDeviceSynchronize();
	}
	for (float *r : {c, d}) {
		cudaMemcpy(h, r, bytes, cudaMemcpyDeviceToHost);
		for (size_t i = 0; i < bytes; i++)
			hash = (hash ^ ((unsigned char *)h)[i]) * 0x100000001b3ULL;
	}
	printf("vectorAdd: n %d, %d blocks of 256, %d launches of each; result %016llx\n", n, blocks,
	       launches, hash);
	return cudaGetLastError() != cudaSuccess;
}
