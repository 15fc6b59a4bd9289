/* The CUDA driver API as the fake libcuda.so.1 exports it: real symbol names, real argument order.
 */
#ifndef GRT_FAKE_CUDA_H
#define GRT_FAKE_CUDA_H

#include <stddef.h>

/*
 * Declared here from the CUDA driver ABI (cuda.h), not included, so tests
 * build without a CUDA toolkit. Every exported symbol is declared under its
 * real name; the pre-3.2 (v1) entry points take 32-bit pointers and sizes.
 */
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned int CUdeviceptr_v1;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUarray_st *CUarray;
typedef struct CUlaunchAttribute_st CUlaunchAttribute;
typedef int CUjit_option;
typedef int CUlibraryOption;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_HANDLE 400

typedef struct {
	char bytes[16];
} CUuuid;

enum {
	CU_MEMORYTYPE_HOST = 1,
	CU_MEMORYTYPE_DEVICE = 2,
	CU_MEMORYTYPE_ARRAY = 3,
	CU_MEMORYTYPE_UNIFIED = 4,
};

typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

typedef struct {
	size_t srcXInBytes, srcY;
	int srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

typedef struct {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	int srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	void *reserved0;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	int dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	void *reserved1;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;

_Static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout");
_Static_assert(sizeof(CUDA_MEMCPY2D) == 128, "CUDA_MEMCPY2D layout");
_Static_assert(sizeof(CUDA_MEMCPY3D) == 200, "CUDA_MEMCPY3D layout");

/*
 * A stream handle whose synchronisations and cuLaunchKernel launches never
 * return: tests of calls cut off by the stop.
 */
#define FAKE_STREAM_HANG ((CUstream)0xdead0)
/* A stream whose synchronisations raise SIGUSR1 inside the driver (a handler may leave by longjmp). */
#define FAKE_STREAM_RAISE ((CUstream)0xdead8)
/* FAKE_CUDA_NESTED's calls inside calls: the event they record, the kernel they launch */
#define FAKE_NESTED_EVENT 0xe5e70ul
#define FAKE_NESTED_FUNCTION 0xe5e700ul

/* Where the fake hands out memory: deterministic, so tests know the addresses. */
#define FAKE_DEVICE_BASE 0x700000000000ull
#define FAKE_HOST_BASE 0x600000000000ull
#define FAKE_V1_BASE 0x10000000u
#define FAKE_ALLOC_GRANULE 0x100000ull /* each allocation starts on the next 1 MiB */

/*
 * Devices (FAKE_CUDA_DEVICES=N in the environment, default 1): device d is
 * at PCI bus FAKE_PCI_BUS(d), its UUID bytes are FAKE_UUID_BYTE(d, i), its
 * primary context is FAKE_PRIMARY_CTX_BASE + d * FAKE_CTX_STEP and the
 * context cuCtxCreate makes on it FAKE_CTX_BASE + d * FAKE_CTX_STEP (device
 * 0's is 0xc0000, as before there were several).
 */
#define FAKE_MAX_DEVICES 8
#define FAKE_CTX_BASE 0xc0000ul
#define FAKE_PRIMARY_CTX_BASE 0xb0000ul
#define FAKE_CTX_STEP 0x1000ul
#define FAKE_PCI_BUS(d) (0x18 + 0x11 * (d))
#define FAKE_UUID_BYTE(d, i) (0x10 * ((d) + 1) + (i))

/* setup */
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned int flags, CUdevice dev);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice dev);
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxPushCurrent(CUcontext ctx);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent(CUcontext *ctx);
CUresult cuCtxPopCurrent_v2(CUcontext *ctx);
CUresult cuCtxGetDevice(CUdevice *device);
CUresult cuStreamCreate(CUstream *stream, unsigned int flags);
CUresult cuStreamDestroy_v2(CUstream stream);
CUresult cuEventCreate(CUevent *event, unsigned int flags);
CUresult cuEventDestroy_v2(CUevent event);

