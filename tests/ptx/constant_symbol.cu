// Corpus: a kernel that reads a __constant__ the host sets with cudaMemcpyToSymbol (bpftime's
// vectorAdd), beside one that takes n as a parameter. A rewritten copy of the module would have
// its own fixed_n, never set: the first kernel must be left alone.
__constant__ int fixed_n;

__global__ void vectorAdd(const float *a, const float *b, float *c)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < fixed_n)
		c[i] = a[i] + b[i];
}

__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] * 2.0f + b[i];
}
