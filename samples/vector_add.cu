// The demo's real CUDA workload: vector adds, copies both ways, and one deliberate leak.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void scale(float *c, float factor, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] *= factor;
}

#define CHECK(call)                                                                                \
	do {                                                                                       \
		cudaError_t err_ = (call);                                                         \
		if (err_ != cudaSuccess) {                                                         \
			fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err_));              \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

int main()
{
	const int n = 1 << 20;
	size_t bytes = n * sizeof(float);
	float *h = (float *)malloc(bytes), *a, *b, *c, *leak;

	for (int i = 0; i < n; i++)
		h[i] = (float)i;
	CHECK(cudaMalloc(&a, bytes));
	CHECK(cudaMalloc(&b, bytes));
	CHECK(cudaMalloc(&c, bytes));
	CHECK(cudaMalloc(&leak, 4096)); /* never freed: the report's leak section shows it */
	CHECK(cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(b, h, bytes, cudaMemcpyHostToDevice));
	for (int iter = 0; iter < 100; iter++) {
		vector_add<<<(n + 255) / 256, 256>>>(a, b, c, n);
		scale<<<(n + 255) / 256, 256>>>(c, 0.5f, n);
	}
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(h, c, bytes, cudaMemcpyDeviceToHost));
	printf("c[12345] = %.1f (expected %.1f)\n", h[12345], 12345.0f);
	CHECK(cudaFree(a));
	CHECK(cudaFree(b));
	CHECK(cudaFree(c));
	free(h);
	return 0;
}
