/* On a GPU: rewritten kernels JIT, give bit-identical output, and fill the probe buffer. */
#include <cuda.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "inject/fatbin.h"
#include "inject/probe_buffer.h"
#include "inject/ptx_rewrite.h"
#include "inject/ptx_summarize.h"
#include "cuda_check.h"

static int failures;
static CUfunction summarize_fn; /* the library's __grt_summarize */


static void verdict(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdict(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures += !ok;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		printf("FAIL - cannot read %s\n", path);
		exit(1);
	}
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		exit(1);
	buf[n] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

/* One kernel to compare: its buffers, how to fill them, how to launch it. */
struct kcase {
	const char *ptx_file;
	const char *kernel;
	unsigned grid[3], block[3], shared;
	int n;
	size_t in_bytes, out_bytes;
	void (*fill)(void *in, int n); /* host input pattern */
	int nargs;		       /* kernel's own arguments, built by args() */
	void (*args)(void **argv, CUdeviceptr *in, CUdeviceptr *out, int *n);
	const char *global; /* compare this module global instead of `out` */
};

static void fill_floats(void *p, int n)
{
	float *f = p;

	for (int i = 0; i < n; i++)
		f[i] = (float)(i % 7);
}

static void fill_ints(void *p, int n)
{
	int *v = p;

	for (int i = 0; i < n; i++)
		v[i] = (int)((uint32_t)(i * 2654435761u) >> 7) % 23 - 5;
}

static void args_out_in_n(void **a, CUdeviceptr *in, CUdeviceptr *out, int *n)
{
	a[0] = out, a[1] = in, a[2] = n;
}

static void args_in_out_n(void **a, CUdeviceptr *in, CUdeviceptr *out, int *n)
{
	a[0] = in, a[1] = out, a[2] = n;
}

static void args_data_n(void **a, CUdeviceptr *in, CUdeviceptr *out, int *n)
{
	a[0] = out, a[1] = n;
	(void)in;
}

static void args_out(void **a, CUdeviceptr *in, CUdeviceptr *out, int *n)
{
	a[0] = out;
	(void)in, (void)n;
}

static void args_none(void **a, CUdeviceptr *in, CUdeviceptr *out, int *n)
{
	(void)a, (void)in, (void)out, (void)n;
}

#define N_BIG 1000003
static const struct kcase cases[] = {
    {"early_return.ptx",
     "early_return",
     {782, 1, 1},
     {128, 1, 1},
     0,
     100000,
     100000 * 4,
     100000 * 4,
     fill_ints,
     3,
     args_out_in_n},
    {"barrier_shuffle.ptx",
     "block_sum",
     {4096, 1, 1},
     {256, 1, 1},
     0,
     1 << 20,
     (1 << 20) * 4,
     4,
     fill_floats,
     3,
     args_in_out_n},
    {"dynamic_shared.ptx",
     "reverse_block",
     {258, 1, 1},
     {256, 1, 1},
     1024,
     65553,
     65553 * 4,
     65553 * 4,
     fill_ints,
     2,
     args_data_n},
    {"device_call.ptx",
     "call_chain",
     {400, 1, 1},
     {256, 1, 1},
     0,
     102400,
     102400 * 4,
     102400 * 8,
     fill_floats,
     3,
     args_out_in_n},
    {"multi_kernel.ptx",
     "grid_3d",
     {5, 3, 2},
     {8, 4, 2},
     0,
     0,
     4,
     40 * 12 * 4 * 4,
     NULL,
     1,
     args_out},
    {"multi_kernel.ptx",
     "no_params",
     {7, 1, 1},
     {64, 1, 1},
     0,
     0,
     4,
     4,
     NULL,
     0,
     args_none,
     "counter"},
};

struct run_out {
	void *host_out;
	struct grt_probe_span *recs;
	uint8_t totals[GRT_PROBE_AGG_END];
};

/*
 * Runs the library's summarizer over njobs jobs (device memory) and waits;
 * the SM slots written are the device's.
 */
static void summarize(CUdeviceptr jobs, unsigned njobs, unsigned sm_slots)
{
	void *argv[2] = {&jobs, &sm_slots};

	CK(cuLaunchKernel(summarize_fn, njobs, 1, 1, GRT_SUMMARIZE_THREADS, 1, 1, 0, 0, argv, NULL));
	CK(cuCtxSynchronize());
}

/* One job in device memory: buffer `probe`, `spans` spans, tag. */
static CUdeviceptr one_job(CUdeviceptr probe, uint64_t spans, uint16_t tag)
{
	struct grt_probe_summary_job job = {probe, (uint32_t)spans, tag};
	CUdeviceptr d;

	CK(cuMemAlloc(&d, sizeof(job)));
	CK(cuMemcpyHtoD(d, &job, sizeof(job)));
	return d;
}

/* Runs a case on `fn`; with a probe buffer of `slots` spans (launch tag 1) when probe != 0. */
static void run_case(const struct kcase *k, CUmodule mod, CUfunction fn, CUdeviceptr probe,
		     uint64_t slots, bool instrumented, struct run_out *o)
{
	CUdeviceptr in, out;
	void *argv[8], *hin = calloc(1, k->in_bytes);
	int n = k->n;
	size_t gsize;
	unsigned blocks = k->grid[0] * k->grid[1] * k->grid[2];

	CK(cuMemAlloc(&in, k->in_bytes));
	if (!k->global)
		CK(cuMemAlloc(&out, k->out_bytes));
	if (k->fill)
		k->fill(hin, (int)(k->in_bytes / 4));
	CK(cuMemcpyHtoD(in, hin, k->in_bytes));
	if (k->global) {
		CK(cuModuleGetGlobal(&out, &gsize, mod, k->global));
		CK(cuMemsetD8(out, 0, gsize));
	} else if (k->args == args_data_n) { /* works in place on its input */
		CK(cuMemcpyHtoD(out, hin, k->out_bytes));
	} else {
		CK(cuMemsetD8(out, 0, k->out_bytes));
	}
	k->args(argv, &in, &out, &n);
	uint64_t param = probe ? grt_probe_param(probe, 1) : 0;

	if (instrumented) {
		argv[k->nargs] = &param;
		if (probe)
			CK(cuMemsetD8(probe, 0, grt_probe_buffer_size(GRT_PROBE_BLOCK, slots)));
	}
	CK(cuLaunchKernel(fn, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
			  k->block[2], k->shared, 0, argv, NULL));
	CK(cuCtxSynchronize());
	o->host_out = malloc(k->out_bytes);
	CK(cuMemcpyDtoH(o->host_out, out, k->out_bytes));
	if (instrumented && probe) {
		CUdeviceptr job = one_job(probe, slots < blocks ? slots : blocks, 1);

		summarize(job, 1, GRT_PROBE_SM_SLOTS);
		CK(cuMemFree(job));
		o->recs = calloc(blocks, sizeof(*o->recs));
		CK(cuMemcpyDtoH(o->totals, probe, GRT_PROBE_AGG_END));
		CK(cuMemcpyDtoH(o->recs, probe + GRT_PROBE_AGG_END,
				(slots < blocks ? slots : blocks) * sizeof(*o->recs)));
	}
	CK(cuMemFree(in));
	if (!k->global)
		CK(cuMemFree(out));
	free(hin);
}

/* The summarizer's totals say what the spans say: per SM blocks, first start, last end, busy. */
static bool totals_match(const struct run_out *o, unsigned blocks)
{
	const struct grt_probe_sm *sm = (const void *)(o->totals + GRT_PROBE_SM_OFF);
	const uint32_t *hist = (const void *)(o->totals + GRT_PROBE_HIST_OFF);
	uint64_t n[GRT_PROBE_SM_SLOTS] = {0}, first[GRT_PROBE_SM_SLOTS], last[GRT_PROBE_SM_SLOTS] = {0};
	uint64_t busy[GRT_PROBE_SM_SLOTS] = {0}, hsum = 0;

	uint32_t hist_expect[GRT_PROBE_HIST_BUCKETS] = {0};

	memset(first, 0xff, sizeof(first));
	for (unsigned i = 0; i < blocks; i++) {
		const struct grt_probe_span *r = &o->recs[i];
		unsigned s = r->smid < GRT_PROBE_SM_SLOTS ? r->smid : GRT_PROBE_SM_SLOTS - 1;

		n[s]++;
		busy[s] += grt_probe_dur_ns(r->dur);
		hist_expect[grt_probe_bucket((uint32_t)grt_probe_dur_ns(r->dur))]++;
		first[s] = r->start_ns < first[s] ? r->start_ns : first[s];
		if (r->start_ns + grt_probe_dur_ns(r->dur) > last[s])
			last[s] = r->start_ns + grt_probe_dur_ns(r->dur);
	}
	for (unsigned i = 0; i < GRT_PROBE_HIST_BUCKETS; i++) {
		hsum += hist[i];
		if (hist[i] != hist_expect[i]) {
			printf("  histogram bucket %u: %u, spans %u\n", i, hist[i], hist_expect[i]);
			return false;
		}
	}
	for (unsigned s = 0; s < GRT_PROBE_SM_SLOTS; s++)
		if (sm[s].blocks != n[s] || sm[s].busy_ns != busy[s] ||
		    (n[s] && (~sm[s].first_start_inv != first[s] || sm[s].last_end != last[s]))) {
			printf("  sm %u: totals %u blocks %llu..%llu, spans %llu blocks %llu..%llu\n", s,
			       sm[s].blocks, (unsigned long long)~sm[s].first_start_inv,
			       (unsigned long long)sm[s].last_end, (unsigned long long)n[s],
			       (unsigned long long)first[s], (unsigned long long)last[s]);
			return false;
		}
	return hsum == blocks;
}

/* Every span of a complete launch: the launch's tag, a sane SM, a start and a duration. */
static bool records_ok(const struct kcase *k, const struct run_out *o, int sms, uint64_t *max_ns)
{
	unsigned blocks = k->grid[0] * k->grid[1] * k->grid[2];

	*max_ns = 0;
	for (unsigned i = 0; i < blocks; i++) {
		const struct grt_probe_span *r = &o->recs[i];

		if (r->tag != 1 || r->smid >= (unsigned)sms || !r->start_ns ||
		    grt_probe_dur_ns(r->dur) > 1000000000ull) {
			printf("  span %u: tag %u sm %u start %llu dur %u\n", i, r->tag, r->smid,
			       (unsigned long long)r->start_ns, r->dur);
			return false;
		}
		if (grt_probe_dur_ns(r->dur) > *max_ns)
			*max_ns = grt_probe_dur_ns(r->dur);
	}
	return totals_match(o, blocks);
}

/*
 * The copy's module variables are the original's: each address slot of the
 * rewrite gets the address of its variable in m0 (what the injected library
 * does after loading a copy, src/inject/module_vars.c).
 */
static void fill_slots(CUmodule m0, CUmodule m1, const struct ptx_rewrite_result *res)
{
	for (size_t i = 0; i < res->nr_slots; i++) {
		CUdeviceptr var, slot;
		size_t bytes;

		CK(cuModuleGetGlobal(&var, &bytes, m0, res->slots[i].var));
		CK(cuModuleGetGlobal(&slot, &bytes, m1, res->slots[i].slot));
		CK(cuMemcpyHtoD(slot, &var, sizeof(var)));
	}
}

static void check_case(const char *dir, const struct kcase *k, int sms)
{
	char path[512];
	size_t len;
	char *ptx;
	struct ptx_rewrite_result res;
	const struct ptx_kernel_result *kr;
	CUmodule m0, m1;
	CUfunction f0, f1;
	CUdeviceptr probe;
	struct run_out a = {0}, b = {0}, c = {0};
	unsigned blocks = k->grid[0] * k->grid[1] * k->grid[2];
	uint64_t max_ns = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, k->ptx_file);
	ptx = slurp(path, &len);
	if (ptx_rewrite(ptx, len, NULL, &res)) {
		verdict(false, "%s: rewrite: %s", k->kernel, res.error);
		return;
	}
	kr = ptx_rewrite_find(&res, k->kernel);
	CK(cuModuleLoadData(&m0, ptx));
	CK(cuModuleLoadData(&m1, res.ptx));
	CK(cuModuleGetFunction(&f0, m0, k->kernel));
	CK(cuModuleGetFunction(&f1, m1, k->kernel));
	fill_slots(m0, m1, &res);
	CK(cuMemAlloc(&probe, grt_probe_buffer_size(GRT_PROBE_BLOCK, blocks)));
	/* a kernel's module variables are m0's in every run (the copy reaches them by address) */
	run_case(k, m0, f0, 0, 0, false, &a);
	run_case(k, m0, f1, probe, blocks, true, &b);
	run_case(k, m0, f1, 0, 0, true, &c); /* NULL buffer: probes off */
	verdict(kr && kr->instrumented && !memcmp(a.host_out, b.host_out, k->out_bytes) &&
		    !memcmp(a.host_out, c.host_out, k->out_bytes),
		"%s: instrumented output bit-identical (%zu bytes), also with a NULL buffer",
		k->kernel, k->out_bytes);
	bool recs_ok = records_ok(k, &b, sms, &max_ns);

	verdict(recs_ok,
		"%s: %u blocks, every span tagged and consistent, the summarizer's SM totals and "
		"histogram agree "
		"(longest block %.1f us)",
		k->kernel, blocks, max_ns / 1e3);
	CK(cuMemFree(probe));
	CK(cuModuleUnload(m0));
	CK(cuModuleUnload(m1));
	free(a.host_out), free(b.host_out), free(c.host_out), free(b.recs);
	ptx_rewrite_result_free(&res);
	free(ptx);
}

