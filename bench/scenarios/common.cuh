// Shared pieces of the job-analysis scenarios: a kernel that runs for a given time, error checks.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                         \
	do {                                                                                \
		cudaError_t err_ = (call);                                                  \
		if (err_ != cudaSuccess) {                                                  \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
				cudaGetErrorString(err_));                                  \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

__device__ __forceinline__ unsigned long long globaltimer()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// Busy for ns nanoseconds of device time (one thread is enough: the point is the duration).
__global__ void spin_kernel(unsigned long long ns, int *sink)
{
	unsigned long long start = globaltimer();
	while (globaltimer() - start < ns)
		;
	if (threadIdx.x == 0 && sink)
		*sink = 1;
}

// Adds 1 to every word of data (managed memory: touching it faults its pages onto the GPU).
__global__ void touch_kernel(unsigned int *data, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		data[i] += 1;
}
