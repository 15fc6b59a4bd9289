/* The GPU harnesses' check of a driver call that must succeed: one FAIL line naming it, exit 1. */
#ifndef GRT_BENCH_CUDA_CHECK_H
#define GRT_BENCH_CUDA_CHECK_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                                   \
	do {                                                                                       \
		CUresult r_ = (call);                                                              \
		if (r_ != CUDA_SUCCESS) {                                                          \
			const char *s_ = "?";                                                      \
			cuGetErrorString(r_, &s_);                                                 \
			printf("FAIL - %s: %s (line %d)\n", #call, s_, __LINE__);                  \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#endif