/* ---- vector add from a fat binary: attach cost, thread mode, capacity, launch overhead ---- */

struct vadd {
	CUdeviceptr a, b, c;
	int n;
	unsigned grid, block;
};

static void vadd_launch(CUfunction f, struct vadd *v, CUdeviceptr probe, uint16_t tag)
{
	uint64_t param = probe ? grt_probe_param(probe, tag) : 0;
	void *argv[5] = {&v->a, &v->b, &v->c, &v->n, &param};

	CK(cuLaunchKernel(f, v->grid, 1, 1, v->block, 1, 1, 0, 0, argv, NULL));
}

static void *vadd_result(struct vadd *v)
{
	float *h = malloc((size_t)v->n * 4);

	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h, v->c, (size_t)v->n * 4));
	CK(cuMemsetD8(v->c, 0, (size_t)v->n * 4));
	return h;
}

static CUevent timing[2];

static void time_start(void)
{
	if (!timing[0]) {
		CK(cuEventCreate(&timing[0], 0));
		CK(cuEventCreate(&timing[1], 0));
	}
	CK(cuEventRecord(timing[0], 0));
}

/* µs per item since time_start() */
static double time_per(int items)
{
	float ms;

	CK(cuEventRecord(timing[1], 0));
	CK(cuEventSynchronize(timing[1]));
	CK(cuEventElapsedTime(&ms, timing[0], timing[1]));
	return ms * 1e3 / items;
}

