// A CUDA program with a marked boundary between initialisation and a steady state of launches,
// copies and syncs, so a syscall trace can count the driver's ioctls in each phase.
// Usage: init_steady [ITERATIONS]   The boundary is prctl(PR_SET_NAME, "grt-steady").
#include <cstdio>
#include <cstdlib>
#include <sys/prctl.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                            \
	do {                                                                                   \
		cudaError_t err_ = (call);                                                     \
		if (err_ != cudaSuccess) {                                                     \
			fprintf(stderr, "init_steady: %s: %s\n", #call, cudaGetErrorString(err_)); \
			return 1;                                                              \
		}                                                                              \
	} while (0)

__global__ void scale(float *x, int n, float k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= k;
}

int main(int argc, char **argv)
{
	int iterations = argc > 1 ? atoi(argv[1]) : 1000;
	const int n = 1 << 16;
	float *dev = nullptr, *host = nullptr;
	cudaStream_t stream;

	// initialisation: context, module, memory, stream
	CHECK(cudaFree(0));
	CHECK(cudaMalloc(&dev, n * sizeof(float)));
	CHECK(cudaMallocHost(&host, n * sizeof(float)));
	CHECK(cudaStreamCreate(&stream));
	for (int i = 0; i < n; i++)
		host[i] = 1.0f;
	CHECK(cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice));
	scale<<<(n + 255) / 256, 256, 0, stream>>>(dev, n, 1.0f);	// loads the module
	CHECK(cudaStreamSynchronize(stream));

	prctl(PR_SET_NAME, "grt-steady", 0, 0, 0);	// the marker the bench script splits on

	for (int it = 0; it < iterations; it++) {
		scale<<<(n + 255) / 256, 256, 0, stream>>>(dev, n, 1.0001f);
		CHECK(cudaMemcpyAsync(host, dev, 4096, cudaMemcpyDeviceToHost, stream));
		CHECK(cudaStreamSynchronize(stream));
	}

	prctl(PR_SET_NAME, "grt-teardown", 0, 0, 0);
	CHECK(cudaStreamDestroy(stream));
	CHECK(cudaFreeHost(host));
	CHECK(cudaFree(dev));
	printf("init_steady: %d iterations done\n", iterations);
	return 0;
}
