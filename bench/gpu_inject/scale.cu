// A kernel of the profiler check's own, loaded from PTX so that grtrace can put block probes in it.
extern "C" __global__ void grt_bench_scale(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = p[i] * 0.5f + 1.0f;
}
