/*
 * On a GPU: where the block probe's device time goes in a loop of back-to-back
 * launches. The vector add's PTX is rewritten with block probes, then parts of
 * the probe are taken out of the text one at a time (the entry barrier, either
 * clock read, the whole exit); each variant is JIT-compiled and launched
 * LAUNCHES times on one stream, rounds interleaved. Prints registers, shared
 * bytes and blocks per SM of each, and the median loop time against the
 * original's. Variants without the barrier are for measuring only: the probe
 * needs it (ptx_probe.c).
 * usage: probe_variants VECTOR_ADD.PTX [LAUNCHES [ROUNDS [OTHER.PTX...]]]: each OTHER.PTX, a
 * rewritten vector add (another probe design), is one more variant.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/probe_buffer.h"
#include "inject/ptx_rewrite.h"
#include "cuda_check.h"

#define N (1 << 20)
#define THREADS 256
#define MAX_ROUNDS 15


struct variant {
	const char *name;
	const char *cut;     /* a line of the probe to take out (NULL: none) */
	const char *cut2;    /* and another */
	const char *replace; /* what the cut line becomes (NULL: nothing) */
	bool probed;	     /* runs the rewritten kernel (else the original) */
	char *ptx;
	CUfunction fn;
	double ms[MAX_ROUNDS];
};

