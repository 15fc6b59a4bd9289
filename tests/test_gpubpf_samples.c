/* The five samples (samples/gpu-bpf): their answers for the test program, kernels compiled. */
#include "gpubpf/bpf_attach.h"
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_sim.h"
#include "gpubpf/gpubpf_test.h"
#include "gpubpf/ptxas_run.h"
#include "test_util.h"

/*
 * samples/gpu-bpf/vec_add.cu with n = 10000: 40 blocks of 256 threads, the
 * last block's upper 240 threads doing nothing, every thread i < n loading
 * a[i] and b[i] and storing c[i]. What the reference interpreter finds here
 * is what the GPU run must find (bench/gpubpf_h100.sh).
 */
#define N_ELEMS 10000
#define BLOCKS 40
#define THREADS 256

static struct sim_config vec_add(unsigned launches)
{
	struct sim_config c = {
	    .launch = {.kernel = "vec_add",
		       .kernel_id = 1,
		       .grid = {BLOCKS, 1, 1},
		       .block = {THREADS, 1, 1},
		       .params = {0x7f0000000000ull, 0x7f0000100000ull, 0x7f0000200000ull, N_ELEMS},
		       .nr_sms = 132,
		       .t0_ns = 5000000,
		       .block_ns = 700,
		       .thread_ns = 3,
		       .body_ns = 900},
	    .launches = launches,
	    .access = {{false, 0, 4}, {false, 1, 4}, {true, 2, 4}},
	    .nr_access = 3,
	    .guard_param = 3,
	    .thread_capacity = BLOCKS * THREADS,
	    .ring_bytes = 1 << 20};

	return c;
}

static bool run(const char *sample, unsigned launches, struct sim *s)
{
	const char *objects[] = {gpubpf_test_object("samples", sample)};
	struct sim_config c = vec_add(launches);
	char err[512];

	if (sim_run(s, objects, 1, &c, err, sizeof(err))) {
		printf("  %s: %s\n", sample, err);
		sim_free(s);
		return false;
	}
	return true;
}

/* The map named `name`'s memory and shape. */
static const uint8_t *map_of(const struct sim *s, const char *name, struct gpubpf_map_shape *shape,
			     size_t *len)
{
	const struct gpubpf_bundle *b = &s->bundles[0];

	for (size_t i = 0; i < b->obj.nr_maps; i++) {
		const struct gpubpf_map *m = &b->obj.maps[i];

		if (strcmp(m->name, name))
			continue;
		*shape =
		    (struct gpubpf_map_shape){m->type, m->key_size, m->value_size, m->max_entries,
					      m->stripe_width};
		*len = s->sessions[0].map_len[b->map_slot_base + i];
		return s->sessions[0].map_mem[b->map_slot_base + i];
	}
	return NULL;
}

/* Word `at` (bytes) of key `key`'s value as the map walk hands it out. */
struct word_of {
	uint32_t key;
	uint64_t at;
	uint64_t value;
};

static int find_word(void *arg, uint32_t sub, const uint8_t *key, const uint8_t *value)
{
	struct word_of *w = arg;
	uint32_t k;

	(void)sub;
	memcpy(&k, key, 4);
	if (k != w->key)
		return 0;
	memcpy(&w->value, value + w->at, 8);
	return 1;
}

static uint64_t u64_at(const struct sim *s, const char *map, size_t index)
{
	struct gpubpf_map_shape shape;
	size_t len;
	const uint8_t *m = map_of(s, map, &shape, &len);
	uint64_t v = 0;

	if (m && shape.stripe_width) {
		/* a counter kept per SM: word `index` of the values, its copies summed by the walk */
		uint64_t stride = grt_bpf_stride(shape.value_size);
		struct word_of w = {(uint32_t)(index * 8 / stride), index * 8 % stride, 0};

		gpubpf_map_walk(&shape, m, len, 0, find_word, &w);
		return w.value;
	}
	if (m && (index + 1) * 8 <= len)
		memcpy(&v, m + index * 8, 8);
	return v;
}

static size_t ring_events(const struct sim *s, const char *map, uint64_t *dropped)
{
	struct gpubpf_map_shape shape;
	size_t len;
	const uint8_t *m = map_of(s, map, &shape, &len);

	return m ? gpubpf_ring_walk(m, len, NULL, NULL, dropped) : 0;
}

static void test_exit_times(void)
{
	struct sim s;
	unsigned once = 0, timed = 0;

	if (!run("exit_times", 1, &s)) {
		CHECK(0);
		return;
	}
	/* per-thread array, key-major: key 0 (exit time) then key 1 (exit count), per thread */
	for (unsigned t = 0; t < BLOCKS * THREADS; t++) {
		timed += u64_at(&s, "thread_exits", t) != 0;
		once += u64_at(&s, "thread_exits", BLOCKS * THREADS + t) == 1;
	}
	CHECK_EQ_U64(timed, BLOCKS * THREADS);
	CHECK_EQ_U64(once, BLOCKS * THREADS);
	sim_free(&s);
	/* three launches: three exits per thread */
	if (!run("exit_times", 3, &s)) {
		CHECK(0);
		return;
	}
	CHECK_EQ_U64(u64_at(&s, "thread_exits", BLOCKS * THREADS + 17), 3);
	sim_free(&s);
}

