// Corpus: a device function that terminates the thread: the rewriter must refuse its caller.
__device__ __noinline__ void stop_here(int v)
{
	if (v < 0)
		asm volatile("exit;");
}

extern "C" __global__ void calls_exit(int *out)
{
	stop_here(out[threadIdx.x]);
	out[threadIdx.x] = 1;
}

extern "C" __global__ void plain_neighbour(int *out)
{
	out[threadIdx.x] = 2;
}
