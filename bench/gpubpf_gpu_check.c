/* On a GPU: eBPF programs pasted into vec_add do what the interpreter predicts; their cost. */
#include <cuda.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gpubpf/bpf_attach.h"
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_trace.h"
#include "gpubpf/gpubpf.h"
#include "tests/gpubpf/bpf_sim.h"
#include "trace/records_core.h"
#include "cuda_check.h"

/*
 * Without the injected library: this harness does by hand what `grtrace record
 * --bpf` will do, through the driver API. It instruments samples/gpu-bpf's
 * vec_add with each sample (bpf_attach.c), JIT-loads the result, allocates the
 * maps and the environment as gpu_abi.h lays them out, launches, reads back,
 * and compares with the reference interpreter running the same launches. Then
 * it times 10,000 launches of a 1M-element vec_add bare and with the four
 * programs of the design's overhead targets.
 *
 * It also runs the coverage programs of tests/gpubpf/progs (every ALU operation,
 * the atomics, hashes, rings, per-SM maps, the stack in local memory) in
 * kernels of their own and compares their maps with the interpreter's.
 *
 * Usage: gpubpf_gpu_check DIR [OUTDIR]   (DIR as bench/gpubpf_h100.sh builds it)
 */


static int failures;
static const char *dir, *out_dir;

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

/* --- one instrumented module and its device memory ---------------------------------------- */

struct run {
	struct gpubpf_bundle b;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr env, printk, map[GRT_BPF_MAX_MAPS];
	size_t map_len[GRT_BPF_MAX_MAPS], printk_len;
	struct grt_bpf_env host_env;
	double prepare_ms, attach_ms, jit_ms;
};

static CUdeviceptr alloc_zeroed(size_t len)
{
	CUdeviceptr p;

	CK(cuMemAlloc(&p, len));
	CK(cuMemsetD8(p, 0, len));
	return p;
}

static void ring_init(CUdeviceptr ring, size_t len)
{
	uint64_t capacity = len - GRT_BPF_RING_HEAD_SIZE;

	CK(cuMemsetD8(ring, 0, len));
	CK(cuMemcpyHtoD(ring + 16, &capacity, 8));
}

static bool run_open(struct run *r, const char *object, const char *ptx, size_t ptx_len,
		     const char *kernel, uint32_t thread_capacity, size_t ring_bytes)
{
	struct gpubpf_attach_result res;
	char err[512];
	double t0 = now_ms();

	memset(r, 0, sizeof(*r));
	if (gpubpf_bundle_load(object, NULL, &r->b, err, sizeof(err))) {
		verdict(false, "%s", err);
		return false;
	}
	r->prepare_ms = now_ms() - t0;
	t0 = now_ms();
	if (gpubpf_attach_bundle(ptx, ptx_len, &r->b, &res) || res.rw.nr_instrumented != 1) {
		verdict(false, "%s: %s not instrumented: %s", object, kernel,
			res.rw.nr_kernels ? res.rw.kernels[0].reason : res.rw.error);
		gpubpf_attach_result_free(&res);
		return false;
	}
	r->attach_ms = now_ms() - t0;
	t0 = now_ms();
	CK(cuModuleLoadData(&r->mod, res.rw.ptx));
	r->jit_ms = now_ms() - t0;
	gpubpf_attach_result_free(&res);
	CK(cuModuleGetFunction(&r->fn, r->mod, kernel));
	r->host_env.magic = GRT_BPF_ENV_MAGIC;
	r->host_env.version = GRT_BPF_ENV_VERSION;
	r->host_env.thread_capacity = thread_capacity;
	r->host_env.pid_tgid = (4242ull << 32) | 4243; /* the interpreter's, for equal maps */
	r->host_env.clock_mult = 1ull << 32; /* ktime = globaltimer here: no calibration */
	for (size_t i = 0; i < r->b.obj.nr_maps; i++) {
		const struct gpubpf_map *m = &r->b.obj.maps[i];
		struct gpubpf_map_shape s = {m->type, m->key_size, m->value_size, m->max_entries};

		if (m->rodata)
			continue;
		r->map_len[i] = gpubpf_map_bytes(&s, thread_capacity, ring_bytes);
		r->map[i] = alloc_zeroed(r->map_len[i]);
		if (gpubpf_map_is_ring(m->type))
			ring_init(r->map[i], r->map_len[i]);
		r->host_env.map[i] = r->map[i];
	}
	r->printk_len = GRT_BPF_RING_HEAD_SIZE + ring_bytes;
	r->printk = alloc_zeroed(r->printk_len);
	ring_init(r->printk, r->printk_len);
	r->host_env.printk_ring = r->printk;
	CK(cuMemAlloc(&r->env, sizeof(r->host_env)));
	CK(cuMemcpyHtoD(r->env, &r->host_env, sizeof(r->host_env)));
	return true;
}

