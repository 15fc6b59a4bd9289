// Corpus: kernels that use their module's variables (bench/gpubpf/modvars.cu's): a __constant__
// the host sets between launches, a __device__ counter, a __device__ table read in a device
// function. Every one is instrumented, its uses redirected to the application's variables.
__constant__ int scale;
__device__ unsigned int counter;
__device__ int table[256];

extern "C" __global__ void mv_read_const(int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = i * scale;
}

extern "C" __global__ void mv_bump(int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		atomicAdd(&counter, 1u);
}

__device__ __noinline__ int lookup(int i)
{
	return table[i % 256];
}

extern "C" __global__ void mv_table(int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = lookup(i) + 1;
}

extern "C" __global__ void read_counter(unsigned int *out)
{
	*out = counter;
}
