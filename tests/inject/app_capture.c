/* A CUDA driver program that captures a graph in global mode while grtrace's threads start. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "app_common.h"

/*
 * Linked against the fake libcuda (tests/inject/fake_cuda.c), which refuses,
 * as the driver does, a potentially unsafe call from any thread not in relaxed
 * capture mode while a global-mode capture is open, and then fails the
 * capture. The capture opens right after the module loads, when the library
 * starts calibrating the GPU clock on a thread of its own; it stays open for
 * HOLD_MS (argument) while kernels are captured into it. The
 * application's capture must end as it does without grtrace: end_capture=0.
 */
CUresult cuStreamCreate(void **s, unsigned flags);
CUresult cuStreamBeginCapture_v2(void *s, int mode);
CUresult cuStreamEndCapture(void *s, void **graph);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);

#define CAPTURE_MODE_GLOBAL 0
#define CAPTURED_LAUNCHES 10

int main(int argc, char **argv)
{
	int hold_ms = argc > 1 ? atoi(argv[1]) : 500;
	void *ctx, *mod, *add, *stream, *graph = NULL;
	CUdeviceptr a = 0, b = 0, c = 0;
	int n = 512;
	CUresult end;
	void *params[] = {&a, &b, &c, &n};

	printf("init=%d\n", cuInit(0));
	printf("ctx=%d\n", cuCtxCreate_v2(&ctx, 0, 0));
	printf("load=%d\n", cuModuleLoadData(&mod, module_ptx));
	printf("get_add=%d\n", cuModuleGetFunction(&add, mod, "vector_add"));
	printf("alloc=%d\n", cuMemAlloc_v2(&a, 4096) | cuMemAlloc_v2(&b, 4096) | cuMemAlloc_v2(&c, 4096));
	printf("stream=%d\n", cuStreamCreate(&stream, 1));
	printf("begin_capture=%d\n", cuStreamBeginCapture_v2(stream, CAPTURE_MODE_GLOBAL));
	for (int i = 0; i < CAPTURED_LAUNCHES; i++) {
		CUresult r = cuLaunchKernel(add, 8, 1, 1, 64, 1, 1, 0, stream, params, NULL);

		if (r)
			printf("captured_launch_failed=%d\n", r);
		usleep((useconds_t)hold_ms * 1000 / CAPTURED_LAUNCHES);
	}
	end = cuStreamEndCapture(stream, &graph);
	printf("end_capture=%d graph=%s\n", end, graph ? "yes" : "no");
	printf("sync=%d\n", cuCtxSynchronize());
	free(graph);
	return 0;
}
