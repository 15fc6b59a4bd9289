// GPU proof of module variables (bench/gpu_modvars.sh): kernels that read a __constant__ the host
// changes between launches, add to a __device__ counter that an untouched kernel and
// cudaMemcpyFromSymbol read back, and read a __device__ table in a device function. Prints the
// values and a hash of every result: a traced run must print the same.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "module_vars.cu" // the kernels, also in the nvcc corpus (tests/ptx)

#define N 10000 // 40 blocks of 256 threads: 10240 threads per launch
#define TABLE 256

static unsigned long long hash_of(const int *d, unsigned long long h)
{
	static int host[N];

	cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost);
	for (size_t i = 0; i < sizeof(host); i++)
		h = (h ^ ((const unsigned char *)host)[i]) * 0x100000001b3ULL;
	return h;
}

int main(void)
{
	int blocks = (N + 255) / 256, host_table[TABLE], *out;
	unsigned int *seen, from_kernel = 0, from_symbol = 0, zero = 0;
	unsigned long long h = 0xcbf29ce484222325ULL;
	long long sum;

	for (int i = 0; i < TABLE; i++)
		host_table[i] = 3 * i + 1;
	cudaMalloc(&out, N * sizeof(int));
	cudaMalloc(&seen, sizeof(*seen));
	cudaMemcpyToSymbol(table, host_table, sizeof(host_table));
	cudaMemcpyToSymbol(counter, &zero, sizeof(zero));
	for (int l = 0; l < 4; l++) {
		int s = 3 + 7 * l, host0 = 0;

		cudaMemcpyToSymbol(scale, &s, sizeof(s));
		mv_read_const<<<blocks, 256>>>(out, N);
		cudaDeviceSynchronize();
		cudaMemcpy(&host0, out + 1, sizeof(host0), cudaMemcpyDeviceToHost);
		printf("scale_%d=%d\n", l, host0); // out[1] = scale
		h = hash_of(out, h);
	}
	for (int l = 0; l < 5; l++)
		mv_bump<<<blocks, 256>>>(N);
	read_counter<<<1, 1>>>(seen);
	cudaMemcpy(&from_kernel, seen, sizeof(from_kernel), cudaMemcpyDeviceToHost);
	cudaMemcpyFromSymbol(&from_symbol, counter, sizeof(from_symbol));
	printf("counter_kernel=%u\ncounter_symbol=%u\n", from_kernel, from_symbol);
	mv_table<<<blocks, 256>>>(out, N);
	h = hash_of(out, h);
	sum = 0;
	for (int i = 0; i < N; i++)
		sum += host_table[i % TABLE] + 1;
	printf("table_expected_sum=%lld\n", sum);
	printf("error=%s\nresult=%016llx\n", cudaGetErrorString(cudaDeviceSynchronize()), h);
	return 0;
}
