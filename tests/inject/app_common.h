/* What the fake-driver programs share: the driver calls they make, and the PTX module they load. */
#ifndef GRT_TEST_APP_COMMON_H
#define GRT_TEST_APP_COMMON_H

#include <stdint.h>

/* Declared as a program built against cuda.h calls them (the _v2 names its macros pick). */
typedef int CUresult;
typedef uint64_t CUdeviceptr;

CUresult cuInit(unsigned flags);
CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev);
CUresult cuModuleLoadData(void **mod, const void *image);
CUresult cuModuleGetFunction(void **f, void *mod, const char *name);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			unsigned bz, unsigned shmem, void *s, void **params, void **extra);
CUresult cuCtxSynchronize(void);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
			     int *status);

typedef CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **);

/* vector_add, and probe_fails_kernel, whose instrumented launch the fake driver fails */
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

#endif
