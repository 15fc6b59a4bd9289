// Corpus: .maxntid, .minnctapersm and .maxnreg directives between the parameters and the body.
extern "C" __global__ void __launch_bounds__(256, 2) bounded(int *out)
{
	out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}

extern "C" __global__ void __maxnreg__(32) few_registers(float *out, float x)
{
	out[threadIdx.x] = x * threadIdx.x;
}
