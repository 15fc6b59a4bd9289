// A block whose warps finish far apart: warp 0 of each block adds its elements 64 times over,
// the others once. Named and shaped as vector_add (bench/probe_variants.c launches it the same
// way) to see what the block probe's exit barrier costs when early warps must wait there.
extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	float s = a[i] + b[i];
	if (threadIdx.x < 32)
		for (int k = 0; k < 64; k++)
			s = s * 0.5f + a[(i + k * 4096) % n];
	c[i] = s;
}
