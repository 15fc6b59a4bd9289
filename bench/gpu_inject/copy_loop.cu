// Copies between short kernels: ITERS rounds of an async host-to-device copy of BYTES from pinned
// memory, a kernel that adds 1 to every word, and the copy back, on one stream; one sync at the
// end. What copy timing costs per copy (CUDA events around the calls, or CUPTI).
// usage: copy_loop ITERS BYTES
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "cuda_check.cuh"

extern "C" __global__ void add_one(unsigned *w, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		w[i] += 1;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 2000;
	size_t bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : 65536;
	int n = (int)(bytes / 4);
	unsigned *host, *dev;
	unsigned long long sum = 0;
	cudaStream_t s;

	CHECK(cudaMallocHost(&host, bytes));
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < n; i++)
		host[i] = (unsigned)i;
	/* one warm-up round: module load, first-launch costs */
	CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
	add_one<<<(n + 255) / 256, 256, 0, s>>>(dev, n);
	CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamSynchronize(s));
	auto t0 = std::chrono::steady_clock::now();
	for (int it = 0; it < iters; it++) {
		CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
		add_one<<<(n + 255) / 256, 256, 0, s>>>(dev, n);
		CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
	}
	double enqueue_ms =
	    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	CHECK(cudaStreamSynchronize(s));
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	for (int i = 0; i < n; i++)
		sum += host[i];
	printf("loop_ms=%.3f per_iter_us=%.3f checksum=%llu enqueue_ms=%.3f\n", ms, ms * 1000.0 / iters,
	       sum, enqueue_ms);
	return 0;
}
