/*
 * Processes that make driver calls in the ways a recorder must follow
 * (tests/e2e/cuda_inproc.sh): "fork" forks a child that calls the driver
 * without exec; "exec-clean" runs itself again as a child whose environment
 * has no LD_PRELOAD (as a launcher that cleans it would), which calls after
 * DELAY_MS. Every process does the same small, known sequence.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "workload.h"

/*
 * One process's calls: an allocation, N launches of one kernel, a sync, a
 * free; then it stays 200 ms, so that the recorder reads its memory map while
 * it lives (docs/cuda.md, Limits: a process that exits at once may leave its
 * stacks unsymbolized).
 */
static void calls(unsigned int grid, int launches)
{
	CUmodule module;
	CUfunction kernel;
	CUdeviceptr buf;

	expect(cuInit(0), 0, "cuInit");
	expect(cuModuleLoad(&module, "/opt/fake/family.cubin"), 0, "load");
	expect(cuModuleGetFunction(&kernel, module, "family_kernel"), 0, "get");
	expect(cuMemAlloc_v2(&buf, 4096 * grid), 0, "alloc");
	for (int i = 0; i < launches; i++)
		expect(cuLaunchKernel(kernel, grid, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL), 0,
		       "launch");
	expect(cuCtxSynchronize(), 0, "sync");
	expect(cuMemFree_v2(buf), 0, "free");
	usleep(200 * 1000);
}

static int wait_child(pid_t child)
{
	int status;

	if (child < 0 || waitpid(child, &status, 0) != child)
		return 3;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	int delay_ms = argc > 2 ? atoi(argv[2]) : 0;
	pid_t child;

	if (!strcmp(mode, "child")) {
		usleep((useconds_t)delay_ms * 1000);
		calls(3, 5);
		return 0;
	}
	calls(1, 2);
	child = fork();
	if (child == 0 && !strcmp(mode, "fork")) {
		calls(2, 4);
		_exit(0);
	}
	if (child == 0) {
		char delay[16];

		snprintf(delay, sizeof(delay), "%d", delay_ms);
		unsetenv("LD_PRELOAD");
		execl("/proc/self/exe", argv[0], "child", delay, (char *)NULL);
		_exit(127);
	}
	if (wait_child(child))
		return 3;
	calls(4, 1);
	return 0;
}