static void test_block_hist(void)
{
	struct sim s;
	uint64_t sum = 0;

	if (!run("block_hist", 1, &s)) {
		CHECK(0);
		return;
	}
	for (unsigned b = 0; b < 4096; b++)
		CHECK_EQ_U64(u64_at(&s, "threads_per_block", b), b < BLOCKS ? THREADS : 0);
	for (unsigned k = 0; k < 32; k++)
		sum += u64_at(&s, "run_ns_log2", k);
	CHECK_EQ_U64(sum, BLOCKS * THREADS);
	/* every simulated thread runs body_ns = 900 ns: log2 bucket 9 */
	CHECK_EQ_U64(u64_at(&s, "run_ns_log2", 9), BLOCKS * THREADS);
	sim_free(&s);
}

static void test_launch_latency(void)
{
	struct sim s;
	unsigned started = 0;
	uint64_t dropped;

	if (!run("launch_latency", 3, &s)) {
		CHECK(0);
		return;
	}
	for (unsigned b = 0; b < 4096; b++)
		started += u64_at(&s, "block_start_ns", b) != 0;
	CHECK_EQ_U64(started, BLOCKS);
	CHECK_EQ_U64(ring_events(&s, "launches", &dropped), 3);
	CHECK_EQ_U64(dropped, 0);
	sim_free(&s);
}

static void test_mem_counts(void)
{
	struct sim s;

	if (!run("mem_counts", 2, &s)) {
		CHECK(0);
		return;
	}
	CHECK_EQ_U64(u64_at(&s, "totals", 0), 2ull * 2 * N_ELEMS);
	CHECK_EQ_U64(u64_at(&s, "totals", 1), 2ull * N_ELEMS);
	CHECK_EQ_U64(u64_at(&s, "totals", 2), 2ull * 12 * N_ELEMS);
	CHECK_EQ_U64(u64_at(&s, "totals", 3), 0);
	sim_free(&s);
}

static void test_sm_placement(void)
{
	struct sim s;
	uint64_t blocks = 0, dropped;

	if (!run("sm_placement", 1, &s)) {
		CHECK(0);
		return;
	}
	for (unsigned sm = 0; sm < 256; sm++)
		blocks += u64_at(&s, "blocks_per_sm", sm);
	CHECK_EQ_U64(blocks, BLOCKS);
	CHECK_EQ_U64(u64_at(&s, "blocks_per_sm", BLOCKS - 1), 1); /* block b on SM b % 132 */
	CHECK_EQ_U64(ring_events(&s, "placements", &dropped), BLOCKS);
	sim_free(&s);
}

/* Each sample instrumented into the test program's kernel; ptxas registers and instructions. */
static void test_samples_instrument_vec_add(void)
{
	static const char *const samples[] = {"exit_times", "block_hist", "launch_latency",
					      "mem_counts", "sm_placement"};
	char path[512], file[700];
	const char *ptxas = ptxas_find(path, sizeof(path));

	for (int a = 0; a < 2; a++) {
		const char *arch = a ? "sm_90" : "sm_75";
		size_t len;
		char *ptx;
		struct ptxas_result base;

		snprintf(file, sizeof(file), "%s/gpubpf/samples/vec_add.%s.ptx", gpubpf_test_build,
			 arch);
		ptx = gpubpf_read_file(file, &len);
		if (!ptx || !ptxas) {
			printf("  no nvcc-built test program or no ptxas: skipped\n");
			free(ptx);
			return;
		}
		CHECK_EQ_U64(ptxas_compile(ptxas, ptx, arch, &base), 0);
		printf("  %s vec_add: %u registers, %u SASS instructions\n", arch,
		       base.entries[0].registers, base.entries[0].instructions);
		for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
			struct gpubpf_bundle b;
			struct gpubpf_attach_result res;
			struct ptxas_result pr;
			char err[512];

			CHECK_EQ_U64(gpubpf_bundle_load(gpubpf_test_object("samples", samples[i]),
							NULL, &b, err, sizeof(err)),
				     0);
			CHECK_EQ_U64(gpubpf_attach_bundle(ptx, len, &b, &res), 0);
			CHECK_EQ_U64(res.rw.nr_instrumented, 1);
			CHECK_EQ_U64(res.rw.kernels[0].param_index, 4);
			CHECK_EQ_U64(ptxas_compile(ptxas, res.rw.ptx, arch, &pr), 0);
			CHECK_EQ_U64(pr.exit_status, 0);
			printf("  %s vec_add + %s: %u registers, %u SASS instructions\n", arch,
			       samples[i], pr.entries[0].registers, pr.entries[0].instructions);
			gpubpf_attach_result_free(&res);
			gpubpf_bundle_free(&b);
		}
		free(ptx);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	gpubpf_test_init(argv[0]);
	RUN_TEST(test_exit_times);
	RUN_TEST(test_block_hist);
	RUN_TEST(test_launch_latency);
	RUN_TEST(test_mem_counts);
	RUN_TEST(test_sm_placement);
	RUN_TEST(test_samples_instrument_vec_add);
	return TEST_EXIT_STATUS();
}
