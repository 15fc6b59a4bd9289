/*
 * K distinct kernels launched L times each, then the process stays S seconds (for the serve
 * benchmark's 100 processes x 50 kernels): "usage: cuda_many_kernels K L S".
 */
#include <time.h>
#include "workload.h"

int main(int argc, char **argv)
{
	int kernels = argc > 1 ? atoi(argv[1]) : 50, launches = argc > 2 ? atoi(argv[2]) : 1;
	double stay = argc > 3 ? atof(argv[3]) : 0;
	struct timespec ts = {.tv_sec = (time_t)stay, .tv_nsec = (long)((stay - (long)stay) * 1e9)};
	CUmodule module;
	char name[32];

	if (kernels <= 0 || launches < 0 || stay < 0) {
		fprintf(stderr, "usage: cuda_many_kernels K L S\n");
		return 2;
	}
	workload_gate();
	expect(cuModuleLoad(&module, "/opt/fake/many.cubin"), 0, "load");
	for (int k = 0; k < kernels; k++) {
		CUfunction f;

		snprintf(name, sizeof(name), "kernel_%03d", k);
		expect(cuModuleGetFunction(&f, module, name), 0, "get");
		for (int i = 0; i < launches; i++)
			expect(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), 0, "launch");
	}
	while (nanosleep(&ts, &ts))
		;
	return 0;
}
