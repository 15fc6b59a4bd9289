/* Times what attaching to a module costs on the CPU: PTX extraction from a file, then rewriting. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "inject/fatbin.h"
#include "inject/ptx_rewrite.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Usage: ptx_rewrite_bench FILE [REPS]; prints median extract and rewrite times. */
int main(int argc, char **argv)
{
	int reps = argc > 2 ? atoi(argv[2]) : 50;
	double *extract, *rewrite;
	size_t kernels = 0, instrumented = 0, in_len = 0, out_len = 0;

	if (argc < 2 || reps < 1) {
		fprintf(stderr, "usage: %s FILE [REPS]\n", argv[0]);
		return 2;
	}
	extract = calloc((size_t)reps, sizeof(*extract));
	rewrite = calloc((size_t)reps, sizeof(*rewrite));
	for (int i = 0; i < reps; i++) {
		struct fatbin_ptx ptx;
		struct ptx_rewrite_result res;
		double t0 = now_ms();

		if (fatbin_find_ptx_file(argv[1], 0, &ptx)) {
			fprintf(stderr, "grtrace: %s: %s\n", argv[1], ptx.reason);
			return 1;
		}
		extract[i] = now_ms() - t0;
		t0 = now_ms();
		if (ptx_rewrite(ptx.text, ptx.len, NULL, &res)) {
			fprintf(stderr, "grtrace: %s: %s\n", argv[1], res.error);
			return 1;
		}
		rewrite[i] = now_ms() - t0;
		kernels = res.nr_kernels;
		instrumented = res.nr_instrumented;
		in_len = ptx.len;
		out_len = res.ptx_len;
		ptx_rewrite_result_free(&res);
		fatbin_ptx_free(&ptx);
	}
	qsort(extract, (size_t)reps, sizeof(*extract), cmp_double);
	qsort(rewrite, (size_t)reps, sizeof(*rewrite), cmp_double);
	printf("%s: %zu kernels (%zu instrumented), PTX %zu -> %zu bytes; median of %d: "
	       "extract %.3f ms, rewrite %.3f ms, total %.3f ms\n",
	       argv[1], kernels, instrumented, in_len, out_len, reps, extract[reps / 2],
	       rewrite[reps / 2], extract[reps / 2] + rewrite[reps / 2]);
	free(extract);
	free(rewrite);
	return 0;
}
