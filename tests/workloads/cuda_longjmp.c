/*
 * Leaves a driver call without returning from it: a signal raised inside
 * cuStreamSynchronize (the fake's FAKE_STREAM_RAISE) is handled by a
 * siglongjmp back into main, as a program that bounds a call's time with an
 * alarm might. Then LAUNCHES launches and an allocation and its free, from
 * main's frame, the same or higher on the stack than the abandoned call.
 * usage: cuda_longjmp [LAUNCHES] (default 10)
 */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include "workload.h"

static sigjmp_buf back;

static void on_signal(int sig)
{
	(void)sig;
	siglongjmp(back, 1);
}

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 10;
	struct sigaction sa = {.sa_handler = on_signal};
	CUmodule module;
	CUfunction kernel;
	CUdeviceptr ptr;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	expect(cuInit(0), 0, "cuInit");
	expect(cuModuleLoad(&module, "/opt/fake/longjmp.cubin"), 0, "load");
	expect(cuModuleGetFunction(&kernel, module, "afterJump"), 0, "get");
	if (!sigsetjmp(back, 1)) {
		cuStreamSynchronize(FAKE_STREAM_RAISE);
		return 1; /* the handler jumps back: never here */
	}
	for (int i = 0; i < launches; i++)
		expect(cuLaunchKernel(kernel, 2, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL), 0, "launch");
	expect(cuMemAlloc_v2(&ptr, 4096), 0, "alloc");
	expect(cuMemFree_v2(ptr), 0, "free");
	return 0;
}
