/* A fake libcuda.so.1: every probed driver entry point, doing just enough to give known answers. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fake_cuda.h"

/*
 * Each entry point is a real, separate function at its own address (built
 * with -O0, see tests/fixtures.mk) and bumps a counter so none is optimised
 * into nothing. The counter is deliberately not atomic: x86 uprobes refuse
 * instructions with a lock prefix.
 */
#define FAKE_API __attribute__((noinline, used, visibility("default")))

static volatile unsigned long fake_calls;

#define TOUCH() (fake_calls++)

static unsigned long long next_device = FAKE_DEVICE_BASE;
static unsigned long long next_host = FAKE_HOST_BASE;
static unsigned int next_v1 = FAKE_V1_BASE;

static unsigned long long span_of(size_t bytes)
{
	return (bytes + FAKE_ALLOC_GRANULE - 1) / FAKE_ALLOC_GRANULE * FAKE_ALLOC_GRANULE;
}

static unsigned long long take(unsigned long long *next, size_t bytes)
{
	return __atomic_fetch_add(next, span_of(bytes), __ATOMIC_RELAXED);
}

/* ---- handles: names are remembered so cuFuncGetName can answer ---- */

#define MAX_NAMES 64
#define FUNCTION_BASE 0xf0000000ul	  /* cuModuleGetFunction */
#define KERNEL_BASE 0xe0000000ul	  /* cuLibraryGetKernel */
#define KERNEL_FUNCTION_BASE 0xd0000000ul /* cuKernelGetFunction */
#define HANDLE_STEP 0x100ul

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char *names[MAX_NAMES];
static int nnames;

/* Index of name in the table, added when new; -1 when full. */
static int name_index(const char *name)
{
	int i;

	pthread_mutex_lock(&names_lock);
	for (i = 0; i < nnames && strcmp(names[i], name); i++)
		;
	if (i == nnames && nnames < MAX_NAMES)
		names[nnames++] = strdup(name);
	pthread_mutex_unlock(&names_lock);
	return i < MAX_NAMES ? i : -1;
}

static const char *name_of_handle(unsigned long handle)
{
	static const unsigned long bases[] = {FUNCTION_BASE, KERNEL_BASE, KERNEL_FUNCTION_BASE};

	for (int b = 0; b < 3; b++) {
		unsigned long index = (handle - bases[b]) / HANDLE_STEP;

		if (handle >= bases[b] && handle % HANDLE_STEP == 0 &&
		    index < (unsigned long)nnames)
			return names[index];
	}
	return NULL;
}

/* ---- setup ---- */

FAKE_API CUresult cuInit(unsigned int flags)
{
	TOUCH();
	return CUDA_SUCCESS;
}

/*
 * The self-description a real libcuda carries in a note section (580 driver);
 * grtrace reads the CUDA version from it as bytes, never by calling
 * cuDriverGetVersion, so the fake states the same 13.0 as its function does.
 */
__attribute__((used, section(".note.cuda.fwd_compatibility"))) static const char self_description[] =
    "{\"format\":1,\"CUDA version\":\"13.0\",\"driver\":[580],\"device\":[9]}";

FAKE_API CUresult cuDriverGetVersion(int *version)
{
	TOUCH();
	*version = 13000;
	return CUDA_SUCCESS;
}

/*
 * Devices: one, or FAKE_CUDA_DEVICES of them (multi-GPU tests). Each has a
 * known PCI bus id and UUID, a primary context and the contexts created on
 * it, all with handles that name the device (fake_cuda.h); the current
 * context is a per-thread stack, as in the driver.
 */
static int device_count(void)
{
	const char *n = getenv("FAKE_CUDA_DEVICES");
	int count = n ? atoi(n) : 1;

	return count >= 1 && count <= FAKE_MAX_DEVICES ? count : 1;
}

#define CTX_STACK_DEPTH 8
static __thread CUcontext ctx_stack[CTX_STACK_DEPTH];
static __thread int ctx_depth;

static int device_of_ctx(CUcontext ctx)
{
	unsigned long h = (unsigned long)ctx;

	if (h >= FAKE_PRIMARY_CTX_BASE && h < FAKE_PRIMARY_CTX_BASE + FAKE_MAX_DEVICES * FAKE_CTX_STEP)
		return (int)((h - FAKE_PRIMARY_CTX_BASE) / FAKE_CTX_STEP);
	if (h >= FAKE_CTX_BASE && h < FAKE_CTX_BASE + FAKE_MAX_DEVICES * FAKE_CTX_STEP)
		return (int)((h - FAKE_CTX_BASE) / FAKE_CTX_STEP);
	return -1;
}

