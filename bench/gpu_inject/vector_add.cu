// The seed's benchmark: many vector-add launches through the CUDA runtime, timed, output kept.
// usage: vector_add N LAUNCHES [OUTFILE]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "cuda_check.cuh"

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1 << 20, launches = argc > 2 ? atoi(argv[2]) : 10000;
	const char *out = argc > 3 ? argv[3] : nullptr;
	std::vector<float> a(n), b(n), c(n);
	float *da, *db, *dc;
	int grid = (n + 255) / 256;
	double sum = 0;

	for (int i = 0; i < n; i++) {
		a[i] = (float)(i % 1000) * 0.25f;
		b[i] = (float)(i % 77) * 1.5f + 0.125f;
	}
	CHECK(cudaMalloc(&da, n * sizeof(float)));
	CHECK(cudaMalloc(&db, n * sizeof(float)));
	CHECK(cudaMalloc(&dc, n * sizeof(float)));
	CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	for (int i = 0; i < 20; i++)
		vector_add<<<grid, 256>>>(da, db, dc, n);
	CHECK(cudaDeviceSynchronize());
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < launches; i++)
		vector_add<<<grid, 256>>>(da, db, dc, n);
	CHECK(cudaGetLastError());
	/* the host's part: when it is close to the loop's time, the host paces the loop, not the GPU */
	auto tq = std::chrono::steady_clock::now();
	CHECK(cudaDeviceSynchronize());
	auto t1 = std::chrono::steady_clock::now();
	double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
	double enqueue_ms = std::chrono::duration<double, std::milli>(tq - t0).count();
	CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		sum += c[i];
	printf("loop_ms=%.3f per_launch_us=%.3f checksum=%.3f enqueue_ms=%.3f\n", ms,
	       ms * 1000.0 / launches, sum, enqueue_ms);
	if (out) {
		FILE *f = fopen(out, "wb");

		if (!f || fwrite(c.data(), sizeof(float), n, f) != (size_t)n)
			return 1;
		fclose(f);
	}
	return 0;
}