static void run_close(struct run *r)
{
	for (size_t i = 0; i < GRT_BPF_MAX_MAPS; i++)
		if (r->map[i])
			cuMemFree(r->map[i]);
	cuMemFree(r->printk);
	cuMemFree(r->env);
	cuModuleUnload(r->mod);
	gpubpf_bundle_free(&r->b);
}

static uint8_t *read_back(CUdeviceptr p, size_t len)
{
	uint8_t *h = malloc(len);

	CK(cuMemcpyDtoH(h, p, len));
	return h;
}

/* --- vec_add ------------------------------------------------------------------------------- */

struct vec {
	int n, blocks;
	CUdeviceptr a, b, c;
	size_t bytes;
};

static void vec_init(struct vec *v, int n)
{
	float *h = malloc((size_t)n * sizeof(float));

	v->n = n;
	v->blocks = (n + 255) / 256;
	v->bytes = (size_t)n * sizeof(float);
	CK(cuMemAlloc(&v->a, v->bytes));
	CK(cuMemAlloc(&v->b, v->bytes));
	CK(cuMemAlloc(&v->c, v->bytes));
	for (int i = 0; i < n; i++)
		h[i] = (float)i;
	CK(cuMemcpyHtoD(v->a, h, v->bytes));
	for (int i = 0; i < n; i++)
		h[i] = (float)(2 * i);
	CK(cuMemcpyHtoD(v->b, h, v->bytes));
	free(h);
}

static void vec_free(struct vec *v)
{
	cuMemFree(v->a);
	cuMemFree(v->b);
	cuMemFree(v->c);
}