FAKE_API CUresult cuDeviceGetCount(int *count)
{
	TOUCH();
	*count = device_count();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	TOUCH();
	*device = ordinal;
	return ordinal >= 0 && ordinal < device_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice dev)
{
	TOUCH();
	if (dev < 0 || dev >= device_count() || len < 13)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(bus_id, (size_t)len, "0000:%02x:00.0", FAKE_PCI_BUS(dev));
	return CUDA_SUCCESS;
}

#define FAKE_UUID(name)                                                                            \
	FAKE_API CUresult name(CUuuid *uuid, CUdevice dev)                                         \
	{                                                                                          \
		TOUCH();                                                                           \
		if (dev < 0 || dev >= device_count())                                              \
			return CUDA_ERROR_INVALID_VALUE;                                           \
		for (int i = 0; i < 16; i++)                                                       \
			uuid->bytes[i] = (char)FAKE_UUID_BYTE(dev, i);                             \
		return CUDA_SUCCESS;                                                               \
	}
FAKE_UUID(cuDeviceGetUuid)
FAKE_UUID(cuDeviceGetUuid_v2)

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	TOUCH();
	if (dev < 0 || dev >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	*ctx = (CUcontext)(FAKE_PRIMARY_CTX_BASE + (unsigned long)dev * FAKE_CTX_STEP);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
	TOUCH();
	if (ctx && device_of_ctx(ctx) < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!ctx) {
		ctx_depth -= ctx_depth > 0;
		return CUDA_SUCCESS;
	}
	if (!ctx_depth)
		ctx_depth = 1;
	ctx_stack[ctx_depth - 1] = ctx;
	return CUDA_SUCCESS;
}

#define FAKE_CTX_PUSH(name)                                                                        \
	FAKE_API CUresult name(CUcontext ctx)                                                      \
	{                                                                                          \
		TOUCH();                                                                           \
		if (device_of_ctx(ctx) < 0 || ctx_depth == CTX_STACK_DEPTH)                        \
			return CUDA_ERROR_INVALID_HANDLE;                                          \
		ctx_stack[ctx_depth++] = ctx;                                                      \
		return CUDA_SUCCESS;                                                               \
	}
FAKE_CTX_PUSH(cuCtxPushCurrent)
FAKE_CTX_PUSH(cuCtxPushCurrent_v2)

#define FAKE_CTX_POP(name)                                                                         \
	FAKE_API CUresult name(CUcontext *ctx)                                                     \
	{                                                                                          \
		TOUCH();                                                                           \
		if (!ctx_depth)                                                                    \
			return CUDA_ERROR_INVALID_CONTEXT;                                         \
		ctx_depth--;                                                                       \
		if (ctx)                                                                           \
			*ctx = ctx_stack[ctx_depth];                                               \
		return CUDA_SUCCESS;                                                               \
	}
FAKE_CTX_POP(cuCtxPopCurrent)
FAKE_CTX_POP(cuCtxPopCurrent_v2)

FAKE_API CUresult cuCtxGetDevice(CUdevice *device)
{
	TOUCH();
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = device_of_ctx(ctx_stack[ctx_depth - 1]);
	return CUDA_SUCCESS;
}

static CUresult create_ctx(CUcontext *ctx, CUdevice dev)
{
	if (dev < 0 || dev >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	*ctx = (CUcontext)(FAKE_CTX_BASE + (unsigned long)dev * FAKE_CTX_STEP);
	if (ctx_depth < CTX_STACK_DEPTH)
		ctx_stack[ctx_depth++] = *ctx;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned int flags, CUdevice dev)
{
	TOUCH();
	return create_ctx(ctx, dev);
}

FAKE_API CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned int flags, CUdevice dev)
{
	TOUCH();
	return create_ctx(ctx, dev);
}

