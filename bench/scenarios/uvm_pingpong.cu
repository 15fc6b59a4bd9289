// Ground truth: uvm-bound. 64 MiB of managed memory (never more: no oversubscription) touched in
// turn by a kernel and by the CPU: between kernels the host faults every page back and the driver
// migrates the 64 MiB to the host, then the next kernel migrates it to the device again.
#include "common.cuh"

#define BYTES (64ull << 20)
#define ROUNDS 20

int main()
{
	unsigned int *data;
	size_t n = BYTES / sizeof(unsigned int);
	unsigned long long sum = 0;

	CHECK(cudaMallocManaged(&data, BYTES));
	for (size_t i = 0; i < n; i++)
		data[i] = (unsigned int)i;
	for (int r = 0; r < ROUNDS; r++) {
		touch_kernel<<<1024, 256>>>(data, n);	// faults the pages onto the GPU
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
		for (size_t i = 0; i < n; i += 1024)	// one word per 4 KiB page: the CPU faults them back
			sum += data[i];
	}
	CHECK(cudaFree(data));
	printf("uvm_pingpong: %d x (kernel touches 64 MiB managed, CPU touches it back), sum %llu\n",
	       ROUNDS, sum);
	return 0;
}
