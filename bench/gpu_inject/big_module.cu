// A larger module for the attach-cost measurement: 128 kernels with loops, shared memory,
// barriers, early returns and math, in one fat binary (PTX + SASS).
#include <cstdio>
#include <cuda_runtime.h>

#define KERNEL(N)                                                                                \
	extern "C" __global__ void k##N(float *x, const float *y, int n)                       \
	{                                                                                        \
		__shared__ float s[256];                                                         \
		int i = blockIdx.x * blockDim.x + threadIdx.x;                                   \
		float acc = 0.f;                                                                 \
		for (int j = 0; j < (N % 7) + 3; j++) {                                         \
			acc += (i < n ? y[(i + j * N) % n] : 0.f) * (float)(j + N);             \
			acc = sinf(acc) + cosf(acc * 0.5f);                                      \
		}                                                                                \
		s[threadIdx.x] = acc;                                                            \
		__syncthreads();                                                                 \
		for (int st = blockDim.x / 2; st > 0; st >>= 1) {                               \
			if (threadIdx.x < st)                                                    \
				s[threadIdx.x] += s[threadIdx.x + st];                           \
			__syncthreads();                                                         \
		}                                                                                \
		if (threadIdx.x == 0 && blockIdx.x < n)                                          \
			x[blockIdx.x] = s[0];                                                    \
		if (i >= n || (i & (N + 1)) == 7)                                                \
			return;                                                                  \
		x[i] += acc;                                                                     \
	}
#define K8(b) KERNEL(b##0) KERNEL(b##1) KERNEL(b##2) KERNEL(b##3) KERNEL(b##4) KERNEL(b##5) KERNEL(b##6) KERNEL(b##7)
K8(1) K8(2) K8(3) K8(4) K8(5) K8(6) K8(7) K8(8) K8(9) K8(10) K8(11) K8(12) K8(13) K8(14) K8(15) K8(16)

int main()
{
	float *x, *y;
	int n = 1 << 16;

	cudaMalloc(&x, n * sizeof(float));
	cudaMalloc(&y, n * sizeof(float));
	cudaMemset(y, 0, n * sizeof(float));
	k10<<<n / 256, 256>>>(x, y, n);
	k167<<<n / 256, 256>>>(x, y, n);
	printf("big_module=%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
	return 0;
}
