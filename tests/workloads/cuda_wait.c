/*
 * Waits for a line on stdin (or SIGUSR1) so a tracer can attach by pid, then
 * launches "waited" K times; with "hang" it then blocks in a stream
 * synchronisation that never returns, with "hang-launch" in a launch.
 */
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include "workload.h"

static void on_usr1(int sig)
{
}

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 5;
	bool hang = argc > 2 && !strcmp(argv[2], "hang");
	bool hang_launch = argc > 2 && !strcmp(argv[2], "hang-launch");
	struct sigaction sa = {.sa_handler = on_usr1};
	CUmodule module;
	CUfunction kernel;
	char line[64];

	/* the handles exist before anyone traces: a late tracer learns the name from cuFuncGetName
	 */
	expect(cuInit(0), 0, "cuInit");
	expect(cuModuleLoad(&module, "/opt/fake/wait.cubin"), 0, "load");
	expect(cuModuleGetFunction(&kernel, module, "waited"), 0, "get");
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	/* a line, EOF or the signal: each means go */
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	for (int i = 0; i < launches; i++)
		expect(cuLaunchKernel(kernel, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL), 0, "launch");
	{
		const char *name = NULL;

		expect(cuFuncGetName(&name, kernel), 0, "name");
		expect(cuLaunchKernel(kernel, 2, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL), 0,
		       "named launch");
	}
	if (hang)
		cuStreamSynchronize(FAKE_STREAM_HANG);
	if (hang_launch)
		cuLaunchKernel(kernel, 3, 1, 1, 64, 1, 1, 0, FAKE_STREAM_HANG, NULL, NULL);
	return 0;
}
