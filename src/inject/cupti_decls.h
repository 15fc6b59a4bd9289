/* The part of CUPTI 13's ABI the inject library uses, re-declared from its headers. */
#ifndef GRT_CUPTI_DECLS_H
#define GRT_CUPTI_DECLS_H

#include <stddef.h>
#include <stdint.h>
/* The layout check compiles the constants beside the real headers, without these types. */
#ifndef GRT_CUPTI_CONSTANTS_ONLY
#include "inject/cuda_decls.h"
#endif

/*
 * Activity records are read by field offset rather than through full struct
 * copies: the records grow at the end between CUPTI versions, and these
 * offsets are the ones CUPTI 13 (libcupti.so.13) writes. tests/fixtures.mk
 * builds a check against the real headers when the toolkit is installed.
 */
#ifndef GRT_CUPTI_CONSTANTS_ONLY
typedef int CUptiResult;
typedef struct CUpti_Subscriber_st *CUpti_SubscriberHandle;
#endif

#define CUPTI_SUCCESS 0
#define CUPTI_ERROR_INVALID_PARAMETER 1
#define CUPTI_ERROR_MAX_LIMIT_REACHED 12
#define CUPTI_ERROR_NOT_INITIALIZED 15
#define CUPTI_ERROR_INVALID_KIND 21
#define CUPTI_ERROR_NOT_SUPPORTED 27
#define CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED 39

#define CUPTI_ACTIVITY_KIND_MEMCPY 1
#define CUPTI_ACTIVITY_KIND_MEMSET 2
#define CUPTI_ACTIVITY_KIND_KERNEL 3
#define CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL 10
#define CUPTI_ACTIVITY_FLAG_FLUSH_FORCED 1

#define CUPTI_CB_DOMAIN_DRIVER_API 1
#define CUPTI_API_ENTER 0

#define CUPTI_MEMCPY_HTOD 1
#define CUPTI_MEMCPY_DTOH 2
#define CUPTI_MEMCPY_DTOD 8
#define CUPTI_MEMCPY_HTOH 9
#define CUPTI_MEMCPY_PTOP 10

/* CUpti_ActivityKernel10 (CONCURRENT_KERNEL and KERNEL) */
#define CUPTI_KERNEL_OFF_START 16
#define CUPTI_KERNEL_OFF_END 24
#define CUPTI_KERNEL_OFF_DEVICE 40
#define CUPTI_KERNEL_OFF_STREAM 48
#define CUPTI_KERNEL_OFF_GRID 52  /* int32 x, y, z */
#define CUPTI_KERNEL_OFF_BLOCK 64 /* int32 x, y, z */
#define CUPTI_KERNEL_OFF_CORRELATION 92
#define CUPTI_KERNEL_OFF_NAME 104  /* const char * */
#define CUPTI_KERNEL_OFF_GRAPH 156 /* uint32 graphId */
#define CUPTI_KERNEL_MIN_SIZE 160

/* CUpti_ActivityMemcpy6 and CUpti_ActivityMemset4 share these */
#define CUPTI_COPY_OFF_KIND 4 /* memcpy: uint8 copyKind */
#define CUPTI_COPY_OFF_BYTES 8
#define CUPTI_COPY_OFF_START 16
#define CUPTI_COPY_OFF_END 24
#define CUPTI_COPY_OFF_DEVICE 32
#define CUPTI_COPY_OFF_STREAM 40
#define CUPTI_COPY_OFF_CORRELATION 44
#define CUPTI_COPY_OFF_GRAPH 72
#define CUPTI_COPY_MIN_SIZE 76

/* CUpti_CallbackData */
#define CUPTI_CB_OFF_SITE 0
#define CUPTI_CB_OFF_PARAMS 16
#define CUPTI_CB_OFF_CORRELATION 64

/* Driver API callback ids (cupti_driver_cbid.h) whose activity we correlate. */
#define CUPTI_CBID_cuLaunchKernel 307
#define CUPTI_CBID_cuLaunchKernel_ptsz 442
#define CUPTI_CBID_cuLaunchKernelEx 652
#define CUPTI_CBID_cuLaunchKernelEx_ptsz 653
#define CUPTI_CBID_cuGraphLaunch 514
#define CUPTI_CBID_cuGraphLaunch_ptsz 515

/* Byte offset of hStream in the callback's parameter struct, by callback id family. */
#define CUPTI_PARAMS_LAUNCH_STREAM 40 /* cuLaunchKernel_params */
#define CUPTI_PARAMS_GRAPH_STREAM 8   /* cuGraphLaunch_params */

#ifndef GRT_CUPTI_CONSTANTS_ONLY
typedef void (*CUpti_CallbackFunc)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
typedef void (*CUpti_BuffersCallbackRequestFunc)(uint8_t **buffer, size_t *size,
						 size_t *max_records);
typedef void (*CUpti_BuffersCallbackCompleteFunc)(CUcontext ctx, uint32_t stream_id,
						  uint8_t *buffer, size_t size, size_t valid);
#endif

#endif
