/*
 * One thread's life across a loan and an exec, for serve's per-thread cache:
 * N launches of "mine", N of "lent" while the thread is named grtrace-lent
 * (as the inject library names a thread it borrows), N more of "mine" under
 * its own name again; then, with "exec", the same process execs itself and,
 * once past the gate again, makes N launches of "after_exec" on that thread
 * and allocates 4096 bytes. With "lent-main", the main thread stays named
 * grtrace-lent while a thread of its own (lend_worker) makes all the calls
 * and N launches of "mine": the process's name is then grtrace's.
 * usage: cuda_lend_exec N [exec|lent-main]
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "workload.h"

static void launch(CUfunction kernel, int n)
{
	for (int i = 0; i < n; i++)
		expect(cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), 0, "launch");
}

static void *worker(void *arg)
{
	CUmodule module;
	CUfunction mine;

	prctl(PR_SET_NAME, "lend_worker");
	expect(cuInit(0), 0, "cuInit");
	expect(cuModuleLoad(&module, "/opt/fake/lend.cubin"), 0, "load");
	expect(cuModuleGetFunction(&mine, module, "mine"), 0, "get");
	launch(mine, *(int *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	bool after_exec = argc > 2 && !strcmp(argv[2], "after-exec");
	char name[32] = "";
	CUmodule module;
	CUfunction mine, lent;

	pthread_t thread;

	if (n < 0 || (argc > 2 && strcmp(argv[2], "exec") && strcmp(argv[2], "lent-main") &&
		      !after_exec)) {
		fprintf(stderr, "usage: cuda_lend_exec N [exec|lent-main]\n");
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "lent-main")) {
		prctl(PR_SET_NAME, "grtrace-lent");
		if (pthread_create(&thread, NULL, worker, &n) || pthread_join(thread, NULL))
			return 3;
		/* still lent while serve first reads the process's name */
		sleep(1);
		return 0;
	}
	workload_gate();
	expect(cuInit(0), 0, "cuInit");
	expect(cuModuleLoad(&module, "/opt/fake/lend.cubin"), 0, "load");
	if (after_exec) {
		CUdeviceptr ptr;

		expect(cuModuleGetFunction(&mine, module, "after_exec"), 0, "get");
		launch(mine, n);
		/* counted in the process's own counters, which the exec had ended */
		expect(cuMemAlloc_v2(&ptr, 4096), 0, "alloc");
		expect(cuMemFree_v2(ptr), 0, "free");
		return 0;
	}
	expect(cuModuleGetFunction(&mine, module, "mine"), 0, "get");
	expect(cuModuleGetFunction(&lent, module, "lent"), 0, "get");
	launch(mine, n);
	prctl(PR_GET_NAME, name);
	prctl(PR_SET_NAME, "grtrace-lent");
	launch(lent, n);
	prctl(PR_SET_NAME, name);
	launch(mine, n);
	if (argc > 2) {
		char count[16], self[4096];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		/* by its own path, not /proc/self/exe: the new comm is the file's name */
		expect(len <= 0, 0, "readlink");
		self[len] = 0;
		snprintf(count, sizeof(count), "%d", n);
		execl(self, argv[0], count, "after-exec", (char *)NULL);
		perror("cuda_lend_exec: exec");
		return 1;
	}
	return 0;
}
