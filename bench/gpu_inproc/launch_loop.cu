// Host time per kernel launch: an empty kernel launched in batches through the driver API
// (cuLaunchKernel) or the runtime (<<<>>>), each batch timed, the median and spread printed.
// usage: launch_loop driver|runtime [LAUNCHES_PER_BATCH] [BATCHES]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

extern "C" __global__ void grt_empty(int *p)
{
	if (p && threadIdx.x == 1024)
		*p = 1;
}

int main(int argc, char **argv)
{
	bool driver = argc < 2 || !strcmp(argv[1], "driver");
	int per_batch = argc > 2 ? atoi(argv[2]) : 256, batches = argc > 3 ? atoi(argv[3]) : 200;
	std::vector<double> ns;
	CUfunction f;
	int *p = nullptr;
	void *params[] = {&p};

	if (cudaFree(0) != cudaSuccess || cudaGetFuncBySymbol(&f, (const void *)grt_empty) != cudaSuccess) {
		fprintf(stderr, "launch_loop: no CUDA device\n");
		return 1;
	}
	for (int b = 0; b < batches + 10; b++) {
		auto t0 = std::chrono::steady_clock::now();
		for (int i = 0; i < per_batch; i++) {
			if (driver)
				cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
			else
				grt_empty<<<1, 32>>>(p);
		}
		auto t1 = std::chrono::steady_clock::now();
		cudaDeviceSynchronize();
		if (b >= 10) /* warm-up batches left out */
			ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / per_batch);
	}
	std::sort(ns.begin(), ns.end());
	printf("mode=%s launches=%d median_ns=%.1f p10_ns=%.1f p90_ns=%.1f\n", driver ? "driver" : "runtime",
	       per_batch * batches, ns[ns.size() / 2], ns[ns.size() / 10], ns[ns.size() * 9 / 10]);
	return 0;
}
