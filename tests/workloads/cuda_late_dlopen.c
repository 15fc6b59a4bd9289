/* Loads libcuda with dlopen() after a delay (as frameworks do) and calls it through dlsym(). */
#include <dlfcn.h>
#include <time.h>
#include "workload.h"

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts))
		;
}

static void *need(void *lib, const char *symbol)
{
	void *fn = dlsym(lib, symbol);

	if (!fn) {
		fprintf(stderr, "workload: %s\n", dlerror());
		exit(3);
	}
	return fn;
}

int main(int argc, char **argv)
{
	CUresult (*init)(unsigned int);
	CUresult (*load)(CUmodule *, const char *);
	CUresult (*get)(CUfunction *, CUmodule, const char *);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*release)(CUdeviceptr);
	CUmodule module;
	CUfunction kernel;
	CUdeviceptr buf;
	void *lib;
	int launches;

	if (argc != 5) {
		fprintf(stderr, "usage: cuda_late_dlopen LIBCUDA MS_BEFORE MS_AFTER LAUNCHES\n");
		return 2;
	}
	launches = atoi(argv[4]);
	workload_gate();
	sleep_ms(atol(argv[2]));
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "workload: %s\n", dlerror());
		return 3;
	}
	/* time for a tracer to notice a copy of libcuda it did not know */
	sleep_ms(atol(argv[3]));
	*(void **)&init = need(lib, "cuInit");
	*(void **)&load = need(lib, "cuModuleLoad");
	*(void **)&get = need(lib, "cuModuleGetFunction");
	*(void **)&launch = need(lib, "cuLaunchKernel");
	*(void **)&alloc = need(lib, "cuMemAlloc_v2");
	*(void **)&release = need(lib, "cuMemFree_v2");
	expect(init(0), 0, "cuInit");
	expect(load(&module, "/opt/fake/late.cubin"), 0, "load");
	expect(get(&kernel, module, "late_kernel"), 0, "get");
	expect(alloc(&buf, 123456), 0, "alloc");
	for (int i = 0; i < launches; i++)
		expect(launch(kernel, 2, 2, 1, 32, 1, 1, 0, NULL, NULL, NULL), 0, "launch");
	expect(release(buf), 0, "free");
	return 0;
}
