// Corpus: device printf (a call to the extern vprintf) inside a divergent branch.
#include <cstdio>

extern "C" __global__ void says_hello(int n)
{
	if (threadIdx.x == 0 && n > 0)
		printf("block %d of %d\n", blockIdx.x, n);
}
