// Corpus: dynamic shared memory (.extern .shared) with a barrier between phases.
extern "C" __global__ void reverse_block(int *data, int n)
{
	extern __shared__ int tile[];
	int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;

	tile[t] = i < n ? data[i] : 0;
	__syncthreads();
	if (i < n)
		data[i] = tile[blockDim.x - 1 - t];
}
