// Compares what cuGetProcAddress_v2 hands out with the exported symbols uprobes attach to (run on the GPU machine).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef int (*gpa_t)(const char *, void **, int, unsigned long long, int *);
int main(void)
{
	const char *names[] = { "cuLaunchKernel", "cuLaunchKernelEx", "cuMemAlloc", "cuMemFree", "cuMemcpyHtoD",
		"cuMemcpyDtoH", "cuMemcpyAsync", "cuMemcpyHtoDAsync", "cuModuleGetFunction", "cuLibraryGetKernel",
		"cuKernelGetFunction", "cuLibraryLoadData", "cuModuleLoadData", "cuStreamSynchronize", "cuCtxSynchronize",
		"cuMemAllocAsync", "cuEventRecord", "cuGraphLaunch", "cuFuncGetName", "cuMemsetD8Async", "cuMemcpy", 0 };
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	int (*init)(unsigned) = dlsym(lib, "cuInit");
	gpa_t gpa = (gpa_t)dlsym(lib, "cuGetProcAddress_v2");
	init(0);
	for (unsigned long long flags = 0; flags < 3; flags++)
		for (int i = 0; names[i]; i++) {
			void *p = 0; int st = 0; Dl_info info = { 0 };
			int r = gpa(names[i], &p, 13000, flags, &st);
			dladdr(p, &info);
			printf("flags=%llu %-22s r=%d same_as_export=%d resolves_to=%s\n", flags, names[i], r,
			       p == dlsym(lib, names[i]), info.dli_sname ? info.dli_sname : "?");
		}
	return 0;
}