/* launches */
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			CUstream stream, void **params, void **extra);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			     unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			     CUstream stream, void **params, void **extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params,
			       void **extra);
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				   unsigned int bx, unsigned int by, unsigned int bz,
				   unsigned int shmem, CUstream stream, void **params);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
					unsigned int gz, unsigned int bx, unsigned int by,
					unsigned int bz, unsigned int shmem, CUstream stream,
					void **params);
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream);
CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream);

/* allocations */
CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream stream);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult cuMemAllocHost(void **pp, unsigned int bytesize);
CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags);
CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pitch, unsigned int width,
			 unsigned int height, unsigned int elem);
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
			    unsigned int elem);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				 CUstream stream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				      CUstream stream);
CUresult cuMemFree(CUdeviceptr_v1 dptr);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream);
CUresult cuMemFreeHost(void *p);

/* copies */
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyHtoD(CUdeviceptr_v1 dst, const void *src, unsigned int bytes);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyDtoH(void *dst, CUdeviceptr_v1 src, unsigned int bytes);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyDtoD(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int bytes);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 dst, const void *src, unsigned int bytes,
			   CUstream stream);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr_v1 src, unsigned int bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int bytes,
			   CUstream stream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
		      size_t bytes);
CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
			   size_t bytes);
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
			   size_t bytes, CUstream stream);
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
				CUcontext src_ctx, size_t bytes, CUstream stream);
CUresult cuMemcpy2D(const void *copy_v1);
CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *copy);
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *copy);
CUresult cuMemcpy2DUnaligned(const void *copy_v1);
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *copy);
CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *copy);
CUresult cuMemcpy2DAsync(const void *copy_v1, CUstream stream);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *copy, CUstream stream);
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *copy, CUstream stream);
CUresult cuMemcpy3D(const void *copy_v1);
CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *copy);
CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *copy);
CUresult cuMemcpy3DAsync(const void *copy_v1, CUstream stream);
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *copy, CUstream stream);
CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *copy, CUstream stream);

/* memsets */
CUresult cuMemsetD8(CUdeviceptr_v1 dst, unsigned char value, unsigned int count);
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count);
CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char value, size_t count);
CUresult cuMemsetD16(CUdeviceptr_v1 dst, unsigned short value, unsigned int count);
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count);
CUresult cuMemsetD16_v2_ptds(CUdeviceptr dst, unsigned short value, size_t count);
CUresult cuMemsetD32(CUdeviceptr_v1 dst, unsigned int value, unsigned int count);
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count);
CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int value, size_t count);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream);
CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short value, size_t count,
			       CUstream stream);
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream);
CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream);

/* synchronisation */
CUresult cuCtxSynchronize(void);
CUresult cuCtxSynchronize_v2(CUcontext ctx);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuStreamSynchronize_ptsz(CUstream stream);
CUresult cuEventSynchronize(CUevent event);
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags);
CUresult cuStreamWaitEvent_ptsz(CUstream stream, CUevent event, unsigned int flags);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventRecord_ptsz(CUevent event, CUstream stream);
CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags);
CUresult cuEventRecordWithFlags_ptsz(CUevent event, CUstream stream, unsigned int flags);
CUresult cuEventQuery(CUevent event);
CUresult cuStreamQuery(CUstream stream);
CUresult cuStreamQuery_ptsz(CUstream stream);

/* modules, libraries, names */
CUresult cuModuleLoad(CUmodule *module, const char *path);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int num_options,
			    CUjit_option *options, void **values);
CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatbin);
CUresult cuModuleUnload(CUmodule module);
CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jit_options,
			   void **jit_values, unsigned int num_jit, CUlibraryOption *lib_options,
			   void **lib_values, unsigned int num_lib);
CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *path, CUjit_option *jit_options,
			       void **jit_values, unsigned int num_jit,
			       CUlibraryOption *lib_options, void **lib_values,
			       unsigned int num_lib);
CUresult cuLibraryUnload(CUlibrary library);
CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name);
CUresult cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name);
CUresult cuKernelGetFunction(CUfunction *function, CUkernel kernel);
CUresult cuFuncGetName(const char **name, CUfunction function);

#endif
