/* A CUDA driver program for the inject tests: loads PTX, launches, resolves entry points. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

/*
 * Linked against the fake libcuda (tests/inject/fake_cuda.c). Prints
 * key=value lines the e2e test checks: which library each way of reaching
 * the driver lands in, and the CUDA result of every call, which must be the
 * same with and without the inject library.
 */
typedef int CUresult;
typedef uint64_t CUdeviceptr;

CUresult cuInit(unsigned flags);
CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev);
CUresult cuModuleLoadData(void **mod, const void *image);
CUresult cuModuleGetFunction(void **f, void *mod, const char *name);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			unsigned bz, unsigned shmem, void *s, void **params, void **extra);
CUresult cuCtxSynchronize(void);
CUresult cuStreamSynchronize(void *s);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
			     int *status);

typedef CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **);

static const char module_ptx[] = "\n"
				 ".version 9.0\n"
				 ".target sm_90\n"
				 ".address_size 64\n"
				 "\n"
				 "	// .globl	vector_add\n"
				 "\n"
				 ".visible .entry vector_add(\n"
				 "	.param .u64 vector_add_param_0,\n"
				 "	.param .u64 vector_add_param_1,\n"
				 "	.param .u64 vector_add_param_2,\n"
				 "	.param .u32 vector_add_param_3\n"
				 ")\n"
				 "{\n"
				 "	.reg .pred 	%p<2>;\n"
				 "	.reg .f32 	%f<4>;\n"
				 "	.reg .b32 	%r<6>;\n"
				 "	.reg .b64 	%rd<11>;\n"
				 "\n"
				 "\n"
				 "	ld.param.u64 	%rd1, [vector_add_param_0];\n"
				 "	ld.param.u64 	%rd2, [vector_add_param_1];\n"
				 "	ld.param.u64 	%rd3, [vector_add_param_2];\n"
				 "	ld.param.u32 	%r2, [vector_add_param_3];\n"
				 "	mov.u32 	%r3, %ctaid.x;\n"
				 "	mov.u32 	%r4, %ntid.x;\n"
				 "	mov.u32 	%r5, %tid.x;\n"
				 "	mad.lo.s32 	%r1, %r3, %r4, %r5;\n"
				 "	setp.ge.s32 	%p1, %r1, %r2;\n"
				 "	@%p1 bra 	$L__BB0_2;\n"
				 "\n"
				 "	cvta.to.global.u64 	%rd4, %rd1;\n"
				 "	mul.wide.s32 	%rd5, %r1, 4;\n"
				 "	add.s64 	%rd6, %rd4, %rd5;\n"
				 "	cvta.to.global.u64 	%rd7, %rd2;\n"
				 "	add.s64 	%rd8, %rd7, %rd5;\n"
				 "	ld.global.f32 	%f1, [%rd8];\n"
				 "	ld.global.f32 	%f2, [%rd6];\n"
				 "	add.f32 	%f3, %f2, %f1;\n"
				 "	cvta.to.global.u64 	%rd9, %rd3;\n"
				 "	add.s64 	%rd10, %rd9, %rd5;\n"
				 "	st.global.f32 	[%rd10], %f3;\n"
				 "\n"
				 "$L__BB0_2:\n"
				 "	ret;\n"
				 "\n"
				 "}\n"
				 "	// .globl	probe_fails_kernel\n"
				 ".visible .entry probe_fails_kernel(\n"
				 "	.param .u64 probe_fails_kernel_param_0\n"
				 ")\n"
				 "{\n"
				 "	.reg .pred 	%p<2>;\n"
				 "	.reg .b32 	%r<3>;\n"
				 "	.reg .b64 	%rd<5>;\n"
				 "\n"
				 "\n"
				 "	ld.param.u64 	%rd1, [probe_fails_kernel_param_0];\n"
				 "	setp.eq.s64 	%p1, %rd1, 0;\n"
				 "	@%p1 bra 	$L__BB1_2;\n"
				 "\n"
				 "	cvta.to.global.u64 	%rd2, %rd1;\n"
				 "	mov.u32 	%r1, %tid.x;\n"
				 "	mul.wide.u32 	%rd3, %r1, 4;\n"
				 "	add.s64 	%rd4, %rd2, %rd3;\n"
				 "	mov.u32 	%r2, 1;\n"
				 "	st.global.u32 	[%rd4], %r2;\n"
				 "\n"
				 "$L__BB1_2:\n"
				 "	ret;\n"
				 "\n"
				 "}\n"
				 "\n"
				 "\n";

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
		r = cuLaunchKernel(add, 8, 1, 1, 64, 1, 1, 0, NULL, params, NULL);
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
