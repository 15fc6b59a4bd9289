// Corpus: barriers, warp shuffles and static shared memory in one reduction.
extern "C" __global__ void block_sum(const float *in, float *out, int n)
{
	__shared__ float warp_sums[32];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = i < n ? in[i] : 0.0f;

	for (int off = 16; off > 0; off /= 2)
		v += __shfl_down_sync(0xffffffffu, v, off);
	if ((threadIdx.x & 31) == 0)
		warp_sums[threadIdx.x / 32] = v;
	__syncthreads();
	if (threadIdx.x < 32) {
		v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
		for (int off = 16; off > 0; off /= 2)
			v += __shfl_xor_sync(0xffffffffu, v, off);
		if (threadIdx.x == 0)
			atomicAdd(out, v);
	}
}
