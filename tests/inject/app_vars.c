/* A CUDA driver program whose kernels use a __constant__ and a __device__ variable of their module. */
#include <stdio.h>
#include <stdlib.h>
#include "app_common.h"

/*
 * Linked against the fake libcuda (tests/inject/fake_cuda.c), which gives
 * the two kernels below their meaning: vec_scale(out) writes the
 * __constant__ fixed_n to out[0]; vec_count() adds 1 to the __device__
 * counter hits, through a device function. The program sets fixed_n with a
 * copy to its address (what cudaMemcpyToSymbol does) before each of three
 * launches, counts five launches, and reads hits back: the printed values
 * are the same only if an instrumented copy reads and writes the
 * application's variables, not its own.
 */
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, void *mod, const char *name);

static const char vars_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n\n"
    ".const .align 4 .u32 fixed_n;\n"
    ".global .align 4 .u32 hits;\n\n"
    ".func bump()\n{\n\t.reg .b32 %r<2>;\n\tatom.global.add.u32 %r1, [hits], 1;\n\tret;\n}\n\n"
    ".visible .entry vec_scale(\n\t.param .u64 vec_scale_param_0\n)\n{\n"
    "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n"
    "\tld.param.u64 %rd1, [vec_scale_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
    "\tld.const.u32 %r1, [fixed_n];\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n\n"
    ".visible .entry vec_count()\n{\n\tcall bump;\n\tret;\n}\n";

int main(void)
{
	void *ctx, *mod, *scale, *count;
	CUdeviceptr out = 0, fixed_n = 0, hits = 0;
	void *params[] = {&out};
	size_t bytes = 0;
	uint32_t v;

	printf("init=%d\n", cuInit(0));
	printf("ctx=%d\n", cuCtxCreate_v2(&ctx, 0, 0));
	printf("load=%d\n", cuModuleLoadData(&mod, vars_ptx));
	printf("get=%d,%d\n", cuModuleGetFunction(&scale, mod, "vec_scale"),
	       cuModuleGetFunction(&count, mod, "vec_count"));
	printf("alloc=%d\n", cuMemAlloc_v2(&out, 4));
	printf("symbol=%d\n", cuModuleGetGlobal_v2(&fixed_n, &bytes, mod, "fixed_n"));
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t n = 7 + 5 * i;

		v = 0;
		cuMemcpyHtoD_v2(fixed_n, &n, 4);
		cuLaunchKernel(scale, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
		cuCtxSynchronize();
		cuMemcpyDtoH_v2(&v, out, 4);
		printf("scale_%u=%u\n", i, v);
	}
	for (int i = 0; i < 5; i++)
		cuLaunchKernel(count, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	printf("sync=%d\n", cuCtxSynchronize());
	v = 0;
	if (!cuModuleGetGlobal_v2(&hits, &bytes, mod, "hits"))
		cuMemcpyDtoH_v2(&v, hits, 4);
	printf("hits=%u\n", v);
	return 0;
}
