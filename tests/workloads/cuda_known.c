/* A fixed sequence of CUDA driver calls whose every traced field is known (tests/e2e/cuda_*.sh). */
#include <string.h>
#include <sys/mman.h>
#include "workload.h"

/*
 * The expected answer lives in tests/e2e/cuda_expect.py; change both together.
 * Addresses follow from the fake's allocator: device memory from
 * 0x700000000000 and host memory from 0x600000000000 in 1 MiB steps.
 */

struct v1_ptr {
	CUdeviceptr_v1 ptr;
	unsigned int canary; /* a 64-bit read of ptr would pick this up */
};

static CUstream stream1;
static CUevent event1;
static char host_buf[1 << 20];

struct kernels {
	CUmodule module;
	CUlibrary library, library2;
	CUfunction vec_add, saxpy, reduce;
	CUkernel reduce_kernel, scale_kernel;
};

static void load_modules(struct kernels *k)
{
	CUmodule extra;
	CUfunction bad;
	const char *name = NULL;
	static const char image[] = "fake fatbin";

	expect(cuModuleLoad(&k->module, "/opt/fake/kernels.cubin"), 0, "cuModuleLoad");
	expect(cuModuleGetFunction(&k->vec_add, k->module, "vecAdd"), 0, "get vecAdd");
	expect(cuModuleGetFunction(&k->saxpy, k->module, "saxpy"), 0, "get saxpy");
	expect(cuLibraryLoadFromFile(&k->library, "/opt/fake/reduce.cubin", NULL, NULL, 0, NULL,
				     NULL, 0),
	       0, "cuLibraryLoadFromFile");
	expect(cuLibraryGetKernel(&k->reduce_kernel, k->library, "reduce"), 0, "get reduce");
	expect(cuKernelGetFunction(&k->reduce, k->reduce_kernel), 0, "reduce function");
	expect(cuLibraryLoadData(&k->library2, image, NULL, NULL, 0, NULL, NULL, 0), 0,
	       "cuLibraryLoadData");
	expect(cuLibraryGetKernel(&k->scale_kernel, k->library2, "scale"), 0, "get scale");
	expect(cuModuleLoadData(&extra, image), 0, "cuModuleLoadData");
	expect(cuModuleLoadFatBinary(&extra, image), 0, "cuModuleLoadFatBinary");
	expect(cuFuncGetName(&name, k->saxpy), 0, "cuFuncGetName");
	if (!name || strcmp(name, "saxpy"))
		expect(1, 0, "cuFuncGetName's name");
	expect(cuModuleGetFunction(&bad, k->module, NULL), CUDA_ERROR_INVALID_VALUE,
	       "get NULL name");
}

struct buffers {
	CUdeviceptr a, b, c, d, e, managed, pitched, pooled;
	void *host, *host2;
	struct v1_ptr v1;
};

static void allocate(struct buffers *m)
{
	CUdeviceptr none = 0;
	size_t pitch = 0;

	expect(cuMemAlloc_v2(&m->a, 1 << 20), 0, "alloc a");
	expect(cuMemAlloc_v2(&m->b, 2 << 20), 0, "alloc b");
	expect(cuMemAlloc_v2(&m->c, 4 << 20), 0, "alloc c");
	expect(cuMemAlloc_v2(&m->d, 3000), 0, "alloc d");
	expect(cuMemAllocAsync(&m->e, 8192, stream1), 0, "alloc async");
	expect(cuMemAllocManaged(&m->managed, 65536, 1), 0, "alloc managed");
	expect(cuMemAllocPitch_v2(&m->pitched, &pitch, 1000, 10, 4), 0, "alloc pitch");
	expect(cuMemAllocFromPoolAsync(&m->pooled, 16384, (CUmemoryPool)0x9900, stream1), 0,
	       "alloc pool");
	expect(cuMemAllocHost_v2(&m->host, 4096), 0, "alloc host");
	expect(cuMemHostAlloc(&m->host2, 12288, 0), 0, "host alloc");
	m->v1.canary = 0xffffffff;
	expect(cuMemAlloc(&m->v1.ptr, 5000), 0, "alloc v1");
	expect(cuMemAlloc_v2(&none, 0), CUDA_ERROR_INVALID_VALUE, "alloc 0 bytes");
}