/* Launches fn (the original when env is NULL) on the vectors. */
static void vec_launch(CUfunction fn, const struct vec *v, const CUdeviceptr *env)
{
	void *params[] = {(void *)&v->a, (void *)&v->b, (void *)&v->c, (void *)&v->n, (void *)env};

	CK(cuLaunchKernel(fn, (unsigned)v->blocks, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
}

/* --- the samples, against the interpreter --------------------------------------------------- */

static struct sim_config sim_of(const struct vec *v, unsigned launches)
{
	struct sim_config c = {.launch = {.kernel = "vec_add",
					  .grid = {(uint32_t)v->blocks, 1, 1},
					  .block = {256, 1, 1},
					  .params = {v->a, v->b, v->c, (uint64_t)v->n},
					  .nr_sms = 132,
					  .t0_ns = 1,
					  .body_ns = 1000},
			       .launches = launches,
			       .access = {{false, 0, 4}, {false, 1, 4}, {true, 2, 4}},
			       .nr_access = 3,
			       .guard_param = 3,
			       .thread_capacity = (uint32_t)v->blocks * 256,
			       .ring_bytes = 1 << 20};

	return c;
}

struct entries {
	uint64_t count, sum_by_key[8];
};

static int sum_entries(void *arg, uint32_t sub, const uint8_t *key, const uint8_t *value)
{
	struct entries *e = arg;
	uint32_t k;
	uint64_t v;

	memcpy(&k, key, 4);
	memcpy(&v, value, 8);
	e->count++;
	e->sum_by_key[k < 8 ? k : 7] += v;
	return 0;
}

/* The entries of map `name` in an image: how many, and the sums of their first words by key. */
static struct entries entries_of(const struct gpubpf_bundle *b, const char *name,
				 const uint8_t *const *images, const size_t *lens, uint32_t cap)
{
	struct entries e = {0};

	for (size_t i = 0; i < b->obj.nr_maps; i++) {
		const struct gpubpf_map *m = &b->obj.maps[i];
		struct gpubpf_map_shape s = {m->type, m->key_size, m->value_size, m->max_entries};

		if (!strcmp(m->name, name)) {
			if (gpubpf_map_is_ring(m->type))
				e.count = gpubpf_ring_walk(images[i], lens[i], NULL, NULL,
							   &e.sum_by_key[0]);
			else
				gpubpf_map_walk(&s, images[i], lens[i], cap, sum_entries, &e);
		}
	}
	return e;
}

/*
 * For each sample, the maps whose contents do not depend on timing or
 * placement, compared whole (count and per-key sums); the others compared
 * by what must hold anyway.
 */
static void compare_sample(const char *sample, const struct run *r, uint8_t **gpu,
			   const struct sim *s, uint32_t cap, unsigned launches,
			   const struct vec *v)
{
	const uint8_t *sim_images[GRT_BPF_MAX_MAPS];
	const uint8_t *gpu_images[GRT_BPF_MAX_MAPS];
	size_t lens[GRT_BPF_MAX_MAPS];
	static const struct {
		const char *sample, *map;
		bool exact; /* else: same number of entries only */
	} maps[] = {
	    {"exit_times", "thread_exits", false}, {"block_hist", "threads_per_block", true},
	    {"block_hist", "entered", false},	   {"launch_latency", "block_start_ns", false},
	    {"launch_latency", "launches", false}, {"mem_counts", "totals", true},
	    {"sm_placement", "placements", false},
	};

	for (size_t i = 0; i < r->b.obj.nr_maps; i++) {
		sim_images[i] = s->sessions[0].map_mem[i];
		gpu_images[i] = gpu[i];
		lens[i] = r->map_len[i];
	}
	for (size_t k = 0; k < sizeof(maps) / sizeof(maps[0]); k++) {
		struct entries g, want;

		if (strcmp(maps[k].sample, sample))
			continue;
		g = entries_of(&r->b, maps[k].map, gpu_images, lens, cap);
		want = entries_of(&s->bundles[0], maps[k].map, sim_images, lens, cap);
		if (maps[k].exact)
			verdict(
			    g.count == want.count &&
				!memcmp(g.sum_by_key, want.sum_by_key, sizeof(g.sum_by_key)),
			    "%s: map %s equals the interpreter's (%llu entries, key 0 sum %llu)",
			    sample, maps[k].map, (unsigned long long)g.count,
			    (unsigned long long)g.sum_by_key[0]);
		else
			verdict(g.count == want.count,
				"%s: map %s has %llu entries (interpreter: %llu)", sample,
				maps[k].map, (unsigned long long)g.count,
				(unsigned long long)want.count);
	}
	if (!strcmp(sample, "exit_times")) { /* key 1: exits per thread, = launches everywhere */
		struct entries g = entries_of(&r->b, "thread_exits", gpu_images, lens, cap);

		verdict(g.sum_by_key[1] == (uint64_t)launches * (uint64_t)v->blocks * 256,
			"exit_times: %llu exits counted for %d threads x %u launches",
			(unsigned long long)g.sum_by_key[1], v->blocks * 256, launches);
	}
	if (!strcmp(sample, "sm_placement")) {
		struct entries g = entries_of(&r->b, "blocks_per_sm", gpu_images, lens, cap);
		uint64_t sum = 0;

		for (int i = 0; i < 8; i++)
			sum += g.sum_by_key[i];
		verdict(sum == (uint64_t)v->blocks * launches,
			"sm_placement: %llu blocks placed on %llu SMs", (unsigned long long)sum,
			(unsigned long long)g.count);
	}
}

static void write_trace(const char *name, const struct run *r, uint8_t **gpu, uint8_t *printk,
			uint32_t cap)
{
	char path[1024];
	struct grt_file_header h = {.clock_id = GRT_CLOCK_MONOTONIC,
				    .sources_mask = 1u << GRT_SRC_GPU};
	struct grt_event_origin at = {.ts_ns = 1, .pid = (uint32_t)getpid()};
	struct gpubpf_clock clk = {0, 0, 1ull << 32};
	struct grt_writer *w;
	struct gpubpf_out out;

	snprintf(path, sizeof(path), "%s/%s.gpu.grt", out_dir, name);
	w = grt_writer_open(path, &h);
	if (!w)
		return;
	out = gpubpf_out_writer(w);
	gpubpf_trace_bundle(&out, &r->b, 0, &at);
	for (size_t i = 0; i < r->b.obj.nr_maps; i++) {
		if (!gpu[i])
			continue;
		if (gpubpf_map_is_ring(r->b.obj.maps[i].type))
			gpubpf_trace_ring(&out, &r->b, i, gpu[i], r->map_len[i], &clk, &at);
		else
			gpubpf_trace_map(&out, &r->b, i, gpu[i], r->map_len[i], cap, 1, true, &at);
	}
	gpubpf_trace_printk(&out, printk, r->printk_len, &clk, &at);
	grt_writer_close(w, GRT_END_TARGET_EXIT, 2);
}

static void check_sample(const char *sample, const char *ptx, size_t ptx_len, CUfunction orig)
{
	const unsigned launches = 3;
	char object[1024], err[512], path[1024];
	const char *objects[1] = {object};
	struct vec v;
	struct run r;
	struct sim s;
	struct sim_config c;
	uint8_t *gpu[GRT_BPF_MAX_MAPS] = {0}, *want, *got, *printk;
	uint32_t cap;

	snprintf(object, sizeof(object), "%s/samples/%s.bpf.o", dir, sample);
	vec_init(&v, 10000);
	cap = (uint32_t)v.blocks * 256;
	if (!run_open(&r, object, ptx, ptx_len, "vec_add", cap, 1 << 20)) {
		vec_free(&v);
		return;
	}
	vec_launch(orig, &v, NULL);
	CK(cuCtxSynchronize());
	want = read_back(v.c, v.bytes);
	CK(cuMemsetD8(v.c, 0, v.bytes));
	for (unsigned i = 0; i < launches; i++)
		vec_launch(r.fn, &v, &r.env);
	CK(cuCtxSynchronize());
	got = read_back(v.c, v.bytes);
	verdict(!memcmp(want, got, v.bytes), "%s: vec_add's output is bit-identical instrumented",
		sample);
	for (size_t i = 0; i < r.b.obj.nr_maps; i++)
		if (r.map[i])
			gpu[i] = read_back(r.map[i], r.map_len[i]);
	printk = read_back(r.printk, r.printk_len);
	c = sim_of(&v, launches);
	if (sim_run(&s, objects, 1, &c, err, sizeof(err))) {
		verdict(false, "%s: interpreter: %s", sample, err);
	} else {
		compare_sample(sample, &r, gpu, &s, cap, launches, &v);
		snprintf(path, sizeof(path), "%s/%s.sim.grt", out_dir, sample);
		sim_write_trace(&s, path, err, sizeof(err));
	}
	sim_free(&s);
	write_trace(sample, &r, gpu, printk, cap);
	printf("   %s: verify+translate %.2f ms, attach %.2f ms, JIT %.1f ms\n", sample,
	       r.prepare_ms, r.attach_ms, r.jit_ms);
	for (size_t i = 0; i < GRT_BPF_MAX_MAPS; i++)
		free(gpu[i]);
	free(printk);
	free(want);
	free(got);
	run_close(&r);
	vec_free(&v);
}

/* --- the translation's semantics, executed -------------------------------------------------- */

/*
 * The coverage programs of tests/gpubpf/progs attach to kernels named
 * alu_kernel, atomic_kernel, ...: a module of such kernels with four u64
 * parameters and no body of their own runs nothing but the programs. Each
 * runs on 2 blocks of 64 threads; maps that do not depend on timing must
 * equal the interpreter's, word for word where the program is deterministic.
 */
static const char *const empty_kernels[] = {"alu_kernel",  "atomic_kernel", "hash_kernel",
					    "ring_kernel", "percpu_kernel", "stack_kernel"};

static char *empty_kernel_module(void)
{
	static char ptx[8192];
	size_t at =
	    (size_t)snprintf(ptx, sizeof(ptx), ".version 7.8\n.target sm_90\n.address_size 64\n");

	for (size_t i = 0; i < sizeof(empty_kernels) / sizeof(empty_kernels[0]); i++)
		at += (size_t)snprintf(ptx + at, sizeof(ptx) - at,
				       ".visible .entry %s(.param .u64 %s_a, .param .u64 %s_b, "
				       ".param .u64 %s_c, .param .u64 %s_d)\n{\n\tret;\n}\n",
				       empty_kernels[i], empty_kernels[i], empty_kernels[i],
				       empty_kernels[i], empty_kernels[i]);
	return ptx;
}

static bool images_equal(const uint8_t *a, const uint8_t *b, size_t len, const char *what,
			 const char *map)
{
	size_t i = 0;

	while (i < len && a[i] == b[i])
		i++;
	verdict(i == len, "%s: map %s equals the interpreter's byte for byte%s", what, map,
		i == len ? "" : " (differs)");
	if (i < len)
		printf("   first difference at byte %zu: GPU 0x%02x, interpreter 0x%02x\n", i, a[i],
		       b[i]);
	return i == len;
}

static void semantics(void)
{
	static const struct {
		const char *object, *kernel, *map;
		size_t
		    exact_bytes; /* bytes compared byte for byte from the map's start; 0: entries */
		bool sums; /* entries: compare the sums of their first words, not their count */
	} cases[] = {
	    {"alu_cover", "alu_kernel", "results", 32 * 8, false},
	    {"atomics", "atomic_kernel", "counters", 5 * 8, false}, /* add .. xor */
	    {"hash_ops", "hash_kernel", "per_warp", 0, false},
	    {"ringbuf", "ring_kernel", "samples", 0, false},
	    {"percpu", "percpu_kernel", "per_sm", 0, true}, /* threads per SM: the SMs vary */
	    {"stack_paths", "stack_kernel", "out", 0, false},
	};
	char *module = empty_kernel_module();
	uint64_t params[4] = {0x123456789abcdef0ull, 13, 0x80000001u, 7};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char object[1024], err[512];
		const char *objects[1] = {object};
		struct run r;
		struct sim s;
		struct sim_config cfg = {
		    .launch = {.kernel = cases[c].kernel,
			       .grid = {2, 1, 1},
			       .block = {64, 1, 1},
			       .params = {params[0], params[1], params[2], params[3]},
			       .nr_sms = 132},
		    .guard_param = -1,
		    .thread_capacity = 128,
		    .ring_bytes = 1 << 20};
		void *args[5] = {&params[0], &params[1], &params[2], &params[3], NULL};
		CUfunction fn;

		snprintf(object, sizeof(object), "%s/progs/%s.bpf.o", dir, cases[c].object);
		if (!run_open(&r, object, module, strlen(module), cases[c].kernel, 128, 1 << 20))
			continue;
		fn = r.fn;
		args[4] = &r.env;
		CK(cuLaunchKernel(fn, 2, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
		CK(cuCtxSynchronize());
		if (sim_run(&s, objects, 1, &cfg, err, sizeof(err))) {
			verdict(false, "%s: interpreter: %s", cases[c].object, err);
			run_close(&r);
			continue;
		}
		for (size_t i = 0; i < r.b.obj.nr_maps; i++) {
			const struct gpubpf_map *m = &r.b.obj.maps[i];
			uint8_t *gpu;
			struct entries g, want;
			const uint8_t *gi[GRT_BPF_MAX_MAPS] = {0}, *si[GRT_BPF_MAX_MAPS] = {0};

			if (m->rodata || strcmp(m->name, cases[c].map))
				continue;
			gpu = read_back(r.map[i], r.map_len[i]);
			if (cases[c].exact_bytes) {
				images_equal(gpu, s.sessions[0].map_mem[i], cases[c].exact_bytes,
					     cases[c].object, m->name);
			} else {
				gi[i] = gpu;
				si[i] = s.sessions[0].map_mem[i];
				g = entries_of(&r.b, m->name, gi, r.map_len, 128);
				want = entries_of(&s.bundles[0], m->name, si, r.map_len, 128);
				if (cases[c].sums)
					verdict(g.sum_by_key[0] == want.sum_by_key[0],
						"%s: map %s sums to %llu (interpreter: %llu)",
						cases[c].object, m->name,
						(unsigned long long)g.sum_by_key[0],
						(unsigned long long)want.sum_by_key[0]);
				else
					verdict(g.count == want.count,
						"%s: map %s has %llu entries (interpreter: %llu)",
						cases[c].object, m->name,
						(unsigned long long)g.count,
						(unsigned long long)want.count);
			}
			free(gpu);
		}
		sim_free(&s);
		run_close(&r);
	}
}

/* --- overhead --------------------------------------------------------------------------------- */

#define BENCH_LAUNCHES 10000
#define BENCH_N (1 << 20)

/* ms for BENCH_LAUNCHES launches; ring: the ring's head reset before each (as a drain would). */
static double time_launches(CUfunction fn, const struct vec *v, const CUdeviceptr *env,
			    CUdeviceptr ring)
{
	CUevent start, stop;
	float ms;

	CK(cuEventCreate(&start, 0));
	CK(cuEventCreate(&stop, 0));
	for (int i = 0; i < 20; i++) /* warm-up */
		vec_launch(fn, v, env);
	CK(cuEventRecord(start, NULL));
	for (int i = 0; i < BENCH_LAUNCHES; i++) {
		if (ring)
			CK(cuMemsetD32Async(ring, 0, 2, NULL));
		vec_launch(fn, v, env);
	}
	CK(cuEventRecord(stop, NULL));
	CK(cuEventSynchronize(stop));
	CK(cuEventElapsedTime(&ms, start, stop));
	cuEventDestroy(start);
	cuEventDestroy(stop);
	return ms;
}

static void overhead(const char *ptx, size_t ptx_len, CUfunction orig)
{
	static const struct {
		const char *object, *what;
		double target; /* allowed factor */
		bool ring;
	} cases[] = {
	    {"empty", "empty kprobe + kretprobe", 1.15, false},
	    {"counter", "per-thread counter (threadhist)", 1.25, false},
	    {"ring", "one ring event per thread", 2.00, true},
	    {"memcount", "memcapture counting", 3.00, false},
	    {"memcount_sm", "memcapture counting per SM", 3.00, false},
	};
	struct vec v;
	CUdeviceptr scratch;
	double base, base_ring;

	vec_init(&v, BENCH_N);
	CK(cuMemAlloc(&scratch, 64));
	base = time_launches(orig, &v, NULL, 0);
	base_ring = time_launches(orig, &v, NULL, scratch);
	printf("   %d launches of vec_add, %d elements: %.1f ms (%.2f us each); with a head reset "
	       "each: %.1f ms\n",
	       BENCH_LAUNCHES, BENCH_N, base, base * 1e3 / BENCH_LAUNCHES, base_ring);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char object[1024];
		struct run r;
		double ms, ref = cases[i].ring ? base_ring : base;
		uint64_t dropped = 0;

		snprintf(object, sizeof(object), "%s/bench/%s.bpf.o", dir, cases[i].object);
		if (!run_open(&r, object, ptx, ptx_len, "vec_add", (uint32_t)v.blocks * 256,
			      64u << 20))
			continue;
		ms = time_launches(r.fn, &v, &r.env, cases[i].ring ? r.map[0] : 0);
		if (cases[i].ring) {
			CK(cuMemcpyDtoH(&dropped, r.map[0] + 8, 8));
			verdict(dropped == 0, "%s: no event lost (ring reset per launch)",
				cases[i].what);
		}
		verdict(ms <= ref * cases[i].target, "%s: %.1f ms, %+.1f%% (target %+.0f%%)",
			cases[i].what, ms, (ms / ref - 1) * 100, (cases[i].target - 1) * 100);
		run_close(&r);
	}
	cuMemFree(scratch);
	vec_free(&v);
}

int main(int argc, char **argv)
{
	static const char *const samples[] = {"exit_times", "block_hist", "launch_latency",
					      "mem_counts", "sm_placement"};
	char path[1024], name[256];
	CUdevice dev;
	CUcontext ctx;
	CUmodule orig_mod;
	CUfunction orig;
	size_t ptx_len;
	char *ptx;
	int major, minor, sms;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [OUTDIR]\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	out_dir = argc > 2 ? argv[2] : argv[1];
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	printf("device: %s, sm_%d%d, %d SMs\n", name, major, minor, sms);
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	snprintf(path, sizeof(path), "%s/vec_add.sm_90.ptx", dir);
	ptx = gpubpf_read_file(path, &ptx_len);
	if (!ptx) {
		printf("FAIL - cannot read %s\n", path);
		return 1;
	}
	CK(cuModuleLoadData(&orig_mod, ptx));
	CK(cuModuleGetFunction(&orig, orig_mod, "vec_add"));
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		check_sample(samples[i], ptx, ptx_len, orig);
	semantics();
	overhead(ptx, ptx_len, orig);
	free(ptx);
	cuModuleUnload(orig_mod);
	cuDevicePrimaryCtxRelease(dev);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
