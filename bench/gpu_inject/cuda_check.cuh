// The benchmark programs' check of a CUDA runtime call: one line on stderr, main returns 1.
#ifndef GRT_BENCH_GPU_INJECT_CUDA_CHECK_CUH
#define GRT_BENCH_GPU_INJECT_CUDA_CHECK_CUH

#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                                              \
	do {                                                                                     \
		cudaError_t e_ = (call);                                                         \
		if (e_ != cudaSuccess) {                                                         \
			fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));              \
			return 1;                                                                \
		}                                                                                \
	} while (0)

#endif
