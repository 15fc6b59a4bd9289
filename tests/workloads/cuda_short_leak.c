/* A program that leaks one allocation and exits right after its last free (tests/e2e/cuda_record.sh). */
#include <unistd.h>
#include "workload.h"

int main(void)
{
	CUdeviceptr kept, freed;

	expect(cuMemAlloc_v2(&kept, 4096), CUDA_SUCCESS, "cuMemAlloc_v2 (kept)");
	/* shorter than the recorder's drain tick: the process is gone before the next one */
	usleep(20 * 1000);
	expect(cuMemAlloc_v2(&freed, 8192), CUDA_SUCCESS, "cuMemAlloc_v2 (freed)");
	expect(cuMemFree_v2(freed), CUDA_SUCCESS, "cuMemFree_v2");
	return 0;
}