FAKE_API CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	TOUCH();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
	static unsigned long next = 0x5000;

	TOUCH();
	*stream = (CUstream)__atomic_fetch_add(&next, 0x10, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamDestroy_v2(CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventCreate(CUevent *event, unsigned int flags)
{
	static unsigned long next = 0xe0e0;

	TOUCH();
	*event = (CUevent)__atomic_fetch_add(&next, 0x10, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventDestroy_v2(CUevent event)
{
	TOUCH();
	return CUDA_SUCCESS;
}

/*
 * FAKE_STREAM_HANG never completes: its synchronisations never return, nor
 * do launches into it (a launch waiting for room in a full queue).
 */
static CUresult wait_stream(CUstream stream)
{
	while (stream == FAKE_STREAM_HANG)
		pause();
	return CUDA_SUCCESS;
}

/*
 * FAKE_CUDA_LAUNCH_TOUCH_KB=N: each launch writes one byte in every cache line of an N KiB
 * buffer, as a real driver's launch works through its own memory between the caller's two
 * halves of a wrapper (bench/inproc_clock.sh; the tests leave it unset).
 */
static unsigned char *touch_buf;
static size_t touch_bytes;

__attribute__((constructor)) static void read_touch(void)
{
	const char *env = getenv("FAKE_CUDA_LAUNCH_TOUCH_KB");
	long kb = env ? atol(env) : 0;

	if (kb > 0 && (touch_buf = calloc((size_t)kb, 1024)))
		touch_bytes = (size_t)kb * 1024;
}

static void launch_work(void)
{
	for (size_t i = 0; i < touch_bytes; i += 64)
		touch_buf[i]++;
}

/*
 * FAKE_CUDA_NESTED=1: calls made inside calls, on the calling thread, through the public entry
 * points (whoever is first in the process's symbol scope: a preloaded library's wrappers), as a
 * profiler's CUPTI callback makes them: each cuLaunchKernel records FAKE_NESTED_EVENT on its
 * stream, and each cuMemAlloc_v2 launches FAKE_NESTED_FUNCTION, which records the event in
 * turn: calls three deep.
 */
static bool nested_calls;

__attribute__((constructor)) static void read_nested(void)
{
	nested_calls = getenv("FAKE_CUDA_NESTED") != NULL;
}

static void nested_event(CUstream stream)
{
	CUresult (*record)(CUevent, CUstream);

	if (nested_calls && (record = (CUresult(*)(CUevent, CUstream))dlsym(RTLD_DEFAULT,
									     "cuEventRecord")))
		record((CUevent)FAKE_NESTED_EVENT, stream);
}

static void nested_launch(void)
{
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);

	if (nested_calls &&
	    (launch = (CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
				   unsigned, unsigned, CUstream, void **, void **))
		 dlsym(RTLD_DEFAULT, "cuLaunchKernel")))
		launch((CUfunction)FAKE_NESTED_FUNCTION, 3, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
}

/* ---- launches: a NULL function is the one invalid handle ---- */

#define FAKE_LAUNCH(name)                                                                          \
	FAKE_API CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,    \
			       unsigned int bx, unsigned int by, unsigned int bz,                  \
			       unsigned int shmem, CUstream stream, void **params, void **extra)   \
	{                                                                                          \
		TOUCH();                                                                           \
		wait_stream(stream);                                                               \
		launch_work();                                                                     \
		nested_event(stream);                                                              \
		return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;                               \
	}
FAKE_LAUNCH(cuLaunchKernel)
FAKE_LAUNCH(cuLaunchKernel_ptsz)

#define FAKE_LAUNCH_EX(name)                                                                       \
	FAKE_API CUresult name(const CUlaunchConfig *config, CUfunction f, void **params,          \
			       void **extra)                                                       \
	{                                                                                          \
		TOUCH();                                                                           \
		return f && config ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;                     \
	}
FAKE_LAUNCH_EX(cuLaunchKernelEx)
FAKE_LAUNCH_EX(cuLaunchKernelEx_ptsz)

#define FAKE_LAUNCH_COOP(name)                                                                     \
	FAKE_API CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,    \
			       unsigned int bx, unsigned int by, unsigned int bz,                  \
			       unsigned int shmem, CUstream stream, void **params)                 \
	{                                                                                          \
		TOUCH();                                                                           \
		return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;                               \
	}
FAKE_LAUNCH_COOP(cuLaunchCooperativeKernel)
FAKE_LAUNCH_COOP(cuLaunchCooperativeKernel_ptsz)

FAKE_API CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}

/* ---- allocations: zero bytes is invalid and leaves *dptr alone ---- */

