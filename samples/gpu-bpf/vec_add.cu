// The samples' test program: vec_add over N floats (argv[1], default 10000), LAUNCHES times
// (argv[2], default 1), 256 threads per block; checks c = a + b and prints what the samples
// must find (docs/gpu-bpf.md, "Samples"). Build: nvcc -O2 -arch=sm_90 -o vec_add vec_add.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000, launches = argc > 2 ? atoi(argv[2]) : 1;
	int threads = 256, blocks = (n + threads - 1) / threads;
	size_t bytes = (size_t)n * sizeof(float);
	float *ha = (float *)malloc(bytes), *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes);
	float *a, *b, *c;
	unsigned long long hash = 0xcbf29ce484222325ULL;
	int bad = 0;

	for (int i = 0; i < n; i++) {
		ha[i] = (float)i;
		hb[i] = (float)(2 * i);
	}
	cudaMalloc(&a, bytes);
	cudaMalloc(&b, bytes);
	cudaMalloc(&c, bytes);
	cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice);
	cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice);
	for (int l = 0; l < launches; l++)
		vec_add<<<blocks, threads>>>(a, b, c, n);
	cudaMemcpy(hc, c, bytes, cudaMemcpyDeviceToHost);
	for (int i = 0; i < n; i++)
		bad += hc[i] != 3.0f * (float)i;
	/* the result's bytes: a traced run must print the same */
	for (size_t i = 0; i < bytes; i++)
		hash = (hash ^ ((unsigned char *)hc)[i]) * 0x100000001b3ULL;
	printf("result %016llx\n", hash);
	printf("vec_add: n %d, %d blocks of %d threads, %d launches, %d wrong results\n", n, blocks,
	       threads, launches, bad);
	printf("expect: exit_times: %d threads with one exit each per launch; block_hist: %d blocks "
	       "of %d threads; launch_latency: %d block starts, %d events; mem_counts: %lld loads, "
	       "%lld stores, %lld bytes; sm_placement: %d blocks placed, %d events\n",
	       blocks * threads, blocks, threads, blocks, launches, 2LL * n * launches,
	       (long long)n * launches, 12LL * n * launches, blocks * launches, blocks * launches);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	return bad ? 1 : 0;
}
