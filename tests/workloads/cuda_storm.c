/*
 * Launch storm for the throughput benchmark: THREADS threads call
 * cuLaunchKernel as fast as they can (or at RATE calls/s in total) for
 * SECONDS, then the count is printed: "launches N seconds S rate R".
 * PACE says how a paced thread that is ahead waits for its next batch: spin
 * (the default: it keeps its CPU, as a thread that is busy between its calls)
 * or sleep (it gives the CPU back until the batch is due, as a thread that
 * waits between its calls).
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include "workload.h"

struct storm {
	pthread_t thread;
	CUfunction kernel;
	double seconds;
	double rate; /* this thread's share, 0 = unlimited */
	bool sleep;  /* PACE sleep */
	unsigned long launches;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *storm(void *arg)
{
	struct storm *s = arg;
	CUdeviceptr buf = 0x700000000000ull;
	int n = 1024;
	void *params[] = {&buf, &n};
	double start = now_s(), end = start + s->seconds, t = start;

	while (t < end) {
		/* in batches: the clock is read once per 256 launches */
		for (int i = 0; i < 256; i++)
			cuLaunchKernel(s->kernel, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
		s->launches += 256;
		t = now_s();
		/* paced: wait until the next batch is due */
		double due = s->rate > 0 ? start + (double)s->launches / s->rate : t;
		struct timespec due_ts = {.tv_sec = (time_t)due,
					  .tv_nsec = (long)((due - (double)(time_t)due) * 1e9)};

		while (due > t && t < end) {
			if (s->sleep)
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due_ts, NULL);
			t = now_s();
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	double rate = argc > 3 ? atof(argv[3]) : 0;
	bool sleep = argc > 4 && !strcmp(argv[4], "sleep");
	struct storm *storms = calloc(threads > 0 ? threads : 1, sizeof(*storms));
	unsigned long total = 0;
	CUmodule module;
	CUfunction kernel;
	double start, elapsed;

	if (seconds <= 0 || threads <= 0 || rate < 0 || !storms ||
	    (argc > 4 && !sleep && strcmp(argv[4], "spin"))) {
		fprintf(stderr, "usage: cuda_storm SECONDS [THREADS [RATE [spin|sleep]]]\n");
		return 2;
	}
	workload_gate();
	expect(cuModuleLoad(&module, "/opt/fake/storm.cubin"), 0, "load");
	expect(cuModuleGetFunction(&kernel, module, "storm"), 0, "get");
	start = now_s();
	for (int t = 0; t < threads; t++) {
		storms[t] =
		    (struct storm){.kernel = kernel, .seconds = seconds, .rate = rate / threads,
				    .sleep = sleep};
		pthread_create(&storms[t].thread, NULL, storm, &storms[t]);
	}
	for (int t = 0; t < threads; t++) {
		pthread_join(storms[t].thread, NULL);
		total += storms[t].launches;
	}
	elapsed = now_s() - start;
	printf("launches %lu seconds %.3f rate %.0f\n", total, elapsed, (double)total / elapsed);
	free(storms);
	return 0;
}
