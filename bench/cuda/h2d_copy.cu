// Large host-to-device copies from pinned memory for SECONDS seconds; prints the bandwidth reached,
// to compare with what the NVML PCIe sampler reports over the same time.
// Usage: h2d_copy [SECONDS] [MIB]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                          \
	do {                                                                                 \
		cudaError_t err_ = (call);                                                   \
		if (err_ != cudaSuccess) {                                                   \
			fprintf(stderr, "h2d_copy: %s: %s\n", #call, cudaGetErrorString(err_)); \
			return 1;                                                            \
		}                                                                            \
	} while (0)

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	size_t bytes = (size_t)(argc > 2 ? atol(argv[2]) : 1024) << 20;
	void *host = nullptr, *dev = nullptr;
	size_t copies = 0;

	CHECK(cudaMallocHost(&host, bytes));	// pinned: the copy runs at PCIe speed
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));	// warm-up
	auto start = std::chrono::steady_clock::now();
	double elapsed = 0;
	while (elapsed < seconds) {
		CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
		copies++;
		elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	}
	printf("h2d_copy: %zu copies of %zu MiB in %.2f s: %.2f GB/s host-to-device\n", copies, bytes >> 20,
	       elapsed, copies * (double)bytes / elapsed / 1e9);
	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
	return 0;
}
