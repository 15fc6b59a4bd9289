// Corpus: several early returns on different conditions, and an explicit exit.
extern "C" __global__ void early_return(int *out, const int *in, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	if (in[i] < 0) {
		out[i] = -1;
		return;
	}
	if (in[i] == 0) {
		out[i] = 0;
		asm volatile("exit;");
	}
	for (int k = 0; k < in[i] % 7; k++) {
		if (out[i] > 1000)
			return;
		out[i] += k;
	}
}
