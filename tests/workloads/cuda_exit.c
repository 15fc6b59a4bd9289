/*
 * Ends in a chosen way right after its last driver call, for the recorder's
 * stop and exit tests: "free-exit" frees what it allocated and exits at once,
 * "segv" dies of SIGSEGV holding an allocation, "evil-name" launches a kernel
 * whose name carries terminal escape sequences and a line break.
 */
#include <signal.h>
#include <string.h>
#include "workload.h"

#define EVIL_KERNEL "\x1b[2J\x1b[31mred\x1b[0m\nFAKE REPORT LINE"

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "free-exit";
	CUdeviceptr ptr;
	CUmodule module;
	CUfunction kernel;

	expect(cuInit(0), 0, "cuInit");
	expect(cuMemAlloc_v2(&ptr, 1 << 20), 0, "alloc");
	if (!strcmp(mode, "segv")) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (!strcmp(mode, "evil-name")) {
		expect(cuModuleLoad(&module, "/opt/fake/evil.cubin"), 0, "load");
		expect(cuModuleGetFunction(&kernel, module, EVIL_KERNEL), 0, "get");
		expect(cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), 0, "launch");
	}
	expect(cuMemFree_v2(ptr), 0, "free");
	_exit(0); /* no atexit work: the exit follows the free at once */
}
