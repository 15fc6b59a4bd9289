/* A CUDA driver program for the inject tests: loads PTX, launches, resolves entry points. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "app_common.h"

/*
 * Linked against the fake libcuda (tests/inject/fake_cuda.c). Prints
 * key=value lines the e2e test checks: which library each way of reaching
 * the driver lands in, and the CUDA result of every call, which must be the
 * same with and without the inject library.
 */
CUresult cuStreamSynchronize(void *s);

static const char *library_of(const void *p)
{
	Dl_info info;
	const char *slash;

	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "none";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 5;
	void *ctx, *mod, *add, *fails, *missing = NULL, *p_default, *p_ptds, *p_dlsym, *libcuda;
	CUdeviceptr a = 0, b = 0, c = 0;
	int n = 512, status;
	/* APP_GRID: blocks per vector_add launch (a probe buffer's size follows it) */
	unsigned grid = getenv("APP_GRID") ? (unsigned)atoi(getenv("APP_GRID")) : 8;
	void *params[] = {&a, &b, &c, &n}, *fail_params[] = {&a};
	CUresult r;

	printf("init=%d\n", cuInit(0));
	printf("ctx=%d\n", cuCtxCreate_v2(&ctx, 0, 0));
	printf("load=%d\n", cuModuleLoadData(&mod, module_ptx));
	printf("get_add=%d\n", cuModuleGetFunction(&add, mod, "vector_add"));
	printf("get_fails=%d\n", cuModuleGetFunction(&fails, mod, "probe_fails_kernel"));
	/* the application's own errors come back unchanged */
	printf("get_missing=%d\n", cuModuleGetFunction(&missing, mod, "no_such_kernel"));
	printf("launch_null=%d\n", cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	for (int i = 0; i < launches; i++) {
		r = cuLaunchKernel(add, grid, 1, 1, 64, 1, 1, 0, NULL, params, NULL);
		if (r)
			printf("launch_add_failed=%d\n", r);
	}
	printf("launch_fails=%d\n",
	       cuLaunchKernel(fails, 2, 1, 1, 32, 1, 1, 0, NULL, fail_params, NULL));
	printf("sync=%d\n", cuCtxSynchronize());
	fflush(stdout);
	/* APP_PAUSE_MS: stay idle after the first sync (what was collected there is in the trace) */
	if (getenv("APP_PAUSE_MS"))
		usleep((useconds_t)atoi(getenv("APP_PAUSE_MS")) * 1000);

	/* the three ways of reaching the driver */
	cuGetProcAddress_v2("cuLaunchKernel", &p_default, 13000, 0, &status);
	cuGetProcAddress_v2("cuLaunchKernel", &p_ptds, 13000, 2, &status);
	libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	p_dlsym = libcuda ? dlsym(libcuda, "cuModuleLoadData") : NULL;
	printf("getproc_default=%s\n", library_of(p_default));
	printf("getproc_ptds=%s\n", library_of(p_ptds));
	printf("dlsym_handle=%s\n", library_of(p_dlsym));
	printf("linked=%s\n", library_of(dlsym(RTLD_DEFAULT, "cuLaunchKernel")));
	/* launches through the resolved pointers work and are seen too */
	r = ((launch_fn)p_ptds)(add, 4, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
	printf("launch_ptds=%d\n", r);
	printf("sync_stream=%d\n", cuStreamSynchronize(NULL));
	return 0;
}
