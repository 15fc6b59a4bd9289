// Corpus: several kernels in one module, one with no parameters, one with a struct parameter.
struct params {
	int a;
	double b;
	char c[3];
};

__device__ int counter;

extern "C" __global__ void no_params(void)
{
	atomicAdd(&counter, 1);
}

extern "C" __global__ void by_value(struct params p, double *out)
{
	out[threadIdx.x] = p.a + p.b + p.c[threadIdx.x % 3];
}

extern "C" __global__ void grid_3d(int *out)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	int z = blockIdx.z * blockDim.z + threadIdx.z;

	out[(z * gridDim.y * blockDim.y + y) * gridDim.x * blockDim.x + x] = x + y + z;
}
