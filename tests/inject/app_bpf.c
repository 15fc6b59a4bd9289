/* A CUDA driver program for the GPU eBPF tests: vec_add over n floats, launched several times. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "app_common.h"

/*
 * Linked against the fake libcuda (tests/inject/fake_cuda.c), which really
 * adds vectors for a kernel named vec_add: the result's hash must be the same
 * with and without programs. Loads app_common.h's module with vector_add
 * renamed vec_add (the samples' kernel), launches it LAUNCHES times in
 * blocks of 256 threads, synchronizing after each (APP_BPF_IDLE_MS: that long after each
 * launch before its synchronization; APP_BPF_SYNC_AT_END: only once, after the last), and
 * prints key=value lines.
 */
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);

static char *renamed_module(void)
{
	char *text = malloc(sizeof(module_ptx) * 2), *out = text;
	const char *at = module_ptx, *hit;

	if (!text)
		return NULL;
	while ((hit = strstr(at, "vector_add"))) {
		memcpy(out, at, (size_t)(hit - at));
		out += hit - at;
		memcpy(out, "vec_add", 7);
		out += 7;
		at = hit + 10;
	}
	strcpy(out, at);
	return text;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000, launches = argc > 2 ? atoi(argv[2]) : 2;
	unsigned blocks = (unsigned)(n + 255) / 256;
	char *ptx = renamed_module();
	float *ha = calloc((size_t)n, 4), *hb = calloc((size_t)n, 4), *hc = calloc((size_t)n, 4);
	CUdeviceptr a, b, c;
	void *ctx, *mod, *fn, *params[] = {&a, &b, &c, &n};
	uint64_t hash = 0xcbf29ce484222325ULL;
	const char *at_end = getenv("APP_BPF_SYNC_AT_END");
	bool sync_at_end = at_end && *at_end;
	int failed = 0;

	if (!ptx || !ha || !hb || !hc || n < 1)
		return 1;
	for (int i = 0; i < n; i++) {
		ha[i] = (float)i * 0.5f;
		hb[i] = 1.0f / (float)(i + 1);
	}
	printf("init=%d\n", cuInit(0));
	printf("ctx=%d\n", cuCtxCreate_v2(&ctx, 0, 0));
	printf("load=%d\n", cuModuleLoadData(&mod, ptx));
	printf("get=%d\n", cuModuleGetFunction(&fn, mod, "vec_add"));
	if (cuMemAlloc_v2(&a, (size_t)n * 4) || cuMemAlloc_v2(&b, (size_t)n * 4) ||
	    cuMemAlloc_v2(&c, (size_t)n * 4) || cuMemcpyHtoD_v2(a, ha, (size_t)n * 4) ||
	    cuMemcpyHtoD_v2(b, hb, (size_t)n * 4))
		return 1;
	for (int i = 0; i < launches; i++) {
		failed += cuLaunchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, NULL, params, NULL) != 0;
		if (getenv("APP_BPF_IDLE_MS"))
			usleep((useconds_t)atoi(getenv("APP_BPF_IDLE_MS")) * 1000);
		if (!sync_at_end)
			failed += cuCtxSynchronize() != 0;
	}
	if (sync_at_end)
		failed += cuCtxSynchronize() != 0;
	cuMemcpyDtoH_v2(hc, c, (size_t)n * 4);
	for (size_t i = 0; i < (size_t)n * 4; i++)
		hash = (hash ^ ((uint8_t *)hc)[i]) * 0x100000001b3ULL;
	printf("failed=%d\nresult=%016llx\n", failed, (unsigned long long)hash);
	free(ptx);
	free(ha);
	free(hb);
	free(hc);
	return 0;
}