FAKE_API CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	TOUCH();
	if (!bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	*dptr = __atomic_fetch_add(&next_v1, (unsigned int)span_of(bytesize), __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

#define FAKE_ALLOC(name, ...)                                                                      \
	FAKE_API CUresult name(CUdeviceptr *dptr, size_t bytesize, ##__VA_ARGS__)                  \
	{                                                                                          \
		TOUCH();                                                                           \
		if (!bytesize)                                                                     \
			return CUDA_ERROR_INVALID_VALUE;                                           \
		*dptr = take(&next_device, bytesize);                                              \
		return CUDA_SUCCESS;                                                               \
	}
FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	TOUCH();
	if (!bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	nested_launch();
	*dptr = take(&next_device, bytesize);
	return CUDA_SUCCESS;
}
FAKE_ALLOC(cuMemAllocAsync, CUstream stream)
FAKE_ALLOC(cuMemAllocAsync_ptsz, CUstream stream)
FAKE_ALLOC(cuMemAllocManaged, unsigned int flags)
FAKE_ALLOC(cuMemAllocFromPoolAsync, CUmemoryPool pool, CUstream stream)
FAKE_ALLOC(cuMemAllocFromPoolAsync_ptsz, CUmemoryPool pool, CUstream stream)

FAKE_API CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
	TOUCH();
	if (!bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = (void *)(unsigned long)take(&next_host, bytesize);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	TOUCH();
	if (!bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = (void *)(unsigned long)take(&next_host, bytesize);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	TOUCH();
	if (!bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = (void *)(unsigned long)take(&next_host, bytesize);
	return CUDA_SUCCESS;
}

/* rows are padded to 512 bytes */
static size_t pitch_of(size_t width)
{
	return (width + 511) / 512 * 512;
}

FAKE_API CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pitch, unsigned int width,
				  unsigned int height, unsigned int elem)
{
	TOUCH();
	if (!width || !height)
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = (unsigned int)pitch_of(width);
	*dptr = __atomic_fetch_add(&next_v1, (unsigned int)span_of((size_t)*pitch * height),
				   __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
				     unsigned int elem)
{
	TOUCH();
	if (!width || !height)
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = pitch_of(width);
	*dptr = take(&next_device, *pitch * height);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemFreeHost(void *p)
{
	TOUCH();
	return CUDA_SUCCESS;
}

/* ---- copies move nothing ---- */

#define FAKE_COPY(name, dst_type, src_type, size_type, ...)                                        \
	FAKE_API CUresult name(dst_type dst, src_type src, size_type bytes, ##__VA_ARGS__)         \
	{                                                                                          \
		TOUCH();                                                                           \
		return CUDA_SUCCESS;                                                               \
	}
FAKE_COPY(cuMemcpy, CUdeviceptr, CUdeviceptr, size_t)
FAKE_COPY(cuMemcpy_ptds, CUdeviceptr, CUdeviceptr, size_t)
FAKE_COPY(cuMemcpyAsync, CUdeviceptr, CUdeviceptr, size_t, CUstream stream)
FAKE_COPY(cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr, size_t, CUstream stream)
FAKE_COPY(cuMemcpyHtoD, CUdeviceptr_v1, const void *, unsigned int)
FAKE_COPY(cuMemcpyHtoD_v2, CUdeviceptr, const void *, size_t)
FAKE_COPY(cuMemcpyHtoD_v2_ptds, CUdeviceptr, const void *, size_t)
FAKE_COPY(cuMemcpyDtoH, void *, CUdeviceptr_v1, unsigned int)
FAKE_COPY(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t)
FAKE_COPY(cuMemcpyDtoH_v2_ptds, void *, CUdeviceptr, size_t)
FAKE_COPY(cuMemcpyDtoD, CUdeviceptr_v1, CUdeviceptr_v1, unsigned int)
FAKE_COPY(cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr, size_t)
FAKE_COPY(cuMemcpyDtoD_v2_ptds, CUdeviceptr, CUdeviceptr, size_t)
FAKE_COPY(cuMemcpyHtoDAsync, CUdeviceptr_v1, const void *, unsigned int, CUstream stream)
FAKE_COPY(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *, size_t, CUstream stream)
FAKE_COPY(cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, const void *, size_t, CUstream stream)
FAKE_COPY(cuMemcpyDtoHAsync, void *, CUdeviceptr_v1, unsigned int, CUstream stream)
FAKE_COPY(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, size_t, CUstream stream)
FAKE_COPY(cuMemcpyDtoHAsync_v2_ptsz, void *, CUdeviceptr, size_t, CUstream stream)
FAKE_COPY(cuMemcpyDtoDAsync, CUdeviceptr_v1, CUdeviceptr_v1, unsigned int, CUstream stream)
FAKE_COPY(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, size_t, CUstream stream)
FAKE_COPY(cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr, size_t, CUstream stream)

#define FAKE_PEER(name, ...)                                                                       \
	FAKE_API CUresult name(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,                \
			       CUcontext src_ctx, size_t bytes, ##__VA_ARGS__)                     \
	{                                                                                          \
		TOUCH();                                                                           \
		return CUDA_SUCCESS;                                                               \
	}
FAKE_PEER(cuMemcpyPeer)
FAKE_PEER(cuMemcpyPeerAsync, CUstream stream)
FAKE_PEER(cuMemcpyPeerAsync_ptsz, CUstream stream)

/*
 * One entry point uprobes cannot take: it starts with a lock-prefixed
 * instruction, which x86 uprobes refuse to single-step. A tracer attaching
 * to a process that already maps this library is told so and must probe
 * everything else.
 */
__attribute__((naked, used, visibility("default"))) CUresult
cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
		  size_t bytes)
{
	__asm__ volatile("lock orq $0, (%rsp)\n\t"
			 "xorl %eax, %eax\n\t"
			 "ret");
}
#define FAKE_COPY_ND(name, desc_type, ...)                                                         \
	FAKE_API CUresult name(const desc_type *copy, ##__VA_ARGS__)                               \
	{                                                                                          \
		TOUCH();                                                                           \
		return copy ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;                             \
	}
FAKE_COPY_ND(cuMemcpy2D, void)
FAKE_COPY_ND(cuMemcpy2D_v2, CUDA_MEMCPY2D)
FAKE_COPY_ND(cuMemcpy2D_v2_ptds, CUDA_MEMCPY2D)
FAKE_COPY_ND(cuMemcpy2DUnaligned, void)
FAKE_COPY_ND(cuMemcpy2DUnaligned_v2, CUDA_MEMCPY2D)
FAKE_COPY_ND(cuMemcpy2DUnaligned_v2_ptds, CUDA_MEMCPY2D)
FAKE_COPY_ND(cuMemcpy2DAsync, void, CUstream stream)
FAKE_COPY_ND(cuMemcpy2DAsync_v2, CUDA_MEMCPY2D, CUstream stream)
FAKE_COPY_ND(cuMemcpy2DAsync_v2_ptsz, CUDA_MEMCPY2D, CUstream stream)
FAKE_COPY_ND(cuMemcpy3D, void)
FAKE_COPY_ND(cuMemcpy3D_v2, CUDA_MEMCPY3D)
FAKE_COPY_ND(cuMemcpy3D_v2_ptds, CUDA_MEMCPY3D)
FAKE_COPY_ND(cuMemcpy3DAsync, void, CUstream stream)
FAKE_COPY_ND(cuMemcpy3DAsync_v2, CUDA_MEMCPY3D, CUstream stream)
FAKE_COPY_ND(cuMemcpy3DAsync_v2_ptsz, CUDA_MEMCPY3D, CUstream stream)

/* ---- memsets ---- */

#define FAKE_MEMSET(name, ptr_type, value_type, count_type, ...)                                   \
	FAKE_API CUresult name(ptr_type dst, value_type value, count_type count, ##__VA_ARGS__)    \
	{                                                                                          \
		TOUCH();                                                                           \
		return CUDA_SUCCESS;                                                               \
	}
FAKE_MEMSET(cuMemsetD8, CUdeviceptr_v1, unsigned char, unsigned int)
FAKE_MEMSET(cuMemsetD8_v2, CUdeviceptr, unsigned char, size_t)
FAKE_MEMSET(cuMemsetD8_v2_ptds, CUdeviceptr, unsigned char, size_t)
FAKE_MEMSET(cuMemsetD16, CUdeviceptr_v1, unsigned short, unsigned int)
FAKE_MEMSET(cuMemsetD16_v2, CUdeviceptr, unsigned short, size_t)
FAKE_MEMSET(cuMemsetD16_v2_ptds, CUdeviceptr, unsigned short, size_t)
FAKE_MEMSET(cuMemsetD32, CUdeviceptr_v1, unsigned int, unsigned int)
FAKE_MEMSET(cuMemsetD32_v2, CUdeviceptr, unsigned int, size_t)
FAKE_MEMSET(cuMemsetD32_v2_ptds, CUdeviceptr, unsigned int, size_t)
FAKE_MEMSET(cuMemsetD8Async, CUdeviceptr, unsigned char, size_t, CUstream stream)
FAKE_MEMSET(cuMemsetD8Async_ptsz, CUdeviceptr, unsigned char, size_t, CUstream stream)
FAKE_MEMSET(cuMemsetD16Async, CUdeviceptr, unsigned short, size_t, CUstream stream)
FAKE_MEMSET(cuMemsetD16Async_ptsz, CUdeviceptr, unsigned short, size_t, CUstream stream)
FAKE_MEMSET(cuMemsetD32Async, CUdeviceptr, unsigned int, size_t, CUstream stream)
FAKE_MEMSET(cuMemsetD32Async_ptsz, CUdeviceptr, unsigned int, size_t, CUstream stream)

/* ---- synchronisation ---- */

FAKE_API CUresult cuCtxSynchronize(void)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamSynchronize(CUstream stream)
{
	TOUCH();
	if (stream == FAKE_STREAM_RAISE)
		raise(SIGUSR1);
	return wait_stream(stream);
}
FAKE_API CUresult cuStreamSynchronize_ptsz(CUstream stream)
{
	TOUCH();
	return wait_stream(stream);
}
FAKE_API CUresult cuEventSynchronize(CUevent event)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamWaitEvent_ptsz(CUstream stream, CUevent event, unsigned int flags)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventRecord(CUevent event, CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventRecord_ptsz(CUevent event, CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventRecordWithFlags_ptsz(CUevent event, CUstream stream, unsigned int flags)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventQuery(CUevent event)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamQuery(CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamQuery_ptsz(CUstream stream)
{
	TOUCH();
	return CUDA_SUCCESS;
}

/* ---- modules and libraries ---- */

static unsigned long next_module = 0x4d000;

static CUresult new_module(void **out)
{
	*out = (void *)__atomic_fetch_add(&next_module, 0x1000, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleLoad(CUmodule *module, const char *path)
{
	TOUCH();
	return path ? new_module((void **)module) : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	TOUCH();
	return new_module((void **)module);
}

FAKE_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int num_options,
				     CUjit_option *options, void **values)
{
	TOUCH();
	return new_module((void **)module);
}

FAKE_API CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatbin)
{
	TOUCH();
	return new_module((void **)module);
}

FAKE_API CUresult cuModuleUnload(CUmodule module)
{
	TOUCH();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jit_options,
				    void **jit_values, unsigned int num_jit,
				    CUlibraryOption *lib_options, void **lib_values,
				    unsigned int num_lib)
{
	TOUCH();
	return new_module((void **)library);
}

FAKE_API CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *path,
					CUjit_option *jit_options, void **jit_values,
					unsigned int num_jit, CUlibraryOption *lib_options,
					void **lib_values, unsigned int num_lib)
{
	TOUCH();
	return path ? new_module((void **)library) : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuLibraryUnload(CUlibrary library)
{
	TOUCH();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
	int i;

	TOUCH();
	if (!name || (i = name_index(name)) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	*function = (CUfunction)(FUNCTION_BASE + (unsigned long)i * HANDLE_STEP);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
	int i;

	TOUCH();
	if (!name || (i = name_index(name)) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	*kernel = (CUkernel)(KERNEL_BASE + (unsigned long)i * HANDLE_STEP);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuKernelGetFunction(CUfunction *function, CUkernel kernel)
{
	unsigned long k = (unsigned long)kernel;

	TOUCH();
	if (k < KERNEL_BASE || k >= KERNEL_BASE + MAX_NAMES * HANDLE_STEP)
		return CUDA_ERROR_INVALID_HANDLE;
	*function = (CUfunction)(KERNEL_FUNCTION_BASE + (k - KERNEL_BASE));
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuFuncGetName(const char **name, CUfunction function)
{
	const char *found;

	TOUCH();
	pthread_mutex_lock(&names_lock);
	found = name_of_handle((unsigned long)function);
	pthread_mutex_unlock(&names_lock);
	if (!found)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = found;
	return CUDA_SUCCESS;
}