static void copy(const struct buffers *m)
{
	CUDA_MEMCPY2D c2 = {
	    .srcMemoryType = CU_MEMORYTYPE_HOST,
	    .srcHost = host_buf,
	    .srcPitch = 256,
	    .dstMemoryType = CU_MEMORYTYPE_DEVICE,
	    .dstDevice = m->b,
	    .dstY = 1,
	    .dstPitch = 512,
	    .WidthInBytes = 256,
	    .Height = 4,
	};
	CUDA_MEMCPY2D d2 = {
	    .srcMemoryType = CU_MEMORYTYPE_DEVICE,
	    .srcDevice = m->a,
	    .srcPitch = 100,
	    .dstMemoryType = CU_MEMORYTYPE_DEVICE,
	    .dstDevice = m->b,
	    .dstPitch = 100,
	    .WidthInBytes = 100,
	    .Height = 3,
	};
	CUDA_MEMCPY3D c3 = {
	    .srcMemoryType = CU_MEMORYTYPE_DEVICE,
	    .srcDevice = m->c,
	    .srcPitch = 64,
	    .srcHeight = 4,
	    .dstMemoryType = CU_MEMORYTYPE_HOST,
	    .dstHost = host_buf,
	    .dstPitch = 64,
	    .dstHeight = 4,
	    .WidthInBytes = 64,
	    .Height = 4,
	    .Depth = 2,
	};
	CUcontext ctx = (CUcontext)0xc0000;

	expect(cuMemcpyHtoD_v2(m->a, host_buf, 1 << 20), 0, "HtoD");
	expect(cuMemcpyDtoH_v2(host_buf, m->b, 4096), 0, "DtoH");
	expect(cuMemcpyDtoD_v2(m->c, m->b, 2048), 0, "DtoD");
	expect(cuMemcpyHtoDAsync_v2(m->a, host_buf, 512, stream1), 0, "HtoD async");
	expect(cuMemcpyDtoHAsync_v2(host_buf, m->a, 256, stream1), 0, "DtoH async");
	expect(cuMemcpyDtoDAsync_v2(m->b, m->a, 128, stream1), 0, "DtoD async");
	expect(cuMemcpy(m->b, m->a, 1000), 0, "memcpy");
	expect(cuMemcpyAsync(m->b, m->a, 2000, stream1), 0, "memcpy async");
	expect(cuMemcpyPeer(m->b, ctx, m->a, ctx, 4096), 0, "peer");
	expect(cuMemcpyPeerAsync(m->b, ctx, m->a, ctx, 8192, stream1), 0, "peer async");
	expect(cuMemcpy2D_v2(&c2), 0, "2D");
	expect(cuMemcpy3D_v2(&c3), 0, "3D");
	expect(cuMemcpy2DAsync_v2(&d2, stream1), 0, "2D async");
	expect(cuMemcpyHtoD(m->v1.ptr, host_buf, 777), 0, "HtoD v1");
}

static void set_memory(const struct buffers *m)
{
	expect(cuMemsetD8_v2(m->a, 0xab, 1000), 0, "memset 8");
	expect(cuMemsetD16_v2(m->b, 0x1234, 500), 0, "memset 16");
	expect(cuMemsetD32_v2(m->c, 0xdeadbeef, 256), 0, "memset 32");
	expect(cuMemsetD32Async(m->b, 7, 64, stream1), 0, "memset 32 async");
	expect(cuMemsetD8Async(m->a, 0x5a, 10, stream1), 0, "memset 8 async");
}

/* A 4-byte argument in the last bytes of a page whose next page is unmapped. */
static int *arg_at_page_end(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *two =
	    mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (two == MAP_FAILED || munmap(two + page, page))
		expect(1, 0, "mmap");
	return (int *)(two + page - sizeof(int));
}

