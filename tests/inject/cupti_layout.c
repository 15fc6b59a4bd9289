/* Checks the CUPTI offsets inject/cupti_decls.h re-declares against the toolkit's own headers. */
#include <stddef.h>
#include <stdio.h>
#include <cupti.h>

/* The headers' values, taken before ours (macros of the same names) hide them. */
static const int headers_invalid_parameter = CUPTI_ERROR_INVALID_PARAMETER;
static const int headers_invalid_kind = CUPTI_ERROR_INVALID_KIND;
static const int headers_not_initialized = CUPTI_ERROR_NOT_INITIALIZED;
static const int headers_multiple_subscribers = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
static const int headers_kind_memset = CUPTI_ACTIVITY_KIND_MEMSET;
static const int headers_kind_memcpy = CUPTI_ACTIVITY_KIND_MEMCPY;

#define GRT_CUPTI_CONSTANTS_ONLY
#include "inject/copy_shape.h"
#include "inject/cupti_decls.h"

static int failures;

#define SAME(what, ours, theirs)                                                                   \
	do {                                                                                       \
		if ((size_t)(ours) != (size_t)(theirs)) {                                          \
			printf("FAIL - %s: %zu, headers say %zu\n", what, (size_t)(ours),          \
			       (size_t)(theirs));                                                  \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

int main(void)
{
	SAME("kernel start", CUPTI_KERNEL_OFF_START, offsetof(CUpti_ActivityKernel10, start));
	SAME("kernel end", CUPTI_KERNEL_OFF_END, offsetof(CUpti_ActivityKernel10, end));
	SAME("kernel deviceId", CUPTI_KERNEL_OFF_DEVICE,
	     offsetof(CUpti_ActivityKernel10, deviceId));
	SAME("kernel streamId", CUPTI_KERNEL_OFF_STREAM,
	     offsetof(CUpti_ActivityKernel10, streamId));
	SAME("kernel gridX", CUPTI_KERNEL_OFF_GRID, offsetof(CUpti_ActivityKernel10, gridX));
	SAME("kernel blockX", CUPTI_KERNEL_OFF_BLOCK, offsetof(CUpti_ActivityKernel10, blockX));
	SAME("kernel correlationId", CUPTI_KERNEL_OFF_CORRELATION,
	     offsetof(CUpti_ActivityKernel10, correlationId));
	SAME("kernel name", CUPTI_KERNEL_OFF_NAME, offsetof(CUpti_ActivityKernel10, name));
	SAME("kernel graphId", CUPTI_KERNEL_OFF_GRAPH, offsetof(CUpti_ActivityKernel10, graphId));
	SAME("memcpy copyKind", CUPTI_COPY_OFF_KIND, offsetof(CUpti_ActivityMemcpy6, copyKind));
	SAME("memcpy bytes", CUPTI_COPY_OFF_BYTES, offsetof(CUpti_ActivityMemcpy6, bytes));
	SAME("memcpy start", CUPTI_COPY_OFF_START, offsetof(CUpti_ActivityMemcpy6, start));
	SAME("memcpy end", CUPTI_COPY_OFF_END, offsetof(CUpti_ActivityMemcpy6, end));
	SAME("memcpy deviceId", CUPTI_COPY_OFF_DEVICE, offsetof(CUpti_ActivityMemcpy6, deviceId));
	SAME("memcpy streamId", CUPTI_COPY_OFF_STREAM, offsetof(CUpti_ActivityMemcpy6, streamId));
	SAME("memcpy correlationId", CUPTI_COPY_OFF_CORRELATION,
	     offsetof(CUpti_ActivityMemcpy6, correlationId));
	SAME("memcpy graphId", CUPTI_COPY_OFF_GRAPH, offsetof(CUpti_ActivityMemcpy6, graphId));
	SAME("memset bytes", CUPTI_COPY_OFF_BYTES, offsetof(CUpti_ActivityMemset4, bytes));
	SAME("memset start", CUPTI_COPY_OFF_START, offsetof(CUpti_ActivityMemset4, start));
	SAME("memset streamId", CUPTI_COPY_OFF_STREAM, offsetof(CUpti_ActivityMemset4, streamId));
	SAME("memset correlationId", CUPTI_COPY_OFF_CORRELATION,
	     offsetof(CUpti_ActivityMemset4, correlationId));
	SAME("memset graphId", CUPTI_COPY_OFF_GRAPH, offsetof(CUpti_ActivityMemset4, graphId));
	/* the copy descriptors copy_shape.c reads (cuda.h) */
	SAME("3D srcMemoryType", COPY_3D_OFF_SRC_TYPE, offsetof(CUDA_MEMCPY3D, srcMemoryType));
	SAME("3D dstMemoryType", COPY_3D_OFF_DST_TYPE, offsetof(CUDA_MEMCPY3D, dstMemoryType));
	SAME("3D WidthInBytes", COPY_3D_OFF_WIDTH, offsetof(CUDA_MEMCPY3D, WidthInBytes));
	SAME("3D Height", COPY_3D_OFF_WIDTH + 8, offsetof(CUDA_MEMCPY3D, Height));
	SAME("3D Depth", COPY_3D_OFF_WIDTH + 16, offsetof(CUDA_MEMCPY3D, Depth));
	SAME("3D peer srcMemoryType", COPY_3D_OFF_SRC_TYPE,
	     offsetof(CUDA_MEMCPY3D_PEER, srcMemoryType));
	SAME("3D peer dstMemoryType", COPY_3D_OFF_DST_TYPE,
	     offsetof(CUDA_MEMCPY3D_PEER, dstMemoryType));
	SAME("3D peer WidthInBytes", COPY_3D_OFF_WIDTH, offsetof(CUDA_MEMCPY3D_PEER, WidthInBytes));
	SAME("callback site", CUPTI_CB_OFF_SITE, offsetof(CUpti_CallbackData, callbackSite));
	SAME("callback params", CUPTI_CB_OFF_PARAMS, offsetof(CUpti_CallbackData, functionParams));
	SAME("callback correlationId", CUPTI_CB_OFF_CORRELATION,
	     offsetof(CUpti_CallbackData, correlationId));
	SAME("launch params hStream", CUPTI_PARAMS_LAUNCH_STREAM,
	     offsetof(cuLaunchKernel_params, hStream));
	SAME("graph launch params hStream", CUPTI_PARAMS_GRAPH_STREAM,
	     offsetof(cuGraphLaunch_params, hStream));
	SAME("kind concurrent kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	     CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	SAME("cbid cuLaunchKernel", CUPTI_CBID_cuLaunchKernel,
	     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	SAME("cbid cuLaunchKernel_ptsz", CUPTI_CBID_cuLaunchKernel_ptsz,
	     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz);
	SAME("cbid cuLaunchKernelEx", CUPTI_CBID_cuLaunchKernelEx,
	     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
	SAME("cbid cuGraphLaunch", CUPTI_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);
	SAME("memcpy kind DtoD", CUPTI_MEMCPY_DTOD, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
	SAME("memcpy kind PtoP", CUPTI_MEMCPY_PTOP, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
	SAME("error invalid parameter", CUPTI_ERROR_INVALID_PARAMETER, headers_invalid_parameter);
	SAME("error invalid kind", CUPTI_ERROR_INVALID_KIND, headers_invalid_kind);
	SAME("error not initialized", CUPTI_ERROR_NOT_INITIALIZED, headers_not_initialized);
	SAME("error multiple subscribers", CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
	     headers_multiple_subscribers);
	SAME("kind memset", CUPTI_ACTIVITY_KIND_MEMSET, headers_kind_memset);
	SAME("kind memcpy", CUPTI_ACTIVITY_KIND_MEMCPY, headers_kind_memcpy);
	if (!failures)
		printf("ok - cupti_layout\n");
	return failures ? 1 : 0;
}
