/* A CUDA driver program for the call-identity test: several threads launch, copy and set memory. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app_common.h"

/*
 * Linked against the fake libcuda (tests/inject/fake_cuda.c). Each of N
 * threads (argv[1], default 4) runs M rounds (argv[2], default 20) of work,
 * half of it through the exports it links and half through pointers from
 * cuGetProcAddress (the CUDA runtime's path, per-thread default stream
 * variants included): kernel launches, copies both ways, memsets, and every
 * fifth round a graph launch. It prints what it did, per kind, for the test
 * to compare with the trace.
 */

CUresult cuCtxSetCurrent(void *ctx);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n);
CUresult cuGraphLaunch(void *exec, void *s);

typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*htod_async_fn)(CUdeviceptr, const void *, size_t, void *);
typedef CUresult (*memset32_async_fn)(CUdeviceptr, unsigned, size_t, void *);
typedef CUresult (*graph_fn)(void *, void *);

#define PER_THREAD_DEFAULT_STREAM 2 /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */

static void *ctx, *add;
static int rounds;
/* argv[3] "nographs": no graph launches (every kernel probed); "lategraphs": the last round's only */
static bool graphs, late_graphs;
static struct {
	launch_fn launch;
	dtoh_fn dtoh;
	htod_async_fn htod_async;
	memset32_async_fn memset32_async;
	graph_fn graph;
} runtime; /* what cuGetProcAddress handed out, per-thread default stream flavour */

static void *proc(const char *name)
{
	void *p = NULL;
	int status;

	if (cuGetProcAddress_v2(name, &p, 13000, PER_THREAD_DEFAULT_STREAM, &status) || !p) {
		fprintf(stderr, "app_threads: no %s\n", name);
		exit(1);
	}
	return p;
}

static void *worker(void *arg)
{
	uint32_t host[64] = {0};
	CUdeviceptr dev = (CUdeviceptr)(uintptr_t)calloc(64, sizeof(uint32_t));
	int n = 64, failed = 0;
	void *params[] = {&dev, &dev, &dev, &n};
	void *graph = &graph; /* the fake only checks it is not NULL */

	(void)arg;
	failed |= cuCtxSetCurrent(ctx);
	for (int i = 0; i < rounds; i++) {
		failed |= cuLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL);
		failed |= runtime.launch(add, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
		failed |= cuMemcpyHtoD_v2(dev, host, sizeof(host));
		failed |= runtime.dtoh(host, dev, sizeof(host));
		failed |= runtime.htod_async(dev, host, sizeof(host), NULL);
		failed |= cuMemsetD8_v2(dev, 0, sizeof(host));
		failed |= runtime.memset32_async(dev, 0, 64, NULL);
		if (late_graphs ? i == rounds - 1 : graphs && i % 5 == 0) {
			failed |= cuGraphLaunch(graph, NULL);
			failed |= runtime.graph(graph, NULL);
		}
	}
	failed |= cuCtxSynchronize();
	free((void *)(uintptr_t)dev);
	return (void *)(intptr_t)failed;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4, failed = 0;
	pthread_t tids[64];
	void *mod, *ret;

	rounds = argc > 2 ? atoi(argv[2]) : 20;
	graphs = !(argc > 3 && !strcmp(argv[3], "nographs"));
	late_graphs = argc > 3 && !strcmp(argv[3], "lategraphs");
	if (threads < 1 || threads > 64 || rounds < 1)
		return 2;
	if (cuInit(0) || cuCtxCreate_v2(&ctx, 0, 0) || cuModuleLoadData(&mod, module_ptx) ||
	    cuModuleGetFunction(&add, mod, "vector_add"))
		return 1;
	runtime.launch = (launch_fn)proc("cuLaunchKernel");
	runtime.dtoh = (dtoh_fn)proc("cuMemcpyDtoH");
	runtime.htod_async = (htod_async_fn)proc("cuMemcpyHtoDAsync");
	runtime.memset32_async = (memset32_async_fn)proc("cuMemsetD32Async");
	runtime.graph = (graph_fn)proc("cuGraphLaunch");
	for (int t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, worker, NULL))
			return 1;
	for (int t = 0; t < threads; t++) {
		pthread_join(tids[t], &ret);
		failed |= ret != NULL;
	}
	printf("threads=%d launches=%d copies=%d memsets=%d graph_launches=%d failed=%d\n", threads,
	       threads * rounds * 2, threads * rounds * 3, threads * rounds * 2,
	       threads * ((rounds + 4) / 5) * 2, failed);
	return failed;
}