static void launch(const struct kernels *k, const struct buffers *m)
{
	struct {
		int n;
		int zero; /* what an 8-byte read of n also sees */
	} n = {1 << 20, 0};
	/*
	 * vecAdd's arguments lie together, as a launch stub's are (the tracer
	 * reads them in one go); reduce's lie apart (one read each).
	 */
	struct {
		CUdeviceptr a, b, c;
		int n, zero;
	} vec_args = {m->a, m->b, m->c, 1 << 20, 0};
	/*
	 * The driver is not told how many parameters a kernel has, so the tracer
	 * reads up to four slots; the NULLs end the shorter lists for it.
	 */
	/*
	 * vecAdd's four slots straddle a page of the stack, two on each side, as
	 * a stub's array does for one launch in 256 of the stack's placements:
	 * the stack is mapped on both sides, so all four are read.
	 */
	static const size_t page_bytes = 4096;
	char two_pages[2 * 4096] __attribute__((aligned(4096)));
	void **vec_params = (void **)(two_pages + page_bytes - 2 * sizeof(void *));
	void *reduce_params[] = {(void *)&m->a, &n.n, NULL};
	int *alpha = arg_at_page_end();
	void *saxpy_params[] = {alpha, NULL};
	CUlaunchConfig cfg = {
	    .gridDimX = 16,
	    .gridDimY = 1,
	    .gridDimZ = 1,
	    .blockDimX = 64,
	    .blockDimY = 2,
	    .blockDimZ = 1,
	    .sharedMemBytes = 2048,
	    .hStream = stream1,
	};

	vec_params[0] = &vec_args.a;
	vec_params[1] = &vec_args.b;
	vec_params[2] = &vec_args.c;
	vec_params[3] = &vec_args.n;
	*alpha = 0x41424344;
	for (int i = 0; i < 10; i++)
		expect(cuLaunchKernel(k->vec_add, 4, 1, 1, 256, 1, 1, 0, NULL, vec_params, NULL), 0,
		       "vecAdd");
	expect(cuLaunchKernel(k->saxpy, 1, 1, 1, 32, 1, 1, 0, NULL, saxpy_params, NULL), 0,
	       "saxpy");
	for (int i = 0; i < 5; i++)
		expect(cuLaunchKernel(k->reduce, 8, 2, 1, 128, 1, 1, 1024, stream1, reduce_params,
				      NULL),
		       0, "reduce");
	/* a CUkernel used where a CUfunction goes */
	for (int i = 0; i < 4; i++)
		expect(cuLaunchKernel((CUfunction)k->scale_kernel, 1, 1, 1, 32, 1, 1, 0, stream1,
				      NULL, NULL),
		       0, "scale");
	for (int i = 0; i < 3; i++)
		expect(cuLaunchKernelEx(&cfg, k->vec_add, vec_params, NULL), 0, "vecAdd ex");
	expect(cuLaunchCooperativeKernel(k->reduce, 2, 1, 1, 64, 1, 1, 512, stream1, reduce_params),
	       0, "cooperative");
	for (int i = 0; i < 2; i++)
		expect(cuLaunchKernel_ptsz(k->saxpy, 3, 3, 1, 32, 4, 1, 0, stream1, NULL, NULL), 0,
		       "saxpy ptsz");
	expect(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
	       CUDA_ERROR_INVALID_HANDLE, "NULL launch");
	for (int i = 0; i < 2; i++)
		expect(cuGraphLaunch((CUgraphExec)0x9a000, stream1), 0, "graph");
}

static void synchronize(void)
{
	expect(cuCtxSynchronize(), 0, "ctx sync");
	expect(cuStreamSynchronize(stream1), 0, "stream sync");
	expect(cuEventRecord(event1, stream1), 0, "event record");
	expect(cuEventSynchronize(event1), 0, "event sync");
	expect(cuStreamWaitEvent(stream1, event1, 0), 0, "wait event");
	expect(cuEventQuery(event1), 0, "event query");
	expect(cuStreamQuery(stream1), 0, "stream query");
	expect(cuStreamSynchronize(stream1), 0, "stream sync");
}

static void release(const struct kernels *k, const struct buffers *m)
{
	expect(cuMemFree_v2(m->a), 0, "free a");
	expect(cuMemFree_v2(m->c), 0, "free c");
	expect(cuMemFreeAsync(m->e, stream1), 0, "free async");
	expect(cuMemFreeHost(m->host), 0, "free host");
	expect(cuMemFree(m->v1.ptr), 0, "free v1");
	expect(cuModuleUnload(k->module), 0, "module unload");
	expect(cuLibraryUnload(k->library), 0, "library unload");
}

int main(void)
{
	struct kernels k;
	struct buffers m;
	CUcontext ctx;
	int version;

	workload_gate();
	expect(cuInit(0), 0, "cuInit");
	expect(cuDriverGetVersion(&version), 0, "version");
	expect(cuCtxCreate_v2(&ctx, 0, 0), 0, "ctx");
	expect(cuStreamCreate(&stream1, 0), 0, "stream");
	expect(cuEventCreate(&event1, 0), 0, "event");
	load_modules(&k);
	allocate(&m);
	copy(&m);
	set_memory(&m);
	launch(&k, &m);
	synchronize();
	release(&k, &m);
	/*
	 * A real CUDA process lives far longer than these few hundred
	 * microseconds; linger like one so a tracer can read our mappings.
	 */
	usleep(200 * 1000);
	return 0;
}