static struct variant variants[16] = {
    {"original", NULL, NULL, NULL, false},
    {"probe", NULL, NULL, NULL, true},
    {"no entry clock", "\t@%grt_p_q0 mov.u64 %grt_p_d2, %globaltimer;\n", NULL,
     "\t@%grt_p_q0 mov.u64 %grt_p_d2, 0;\n", true},
    {"no exit clock", "\tmov.u64 %grt_p_d5, %globaltimer;\n", NULL, "\tmov.u64 %grt_p_d5, 0;\n",
     true},
    {"exit barrier 15", "\tbar.sync 0;\n", NULL, "\tbar.sync 15;\n", true},
    {"exit barrier.sync", "\tbar.sync 0;\n", NULL, "\tbarrier.sync 0;\n", true},
    {"no exit", "\tbra $grt_p_exit;\n", NULL, "\tret;\n", true},
    /* 256-thread blocks: warp 0 waits for the count, the others arrive and leave */
    {"exit arrive, warp 0 waits", "// grtrace block probe: exit\n\tbar.sync 0;\n", NULL,
     "// grtrace block probe: exit\n\tmov.u32 %grt_p_r0, %tid.x;\n"
     "\tsetp.lt.u32 %grt_p_q0, %grt_p_r0, 32;\n\t@!%grt_p_q0 bar.arrive 0, 256;\n"
     "\t@!%grt_p_q0 bra $grt_p_exit_done;\n\tbar.sync 0, 256;\n",
     true},
};
static size_t nv = 8;
#define NV nv

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return NULL;
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* text with the first `cut` replaced by `with` (or removed); NULL when cut is not there */
static char *cut_line(const char *text, const char *cut, const char *with)
{
	const char *at = strstr(text, cut);
	size_t head, wl = with ? strlen(with) : 0;
	char *out;

	if (!at)
		return NULL;
	head = (size_t)(at - text);
	out = malloc(strlen(text) + wl + 1);
	memcpy(out, text, head);
	memcpy(out + head, with ? with : "", wl);
	strcpy(out + head + wl, at + strlen(cut));
	return out;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t len = 0;
	char *ptx = argc > 1 ? slurp(argv[1], &len) : NULL;
	int launches = argc > 2 ? atoi(argv[2]) : 10000, rounds = argc > 3 ? atoi(argv[3]) : 5;
	struct ptx_rewrite_opts opts = {.mode = GRT_PROBE_BLOCK};
	struct ptx_rewrite_result rw;
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;
	CUevent e0, e1;
	CUdeviceptr a, b, c, buf;
	int n = N, grid = N / THREADS;

	if (!ptx || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: probe_variants VECTOR_ADD.PTX [LAUNCHES [ROUNDS<=15]]\n");
		return 2;
	}
	for (int i = 4; i < argc && nv < sizeof(variants) / sizeof(variants[0]); i++) {
		size_t other_len;
		char *other = slurp(argv[i], &other_len);

		if (!other) {
			fprintf(stderr, "probe_variants: cannot read %s\n", argv[i]);
			return 1;
		}
		variants[nv++] = (struct variant){.name = argv[i], .probed = false, .ptx = other};
	}
	if (ptx_rewrite(ptx, len, &opts, &rw) || !rw.nr_instrumented) {
		fprintf(stderr, "probe_variants: rewrite: %s\n", rw.error);
		return 1;
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e0, 0));
	CK(cuEventCreate(&e1, 0));
	CK(cuMemAlloc(&a, N * 4));
	CK(cuMemAlloc(&b, N * 4));
	CK(cuMemAlloc(&c, N * 4));
	CK(cuMemAlloc(&buf, grt_probe_buffer_size(GRT_PROBE_BLOCK, (uint64_t)grid)));
	CK(cuMemsetD32(a, 0x3f800000, N));
	CK(cuMemsetD32(b, 0x40000000, N));
	CK(cuMemsetD8(buf, 0, grt_probe_buffer_size(GRT_PROBE_BLOCK, (uint64_t)grid)));
	for (size_t v = 0; v < NV; v++) {
		struct variant *x = &variants[v];
		const char *base = x->ptx ? x->ptx : x->probed ? rw.ptx : ptx;
		char *one = x->cut ? cut_line(base, x->cut, x->replace) : strdup(base);
		char *two = one && x->cut2 ? cut_line(one, x->cut2, NULL) : one;
		CUmodule mod;
		int regs = 0, shared = 0, blocks = 0;

		if (!two) {
			fprintf(stderr, "probe_variants: %s: the probe's text changed\n", x->name);
			return 1;
		}
		x->ptx = two;
		CK(cuModuleLoadData(&mod, x->ptx));
		CK(cuModuleGetFunction(&x->fn, mod, "vector_add"));
		CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, x->fn));
		CK(cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, x->fn));
		CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, x->fn, THREADS, 0));
		printf("%-24s registers %d, shared %d bytes, %d blocks per SM\n", x->name, regs, shared,
		       blocks);
	}
	for (int r = 0; r < rounds; r++)
		for (size_t v = 0; v < NV; v++) {
			struct variant *x = &variants[v];
			uint64_t param = grt_probe_param(buf, 1);
			void *args[] = {&a, &b, &c, &n, &param};
			float ms;

			for (int i = 0; i < 20; i++)
				CK(cuLaunchKernel(x->fn, grid, 1, 1, THREADS, 1, 1, 0, stream, args, NULL));
			CK(cuEventRecord(e0, stream));
			for (int i = 0; i < launches; i++)
				CK(cuLaunchKernel(x->fn, grid, 1, 1, THREADS, 1, 1, 0, stream, args, NULL));
			CK(cuEventRecord(e1, stream));
			CK(cuEventSynchronize(e1));
			CK(cuEventElapsedTime(&ms, e0, e1));
			x->ms[r] = ms;
		}
	printf("%d launches of %d blocks x %d threads, %d rounds interleaved: GPU ms (median, min..max)\n",
	       launches, grid, THREADS, rounds);
	qsort(variants[0].ms, (size_t)rounds, sizeof(double), by_value);
	for (size_t v = 0; v < NV; v++) {
		struct variant *x = &variants[v];

		if (v)
			qsort(x->ms, (size_t)rounds, sizeof(double), by_value);
		printf("%-24s %8.2f ms (%.2f..%.2f)  %+6.1f%%  %.3f us per launch\n", x->name,
		       x->ms[rounds / 2], x->ms[0], x->ms[rounds - 1],
		       (x->ms[rounds / 2] / variants[0].ms[rounds / 2] - 1) * 100,
		       x->ms[rounds / 2] * 1000 / launches);
	}
	return 0;
}
