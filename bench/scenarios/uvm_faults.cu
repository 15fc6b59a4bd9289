// Ground truth: vm-fault. 256 MiB of managed memory (never more: no oversubscription), moved to the
// host between kernels so that every kernel faults it back page by page.
#include "common.cuh"

#define BYTES (256ull << 20)

int main()
{
	unsigned int *data;
	size_t n = BYTES / sizeof(unsigned int);
	cudaStream_t s;
	cudaMemLocation host = {};
	host.type = cudaMemLocationTypeHost;
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaMallocManaged(&data, BYTES));
	for (int i = 0; i < 8; i++) {
		// the driver moves the pages to host memory (no CPU faults, little host time) ...
		CHECK(cudaMemPrefetchAsync(data, BYTES, host, 0, s));
		CHECK(cudaStreamSynchronize(s)); // the kernel below does not queue behind the prefetch
		// ... and the kernel faults them back onto the GPU
		touch_kernel<<<1024, 256, 0, s>>>(data, n);
		// other GPU work without faults keeps the GPU mostly busy: the faults stand out, not idle time
		spin_kernel<<<1, 32, 0, s>>>(100000000ull, nullptr);
		CHECK(cudaGetLastError());
		CHECK(cudaStreamSynchronize(s));
	}
	CHECK(cudaFree(data));
	CHECK(cudaStreamDestroy(s));
	printf("uvm_faults: 8 x (prefetch 256 MiB to host, kernel touches all of it, 100 ms of other work)\n");
	return 0;
}
