/*
 * T threads x K launches of one kernel, each thread with its own grid width
 * (thread index + 1); with NAME, the threads are named so (grtrace-* names
 * stand for grtrace's own threads inside a target).
 */
#include <pthread.h>
#include "workload.h"

struct worker {
	pthread_t thread;
	CUfunction kernel;
	unsigned int index;
	int launches;
	const char *name;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	CUdeviceptr scratch;

	/* named before its first driver call: the probes read the name at each call */
	if (w->name && pthread_setname_np(pthread_self(), w->name))
		expect(1, 0, "pthread_setname_np");
	expect(cuMemAlloc_v2(&scratch, 4096), 0, "alloc");
	for (int i = 0; i < w->launches; i++)
		expect(
		    cuLaunchKernel(w->kernel, w->index + 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL),
		    0, "launch");
	expect(cuStreamSynchronize(NULL), 0, "sync");
	expect(cuMemFree_v2(scratch), 0, "free");
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	int launches = argc > 2 ? atoi(argv[2]) : 1000;
	const char *thread_name = argc > 3 ? argv[3] : NULL;
	struct worker *workers = calloc(threads > 0 ? threads : 1, sizeof(*workers));
	CUmodule module;
	CUfunction kernel;

	if (threads <= 0 || launches < 0 || !workers) {
		fprintf(stderr, "usage: cuda_threads THREADS LAUNCHES [THREAD-NAME]\n");
		return 2;
	}
	workload_gate();
	expect(cuInit(0), 0, "cuInit");
	expect(cuModuleLoad(&module, "/opt/fake/threads.cubin"), 0, "load");
	expect(cuModuleGetFunction(&kernel, module, "worker_kernel"), 0, "get");
	for (int t = 0; t < threads; t++) {
		workers[t] =
		    (struct worker){.kernel = kernel, .index = (unsigned)t, .launches = launches,
				     .name = thread_name};
		if (pthread_create(&workers[t].thread, NULL, work, &workers[t]))
			expect(1, 0, "pthread_create");

	}
	for (int t = 0; t < threads; t++)
		pthread_join(workers[t].thread, NULL);
	free(workers);
	return 0;
}