/* Mean µs per launch over `reps` launches, no reset between them, each with a new tag. */
static double vadd_time(CUfunction f, struct vadd *v, CUdeviceptr probe, int reps)
{
	time_start();
	for (int i = 0; i < reps; i++)
		vadd_launch(f, v, probe, (uint16_t)(i % 65535 + 1));
	return time_per(reps);
}

/* Mean µs per launch summarized: one summarizer launch over `reps` jobs for the same buffer. */
static double summarize_time(CUdeviceptr probe, uint64_t blocks, uint16_t tag, unsigned sm_slots,
			     int reps)
{
	struct grt_probe_summary_job *jobs = calloc((size_t)reps, sizeof(*jobs));
	CUdeviceptr d;
	double us;

	for (int i = 0; i < reps; i++)
		jobs[i] = (struct grt_probe_summary_job){probe, (uint32_t)blocks, tag};
	CK(cuMemAlloc(&d, (size_t)reps * sizeof(*jobs)));
	CK(cuMemcpyHtoD(d, jobs, (size_t)reps * sizeof(*jobs)));
	time_start();
	summarize(d, (unsigned)reps, sm_slots);
	us = time_per(reps);
	CK(cuMemFree(d));
	free(jobs);
	return us;
}

static void check_vector_add(const char *dir, int sms, unsigned arch)
{
	char path[512];
	struct fatbin_ptx ptx;
	struct ptx_rewrite_opts thread_opts = {.mode = GRT_PROBE_THREAD};
	struct ptx_rewrite_result rb, rt;
	struct vadd v = {.n = N_BIG, .block = 256};
	CUmodule m0, m1, m2;
	CUfunction f0, f1, f2;
	CUdeviceptr pb, pt;
	uint64_t blocks, threads;
	double t0, t_extract, t_rewrite, t_jit0, t_jit1, us[4];
	float *ha, *hb, *r0, *r1, *r2;
	struct grt_probe_span *sp;
	uint64_t stale = 0;
	bool ok = true;

	snprintf(path, sizeof(path), "%s/vector_add.fatbin", dir);
	t0 = now_ms();
	if (fatbin_find_ptx_file(path, arch, &ptx)) {
		verdict(false, "vector_add: extract: %s", ptx.reason);
		return;
	}
	t_extract = now_ms() - t0;
	t0 = now_ms();
	if (ptx_rewrite(ptx.text, ptx.len, NULL, &rb)) {
		verdict(false, "vector_add: rewrite: %s", rb.error);
		return;
	}
	t_rewrite = now_ms() - t0;
	if (ptx_rewrite(ptx.text, ptx.len, &thread_opts, &rt))
		exit(1);
	t0 = now_ms();
	CK(cuModuleLoadData(&m0, ptx.text));
	t_jit0 = now_ms() - t0;
	t0 = now_ms();
	CK(cuModuleLoadData(&m1, rb.ptx));
	t_jit1 = now_ms() - t0;
	CK(cuModuleLoadData(&m2, rt.ptx));
	CK(cuModuleGetFunction(&f0, m0, "vector_add"));
	CK(cuModuleGetFunction(&f1, m1, "vector_add"));
	CK(cuModuleGetFunction(&f2, m2, "vector_add"));

	v.grid = (unsigned)((v.n + 255) / 256);
	blocks = v.grid;
	threads = blocks * v.block;
	ha = malloc((size_t)v.n * 4), hb = malloc((size_t)v.n * 4);
	for (int i = 0; i < v.n; i++)
		ha[i] = i * 0.37f, hb[i] = 1.0f / (i + 1);
	CK(cuMemAlloc(&v.a, (size_t)v.n * 4));
	CK(cuMemAlloc(&v.b, (size_t)v.n * 4));
	CK(cuMemAlloc(&v.c, (size_t)v.n * 4));
	CK(cuMemcpyHtoD(v.a, ha, (size_t)v.n * 4));
	CK(cuMemcpyHtoD(v.b, hb, (size_t)v.n * 4));
	CK(cuMemAlloc(&pb, grt_probe_buffer_size(GRT_PROBE_BLOCK, blocks)));
	CK(cuMemAlloc(&pt, grt_probe_buffer_size(GRT_PROBE_THREAD, threads)));
	CK(cuMemsetD8(pb, 0, grt_probe_buffer_size(GRT_PROBE_BLOCK, blocks)));
	CK(cuMemsetD8(pt, 0, grt_probe_buffer_size(GRT_PROBE_THREAD, threads)));

	vadd_launch(f0, &v, pb, 1);
	r0 = vadd_result(&v);
	vadd_launch(f2, &v, pt, 3);
	r2 = vadd_result(&v);
	/* two launches into the same buffer with no reset between: every span has the second tag */
	vadd_launch(f1, &v, pb, 1);
	vadd_launch(f1, &v, pb, 2);
	r1 = vadd_result(&v);
	verdict(!memcmp(r0, r1, (size_t)v.n * 4) && !memcmp(r0, r2, (size_t)v.n * 4),
		"vector_add from the fat binary: block and thread probes bit-identical (%d floats)",
		v.n);
	sp = malloc(threads * sizeof(*sp));
	CK(cuMemcpyDtoH(sp, pb + GRT_PROBE_AGG_END, blocks * sizeof(*sp)));
	for (uint64_t i = 0; i < blocks; i++)
		stale += sp[i].tag != 2 || !sp[i].start_ns || sp[i].smid >= (unsigned)sms;
	verdict(!stale, "vector_add: buffer reused without a reset: %llu of %llu spans stale",
		(unsigned long long)stale, (unsigned long long)blocks);
	/* the summary is rewritten, not added to: the second launch's blocks, then the first's (none
	 * left: every span carries the second tag) */
	uint64_t summed[2];

	for (int t = 0; t < 2; t++) {
		CUdeviceptr job = one_job(pb, blocks, (uint16_t)(2 - t));
		struct grt_probe_sm tot[GRT_PROBE_SM_SLOTS];

		summarize(job, 1, GRT_PROBE_SM_SLOTS);
		CK(cuMemFree(job));
		CK(cuMemcpyDtoH(tot, pb + GRT_PROBE_SM_OFF, sizeof(tot)));
		summed[t] = 0;
		for (unsigned i = 0; i < GRT_PROBE_SM_SLOTS; i++)
			summed[t] += tot[i].blocks;
	}
	verdict(summed[0] == blocks && summed[1] == 0,
		"vector_add: summaries of a reused buffer: %llu blocks with its tag, %llu with the "
		"old one",
		(unsigned long long)summed[0], (unsigned long long)summed[1]);
	CK(cuMemcpyDtoH(sp, pt + GRT_PROBE_HEAD_SIZE, threads * sizeof(*sp)));
	for (uint64_t i = 0; i < threads && ok; i++)
		/* the threads of one block run on one SM */
		ok = sp[i].tag == 3 && sp[i].start_ns && sp[i].smid < (unsigned)sms &&
		     (i % v.block == 0 || sp[i].smid == sp[i - 1].smid);
	verdict(ok, "vector_add thread probe: %llu spans tagged, consistent, one SM per block",
		(unsigned long long)threads);

	vadd_time(f0, &v, 0, 100); /* warm up */
	us[0] = vadd_time(f0, &v, 0, 2000);
	us[1] = vadd_time(f1, &v, pb, 2000);
	us[2] = vadd_time(f2, &v, pt, 2000);
	/* the last launch into pb had tag 2000: every span counts */
	us[3] = summarize_time(pb, blocks, 2000, (unsigned)(sms + 15) / 16 * 16, 2000);
	printf("\n| vector_add, n=%d, %llu blocks (H100 sm count %d) | value |\n|---|---|\n", v.n,
	       (unsigned long long)blocks, sms);
	printf("| PTX extract from fat binary (zstd) | %.3f ms |\n", t_extract);
	printf("| rewrite (block probes) | %.3f ms |\n", t_rewrite);
	printf("| JIT original / rewritten (cuModuleLoadData) | %.2f / %.2f ms |\n", t_jit0,
	       t_jit1);
	printf("| per launch: untraced | %.2f us |\n", us[0]);
	printf("| per launch: block probes (a span per block) | %.2f us (%+.1f%%) |\n", us[1],
	       100 * (us[1] / us[0] - 1));
	printf("| per launch: thread probes | %.2f us (%+.1f%%) |\n", us[2],
	       100 * (us[2] / us[0] - 1));
	printf("| per launch summarized (2000 in one summarizer launch) | %.2f us |\n\n", us[3]);
	(void)sms;
	free(ha), free(hb), free(r0), free(r1), free(r2), free(sp);
	ptx_rewrite_result_free(&rb);
	ptx_rewrite_result_free(&rt);
	fatbin_ptx_free(&ptx);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	CUdevice dev;
	CUcontext ctx;
	int sms, major, minor;
	char name[128];

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	printf("device: %s, sm_%d%d, %d SMs\n", name, major, minor, sms);
	CUmodule sm;

	CK(cuModuleLoadData(&sm, grt_summarize_ptx));
	CK(cuModuleGetFunction(&summarize_fn, sm, GRT_SUMMARIZE_KERNEL));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(dir, &cases[i], sms);
	check_vector_add(dir, sms, (unsigned)(major * 10 + minor));
	CK(cuDevicePrimaryCtxRelease(dev));
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
