/* Tests of the inject library's pure parts: ring, clock, summaries, cache, instrumentation tables, copy shapes. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "inject/clock_math.h"
#include "inject/copy_shape.h"
#include "inject/cuda_decls.h"
#include "inject/instr_kernel.h"
#include "inject/launch_summary.h"
#include "inject/probe_cache.h"
#include "inject/shm_ring.h"
#include "inject/work_calls.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"
#include "test_util.h"

static struct shm_ring *ring_new(uint64_t data_size)
{
	struct shm_ring *r = aligned_alloc(4096, shm_ring_map_size(data_size));

	memset(r, 0, shm_ring_map_size(data_size));
	if (shm_ring_init(r, data_size))
		return NULL;
	return r;
}

static void test_ring_rejects_bad_sizes(void)
{
	struct shm_ring *r = aligned_alloc(4096, 4096 * 4);

	CHECK(shm_ring_init(r, 4096 + 8) == -EINVAL);
	CHECK(shm_ring_init(r, 2048) == -EINVAL);
	CHECK(shm_ring_init(r, 8192) == 0);
	CHECK(shm_ring_check(r, shm_ring_map_size(8192)) == 0);
	CHECK(shm_ring_check(r, shm_ring_map_size(4096)) ==
	      -EINVAL); /* mapping shorter than the ring */
	r->magic = 0;
	CHECK(shm_ring_check(r, shm_ring_map_size(8192)) == -EINVAL);
	free(r);
}

static void test_ring_round_trip(void)
{
	struct shm_ring *r = ring_new(4096);
	struct shm_ring_record rec;
	char text[] = "hello ring";

	CHECK(shm_ring_write(r, 7, text, sizeof(text)) == 0);
	CHECK(shm_ring_write(r, 8, "x", 1) == 0);
	CHECK(shm_ring_next(r, &rec, 0, NULL) == 1);
	CHECK_EQ_U64(rec.type, 7);
	CHECK_EQ_U64(rec.len, sizeof(text));
	CHECK_STR((const char *)rec.payload, "hello ring");
	shm_ring_release(r, &rec);
	CHECK(shm_ring_next(r, &rec, 0, NULL) == 1);
	CHECK_EQ_U64(rec.type, 8);
	shm_ring_release(r, &rec);
	CHECK(shm_ring_next(r, &rec, 0, NULL) == 0);
	CHECK_EQ_U64(atomic_load(&r->committed), 2);
	CHECK_EQ_U64(atomic_load(&r->dropped), 0);
	free(r);
}

/* A full ring refuses exactly what does not fit, and counts each refusal once. */
static void test_ring_overflow_exact_drops(void)
{
	struct shm_ring *r = ring_new(4096);
	uint8_t payload[56] = {0}; /* 8-byte header + 56 = 64 bytes a record: 64 fit */
	struct shm_ring_record rec;
	unsigned ok = 0, refused = 0;

	for (unsigned i = 0; i < 100; i++) {
		payload[0] = (uint8_t)i;
		if (shm_ring_write(r, 1, payload, sizeof(payload)))
			refused++;
		else
			ok++;
	}
	CHECK_EQ_U64(ok, 64);
	CHECK_EQ_U64(refused, 36);
	CHECK_EQ_U64(atomic_load(&r->dropped), 36);
	/* freeing one record makes room for exactly one more */
	CHECK(shm_ring_next(r, &rec, 0, NULL) == 1);
	CHECK_EQ_U64(((const uint8_t *)rec.payload)[0], 0);
	shm_ring_release(r, &rec);
	CHECK(shm_ring_write(r, 1, payload, sizeof(payload)) == 0);
	CHECK(shm_ring_write(r, 1, payload, sizeof(payload)) == -ENOSPC);
	CHECK_EQ_U64(atomic_load(&r->dropped), 37);
	/* too large for any ring position: refused and counted */
	CHECK(shm_ring_reserve(r, 1, shm_ring_max_payload(r) + 1) == NULL);
	CHECK_EQ_U64(atomic_load(&r->dropped), 38);
	free(r);
}

/* Records that would cross the end get a pad record in front; order and contents survive. */
static void test_ring_wraps_with_pads(void)
{
	struct shm_ring *r = ring_new(4096);
	struct shm_ring_record rec;
	uint8_t buf[300];
	unsigned next_in = 0, next_out = 0;

	for (unsigned round = 0; round < 200; round++) {
		while (1) {
			unsigned len = 1 + (next_in * 37) % 299;

			memset(buf, (int)(next_in & 0xff), len);
			if (shm_ring_write(r, next_in, buf, len))
				break;
			next_in++;
		}
		atomic_fetch_sub(&r->dropped, 1); /* the refusal that ended the fill */
		while (shm_ring_next(r, &rec, 0, NULL) == 1) {
			unsigned len = 1 + (next_out * 37) % 299;
			const uint8_t *p = rec.payload;

			CHECK_EQ_U64(rec.type, next_out);
			CHECK_EQ_U64(rec.len, len);
			CHECK(p[0] == (next_out & 0xff) && p[len - 1] == (next_out & 0xff));
			shm_ring_release(r, &rec);
			next_out++;
		}
	}
	CHECK_EQ_U64(next_in, next_out);
	CHECK(next_in > 2000); /* many trips around 4 KiB */
	CHECK_EQ_U64(atomic_load(&r->dropped), 0);
	free(r);
}

/* A producer that died after reserving: skipped only when told every producer is gone. */
static void test_ring_abandoned_record(void)
{
	struct shm_ring *r = ring_new(4096);
	struct shm_ring_record rec;
	uint64_t abandoned = 0;

	CHECK(shm_ring_reserve(r, 1, 40) != NULL); /* never committed */
	CHECK(shm_ring_write(r, 2, "after", 6) == 0);
	CHECK(shm_ring_next(r, &rec, 0, &abandoned) == 0);
	CHECK(shm_ring_next(r, &rec, 1, &abandoned) == 1);
	CHECK_EQ_U64(abandoned, 1);
	CHECK_EQ_U64(rec.type, 2);
	shm_ring_release(r, &rec);
	CHECK(shm_ring_next(r, &rec, 1, &abandoned) == 0);
	free(r);
}

#define PRODUCERS 4
#define PER_PRODUCER 200000

struct producer {
	struct shm_ring *ring;
	unsigned id;
	uint64_t refused;
};

struct message {
	uint32_t producer;
	uint32_t seq;
	uint64_t check;
};

static void *produce(void *arg)
{
	struct producer *p = arg;

	for (uint32_t i = 0; i < PER_PRODUCER; i++) {
		struct message m = {p->id, i, ((uint64_t)p->id << 32 | i) * 0x9e3779b97f4a7c15ULL};

		if (shm_ring_write(p->ring, 1, &m, sizeof(m)))
			p->refused++;
	}
	return NULL;
}

/* Several producers, one consumer at the same time: each message once, in order per producer. */
static void test_ring_concurrent_producers(void)
{
	struct shm_ring *r = ring_new(1 << 16);
	struct producer prod[PRODUCERS];
	pthread_t threads[PRODUCERS];
	int64_t last[PRODUCERS];
	uint64_t received = 0, refused = 0, bad = 0, out_of_order = 0;
	struct shm_ring_record rec;
	int running = PRODUCERS;

	for (unsigned i = 0; i < PRODUCERS; i++) {
		prod[i] = (struct producer){.ring = r, .id = i};
		last[i] = -1;
		pthread_create(&threads[i], NULL, produce, &prod[i]);
	}
	while (running || shm_ring_next(r, &rec, 0, NULL)) {
		while (shm_ring_next(r, &rec, 0, NULL) == 1) {
			const struct message *m = rec.payload;

			if (rec.len != sizeof(*m) || m->producer >= PRODUCERS ||
			    m->check !=
				((uint64_t)m->producer << 32 | m->seq) * 0x9e3779b97f4a7c15ULL)
				bad++;
			else if ((int64_t)m->seq <= last[m->producer])
				out_of_order++;
			else
				last[m->producer] = m->seq;
			received++;
			shm_ring_release(r, &rec);
		}
		if (running && atomic_load(&r->committed) + atomic_load(&r->dropped) ==
				   (uint64_t)PRODUCERS * PER_PRODUCER) {
			for (unsigned i = 0; i < PRODUCERS; i++)
				pthread_join(threads[i], NULL);
			running = 0;
		}
	}
	for (unsigned i = 0; i < PRODUCERS; i++)
		refused += prod[i].refused;
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(out_of_order, 0);
	CHECK_EQ_U64(received + refused, (uint64_t)PRODUCERS * PER_PRODUCER);
	CHECK_EQ_U64(atomic_load(&r->dropped), refused);
	CHECK_EQ_U64(atomic_load(&r->committed), received);
	CHECK(received > 0);
	free(r);
}

static void test_clock_best_sample(void)
{
	struct clock_sample s[] = {
	    {1000, 1600, 5300}, /* round trip 600 */
	    {2000, 2201, 6100}, /* 201: the tightest */
	    {3000, 2900, 7000}, /* time ran backwards: ignored */
	    {4000, 4100, 0},	/* no answer: ignored */
	};
	struct clock_fit fit;

	CHECK(clock_best_sample(s, 4, &fit) == 0);
	CHECK_EQ_U64(fit.clock_ns, 6100);
	CHECK_EQ_U64(fit.host_ns, 2100);
	CHECK(fit.offset_ns == 4000);
	CHECK_EQ_U64(fit.error_ns, 101); /* half of 201, rounded up */
	CHECK_EQ_U64(clock_to_host(&fit, 10000), 6000);
	CHECK_EQ_U64(clock_to_host(&fit, 0), 0);
	CHECK(clock_best_sample(s + 2, 2, &fit) == -ENODATA);
}

/* Two fits 1 ms apart whose offsets differ by 100 ns: the mapping's slope is not 1. */
static const struct clock_fit drifting_fits[2] = {
    {.clock_ns = 1000000, .host_ns = 0, .offset_ns = 1000000, .error_ns = 40},
    {.clock_ns = 2000100, .host_ns = 1000000, .offset_ns = 1000100, .error_ns = 50},
};

/* Between two fits the offset is interpolated; outside them the nearer fit's offset holds. */
static void test_clock_interpolation(void)
{
	struct clock_fit a = drifting_fits[0], b = drifting_fits[1];
	struct clock_pair map = {&a, &b};

	CHECK_EQ_U64(clock_to_host2(&a, &b, 1500050), 1500050 - 1000050);
	CHECK_EQ_U64(clock_to_host2(&a, &b, 1000000), 0);
	CHECK_EQ_U64(clock_to_host2(&a, &b, 900000), 900000 - 1000000);
	CHECK_EQ_U64(clock_to_host2(&a, &b, 3000000), 3000000 - 1000100);
	CHECK_EQ_U64(clock_map(&map, 1500050), 500000);
	CHECK_EQ_U64(clock_map(NULL, 1234), 1234);
	map.b = NULL;
	CHECK_EQ_U64(clock_map(&map, 1500050), 500050);
	/* fits 1 ms apart with 60 ns of error each: too close for a slope, the nearer offset is
	 * used */
	a.error_ns = b.error_ns = 60;
	CHECK_EQ_U64(clock_to_host2(&a, &b, 1400000), 1400000 - 1000000);
	CHECK_EQ_U64(clock_to_host2(&a, &b, 1600000), 1600000 - 1000100);
}

static void test_blocks_from_spans(void)
{
	struct grt_probe_span in[5] = {
	    {.start_ns = 5000, .dur = 1000, .smid = 3, .tag = 7},
	    {.start_ns = 4000, .dur = 100, .smid = 2, .tag = 6}, /* left by the slot's last launch */
	    {.start_ns = 0, .tag = 7},				 /* a zero start is never real */
	    {.start_ns = 5200, .dur = 3800, .smid = 3, .tag = 7},
	    {.start_ns = 5300, .dur = GRT_PROBE_DUR_COARSE | 3, .smid = 1, .tag = 7},
	};
	struct clock_fit fit = {.offset_ns = 4000};
	struct clock_pair map = {&fit, NULL};
	struct grt_gpu_block_rec out[5];
	uint32_t grid[3] = {2, 2, 2};
	uint64_t missing = 0;
	size_t n = launch_blocks_from_spans(in, 5, 7, grid, &map, 77, out, &missing);

	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(missing, 2);
	CHECK_EQ_U64(out[0].launch_id, 77);
	CHECK_EQ_U64(out[0].start_ns, 1000);
	CHECK_EQ_U64(out[0].end_ns, 2000);
	CHECK_EQ_U64(out[0].smid, 3);
	/* span 3 of a 2x2x2 grid is block (1,1,0) */
	CHECK_EQ_U64(out[1].block[0], 1);
	CHECK_EQ_U64(out[1].block[1], 1);
	CHECK_EQ_U64(out[1].block[2], 0);
	CHECK_EQ_U64(out[1].end_ns, 5000);
	/* span 4: block (0,0,1), a coarse duration of 3 x 1024 ns */
	CHECK_EQ_U64(out[2].block[2], 1);
	CHECK_EQ_U64(out[2].end_ns, 5300 + 3072 - 4000);
}

/*
 * Between two fits the mapping's slope is not 1: a block's end is its mapped start plus its
 * device duration, so a 5000 ns block stays 5000 ns (mapping the end on its own gave 4999 here).
 */
static void test_block_durations_keep_the_device_clock(void)
{
	struct clock_fit a = drifting_fits[0], b = drifting_fits[1];
	struct clock_pair map = {&a, &b};
	struct grt_probe_span in[2] = {
	    {.start_ns = 1500001, .dur = 5000, .smid = 0, .tag = 1},
	    {.start_ns = 1500001, .dur = 5000, .smid = 0, .tag = 1},
	};
	struct grt_gpu_block_rec out[2];
	uint32_t grid[3] = {2, 1, 1};
	uint64_t missing = 0;

	CHECK_EQ_U64(launch_blocks_from_spans(in, 2, 1, grid, &map, 1, out, &missing), 2);
	CHECK_EQ_U64(out[0].start_ns, clock_map(&map, 1500001));
	CHECK_EQ_U64(out[0].end_ns - out[0].start_ns, 5000);
	CHECK_EQ_U64(launch_blocks_from_thread_spans(in, 2, 1, 2, grid, 1, &map, 1, out, &missing), 1);
	CHECK_EQ_U64(out[0].end_ns - out[0].start_ns, 5000);
}

static void test_dur_encoding(void)
{
	CHECK_EQ_U64(grt_probe_dur_encode(0), 0);
	CHECK_EQ_U64(grt_probe_dur_encode(0x7fffffff), 0x7fffffff);
	CHECK_EQ_U64(grt_probe_dur_encode(0x80000000ull), GRT_PROBE_DUR_COARSE | (0x80000000u >> 10));
	CHECK_EQ_U64(grt_probe_dur_ns(grt_probe_dur_encode(5000000000ull)), 5000000000ull & ~1023ull);
	/* beyond 2^41 ns (36 minutes) the duration saturates */
	CHECK_EQ_U64(grt_probe_dur_encode(1ull << 50), 0xffffffffu);
	CHECK_EQ_U64(grt_probe_param(0x7f0000001000ull, 0xbeef), 0xbeef7f0000001000ull);
}

/* Half-octave buckets: 2e plus the bit below the leading one. */
static void test_duration_buckets(void)
{
	CHECK_EQ_U64(grt_probe_bucket(0), 0);
	CHECK_EQ_U64(grt_probe_bucket(1), 0);
	CHECK_EQ_U64(grt_probe_bucket(2), 2);
	CHECK_EQ_U64(grt_probe_bucket(3), 3);
	CHECK_EQ_U64(grt_probe_bucket(5000), 24);
	CHECK_EQ_U64(grt_probe_bucket(6143), 24);
	CHECK_EQ_U64(grt_probe_bucket(6144), 25);
	CHECK_EQ_U64(grt_probe_bucket(UINT32_MAX), 63);
	/* bucket 1 is never used: 1 ns falls in bucket 0 */
	for (unsigned b = 3; b < GRT_PROBE_HIST_BUCKETS; b++) {
		CHECK_EQ_U64(grt_probe_bucket((uint32_t)grt_probe_bucket_low(b)), b);
		CHECK_EQ_U64(grt_probe_bucket((uint32_t)grt_probe_bucket_low(b) - 1), b - 1);
	}
}

/* A launch's summary from SM totals: two SMs used of 256, a third slot empty. */
static void test_summarize_totals(void)
{
	static struct grt_probe_sm sm[GRT_PROBE_SM_SLOTS];
	static uint32_t hist[GRT_PROBE_HIST_BUCKETS];
	struct clock_fit fit = {.offset_ns = 10};
	struct clock_pair map = {&fit, NULL};
	struct grt_gpu_launch_rec rec = {0};

	/* SM 3: blocks 100..600 and 700..1200 (a gap: busy 1000 < span 1100) */
	sm[3] = (struct grt_probe_sm){~100ull, 1200, 1000, 2, 500};
	/* SM 200: 50..3050 and 60..2060 overlapping (span 3000 < summed 5000) */
	sm[200] = (struct grt_probe_sm){~50ull, 3050, 5000, 2, 3000};
	hist[grt_probe_bucket(500)] = 2;
	hist[grt_probe_bucket(2000)] = 1;
	hist[grt_probe_bucket(3000)] = 1;
	/* only the SM slots the buffer holds are read: SM 200 is beyond the first 128 */
	launch_summarize_totals(sm, 128, hist, &map, &rec);
	CHECK_EQ_U64(rec.blocks, 2);
	CHECK_EQ_U64(rec.sms_used, 1);
	launch_summarize_totals(sm, GRT_PROBE_SM_SLOTS, hist, &map, &rec);
	CHECK_EQ_U64(rec.blocks, 4);
	CHECK_EQ_U64(rec.sms_used, 2);
	CHECK_EQ_U64(rec.start_ns, 40);
	CHECK_EQ_U64(rec.end_ns, 3040);
	CHECK_EQ_U64(rec.block_ns_max, 3000);
	CHECK_EQ_U64(rec.busiest_sm_ns, 3000);
	/* 500 and 500 are the lower half: the median is the middle of [384, 512) */
	CHECK_EQ_U64(rec.block_ns_p50, 448);
	CHECK_EQ_U64(launch_totals_first_start(sm, GRT_PROBE_SM_SLOTS), 100);
	CHECK_EQ_U64(launch_totals_first_start(sm, 3), 0);
	/* the median comes from the histogram alone: one block in it, its bucket */
	memset(hist, 0, sizeof(hist));
	hist[grt_probe_bucket(3000)] = 1;
	launch_summarize_totals(sm, GRT_PROBE_SM_SLOTS, hist, &map, &rec);
	CHECK_EQ_U64(rec.blocks, 4);
	CHECK_EQ_U64(rec.block_ns_p50, 2560); /* the middle of [2048, 3072) */
}

static void test_blocks_from_threads(void)
{
	struct grt_probe_span in[6] = {
	    {100, 100, 5, 1}, {90, 170, 5, 1}, /* block 0: 90..260 on SM 5 */
	    {300, 0, 2, 9},   {310, 90, 2, 1}, /* block 1: thread 0's span is stale */
	    {0, 0, 0, 0},     {50, 10, 0, 9},  /* block 2: never ran */
	};
	struct grt_gpu_block_rec out[3];
	uint32_t grid[3] = {3, 1, 1};
	uint64_t missing = 0;
	size_t n = launch_blocks_from_thread_spans(in, 6, 1, 2, grid, 3, NULL, 5, out, &missing);

	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(missing, 1);
	CHECK_EQ_U64(out[0].start_ns, 90);
	CHECK_EQ_U64(out[0].end_ns, 260);
	CHECK_EQ_U64(out[0].smid, 5);
	CHECK_EQ_U64(out[1].start_ns, 310);
	CHECK_EQ_U64(out[1].end_ns, 0);
	CHECK_EQ_U64(out[1].block[0], 1);
	CHECK_EQ_U64(out[1].smid, 2);
}

static void test_summarize(void)
{
	/* SM 0: 100..200 and 150..300 overlap (busy 200); SM 1: 100..150, 400..500 (busy 150) */
	struct grt_gpu_block_rec b[5] = {
	    {.start_ns = 400, .end_ns = 500, .smid = 1},
	    {.start_ns = 100, .end_ns = 200, .smid = 0},
	    {.start_ns = 150, .end_ns = 300, .smid = 0},
	    {.start_ns = 100, .end_ns = 150, .smid = 1},
	    {.start_ns = 120, .end_ns = 0, .smid = 2}, /* unfinished: no duration */
	};
	struct grt_gpu_launch_rec rec = {0};

	launch_summarize(b, 5, &rec);
	CHECK_EQ_U64(rec.blocks, 5);
	CHECK_EQ_U64(rec.start_ns, 100);
	CHECK_EQ_U64(rec.end_ns, 500);
	CHECK_EQ_U64(rec.sms_used, 3);
	/* durations 100, 150, 50, 100 -> sorted 50 100 100 150: lower median 100 */
	CHECK_EQ_U64(rec.block_ns_p50, 100);
	CHECK_EQ_U64(rec.block_ns_max, 150);
	CHECK_EQ_U64(rec.busiest_sm_ns, 200);
	launch_summarize(b, 0, &rec);
	CHECK_EQ_U64(rec.blocks, 0);
	CHECK_EQ_U64(rec.start_ns, 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of many random launches equals the sorted one (selection with duplicates, big SM ids).
 */
static void test_summarize_random(void)
{
	unsigned seed = 12345, mismatches = 0;

	for (unsigned round = 0; round < 200; round++) {
		size_t n = 1 + rand_r(&seed) % 3000;
		struct grt_gpu_block_rec *b = calloc(n, sizeof(*b));
		uint64_t *d = calloc(n, sizeof(*d)), max = 0;
		struct grt_gpu_launch_rec rec = {0};

		for (size_t i = 0; i < n; i++) {
			b[i].start_ns = 1000 + rand_r(&seed) % 5000;
			b[i].end_ns = b[i].start_ns + 1 + rand_r(&seed) % (round % 2 ? 7 : 900);
			b[i].smid = (uint32_t)(rand_r(&seed) % (round % 3 ? 132 : 2000));
			d[i] = b[i].end_ns - b[i].start_ns;
			if (d[i] > max)
				max = d[i];
		}
		qsort(d, n, sizeof(*d), cmp_u64);
		launch_summarize(b, n, &rec);
		if (rec.block_ns_p50 != d[(n - 1) / 2] || rec.block_ns_max != max ||
		    rec.blocks != n)
			mismatches++;
		free(b);
		free(d);
	}
	CHECK_EQ_U64(mismatches, 0);
}

static void test_probe_cache(void)
{
	char dir[] = "/tmp/grt-cache-test-XXXXXX", sub[256], path[512];
	struct probe_cache_key key = {.ptx_hash = probe_cache_hash("abc", 3),
				      .ptx_len = 3,
				      .arch = 90,
				      .driver_version = 13000};
	void *image = NULL;
	size_t len = 0;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	CHECK(probe_cache_hash("abc", 3) != probe_cache_hash("abd", 3));
	CHECK(probe_cache_load(sub, &key, &image, &len) == -ENOENT);
	CHECK(probe_cache_store(sub, &key, "CUBIN-BYTES", 11) == 0);
	CHECK(probe_cache_load(sub, &key, &image, &len) == 0);
	CHECK_EQ_U64(len, 11);
	CHECK(image && !memcmp(image, "CUBIN-BYTES", 11));
	free(image);
	key.arch = 80; /* another architecture is another entry */
	CHECK(probe_cache_load(sub, &key, &image, &len) == -ENOENT);
	probe_cache_path("/c", &key, path, sizeof(path));
	CHECK_STR(path, "/c/probe-e71fa2190541574b-3-sm80-drv13000.cubin");
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

/* A rewrite's kernel table entry: instrumented ones appended parameters at offset, size after. */
static struct ptx_kernel_result kernel_result(const char *name, unsigned nr_params, bool changed,
					      uint32_t offset, uint32_t size)
{
	struct ptx_kernel_result k = {.name = (char *)name, .instrumented = changed,
				      .nr_params = nr_params, .param_index = changed ? (int)nr_params : -1,
				      .param_offset = offset, .param_size = size};

	snprintf(k.reason, sizeof(k.reason), "%s", changed ? "" : "not selected by the kernel filter");
	return k;
}

/*
 * Two instrumentations in a row (block probes, then one that appends two
 * parameters, as GPU eBPF programs will): each kernel's appended parameters
 * in their order, and where the twin's arguments go.
 */
static void test_instrumentations_merged(void)
{
	/* a: 3 parameters (24 bytes), changed by both; b: 2 parameters, by the second only; c: none */
	struct ptx_kernel_result first[] = {
	    kernel_result("a", 3, true, 24, 32),
	    kernel_result("b", 2, false, 0, 16),
	    kernel_result("c", 1, false, 0, 8),
	};
	struct ptx_kernel_result second[] = {
	    kernel_result("a", 4, true, 32, 48),
	    kernel_result("b", 2, true, 16, 32),
	    kernel_result("c", 1, false, 0, 8),
	};
	struct ptx_rewrite_result rw[2] = {{.kernels = first, .nr_kernels = 3},
					   {.kernels = second, .nr_kernels = 3}};
	unsigned nr_params[2] = {1, 2};
	struct instr_kernel k[3];
	size_t instrumented = 0;

	CHECK(instr_kernels_merge(rw, 2, nr_params, k, &instrumented) == 0);
	CHECK_EQ_U64(instrumented, 2);
	CHECK_STR(k[0].name, "a");
	CHECK_EQ_U64(k[0].users, 3);
	CHECK_EQ_U64(k[0].nusers, 2);
	CHECK_EQ_U64(k[0].user[0], 0);
	CHECK_EQ_U64(k[0].user[1], 1);
	CHECK_EQ_U64(k[0].user_param[0], 0);
	CHECK_EQ_U64(k[0].user_param[1], 1);
	CHECK_EQ_U64(k[0].nr_params, 3);
	CHECK_EQ_U64(k[0].nr_extra, 3);
	CHECK_EQ_U64(k[0].extra_offset, 24);
	CHECK_EQ_U64(k[0].param_size, 48);
	CHECK_EQ_U64(k[1].users, 2);
	CHECK_EQ_U64(k[1].nusers, 1);
	CHECK_EQ_U64(k[1].user[0], 1);
	CHECK_EQ_U64(k[1].user_param[0], 0);
	CHECK_EQ_U64(k[1].nr_extra, 2);
	CHECK_EQ_U64(k[1].extra_offset, 16);
	CHECK_EQ_U64(k[2].users, 0);
	CHECK_STR(k[2].reason, "not selected by the kernel filter");

	/* the second's parameters must follow the first's */
	second[0] = kernel_result("a", 4, true, 40, 56);
	CHECK(instr_kernels_merge(rw, 2, nr_params, k, &instrumented) == -EINVAL);
	/* and all of them fit INSTR_MAX_PARAMS */
	second[0] = kernel_result("a", 4, true, 32, 64);
	nr_params[1] = INSTR_MAX_PARAMS;
	CHECK(instr_kernels_merge(rw, 2, nr_params, k, &instrumented) == -EINVAL);
}

static void test_twin_arguments(void)
{
	struct instr_kernel k = {.nr_params = 3, .nr_extra = 3, .extra_offset = 24, .param_size = 48};
	uint64_t values[3] = {0x1111, 0x2222, 0x3333}, a = 1, b = 2, c = 3;
	void *params[] = {&a, &b, &c}, *small[4], **out, *storage[5];
	uint8_t buffer[20];
	size_t size = sizeof(buffer), out_size = 0;
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			 CU_LAUNCH_PARAM_END};
	void *unknown[] = {(void *)0x7, NULL, CU_LAUNCH_PARAM_END};
	const uint8_t *copy;

	/* kernelParams: the application's, then one pointer per appended value */
	out = instr_args_params(params, &k, values, small, 4);
	CHECK(out && out != small); /* 6 pointers do not fit 4 */
	if (out) {
		CHECK(out[0] == &a && out[2] == &c);
		CHECK(out[3] == &values[0] && out[4] == &values[1] && out[5] == &values[2]);
		free(out);
	}
	k.nr_extra = 1;
	CHECK(instr_args_params(params, &k, values, small, 4) == small && small[3] == &values[0]);

	/* an argument buffer: the application's bytes, zeros up to the offset, then the values */
	k.nr_extra = 3;
	memset(buffer, 0xab, sizeof(buffer));
	CHECK(instr_args_extra(extra, &k, values, storage, &out_size) == storage);
	CHECK_EQ_U64(out_size, 48);
	copy = storage[1];
	if (copy) {
		CHECK(copy[0] == 0xab && copy[19] == 0xab && copy[20] == 0 && copy[23] == 0);
		CHECK(!memcmp(copy + 24, values, sizeof(values)));
		free(storage[1]);
	}
	CHECK(instr_args_extra(unknown, &k, values, storage, &out_size) == NULL);
	k.param_size = 40; /* no room for the third value */
	CHECK(instr_args_extra(extra, &k, values, storage, &out_size) == NULL);
}

/* One call's shape as the copy timing sees it: kind, bytes and stream of the given arguments. */
static void expect_shape(const char *name, unsigned nargs, const uint64_t *args, uint32_t kind,
			 uint64_t bytes, uint64_t stream)
{
	struct copy_shape s;

	if (!copy_shape_of(name, nargs, &s)) {
		CHECK_MSG(false, "%s: no shape", name);
		return;
	}
	CHECK_MSG(copy_shape_desc_kind(&s, args) == kind, "%s: kind %u, want %u", name,
		  copy_shape_desc_kind(&s, args), kind);
	CHECK_MSG(copy_shape_bytes(&s, args) == bytes, "%s: bytes %llu, want %llu", name,
		  (unsigned long long)copy_shape_bytes(&s, args), (unsigned long long)bytes);
	CHECK_MSG(copy_shape_stream(&s, args) == stream, "%s: stream %#llx, want %#llx", name,
		  (unsigned long long)copy_shape_stream(&s, args), (unsigned long long)stream);
}

static void test_copy_shapes(void)
{
	const uint64_t linear[] = {0x1000, 0x2000, 4096, 0x5500};
	const uint64_t peer[] = {0x1000, 0xc1, 0x2000, 0xc2, 777, 0x5500};
	const uint64_t arrays[] = {0xa1, 16, 0xa2, 32, 999};
	const uint64_t set2d[] = {0x1000, 512, 7, 100, 3, 0x5500};
	const uint64_t sizes[] = {10, 20, 30};
	const uint64_t batch[] = {0, 0, (uintptr_t)sizes, 3, 0, 0, 0, 0, 0x5500};
	CUDA_MEMCPY2D d2 = {.srcMemoryType = CU_MEMORYTYPE_HOST,
			    .dstMemoryType = CU_MEMORYTYPE_DEVICE,
			    .WidthInBytes = 100,
			    .Height = 3};
	uint64_t d3[26] = {0};
	const uint64_t desc2[] = {(uintptr_t)&d2, 0x5500}, desc3[] = {(uintptr_t)d3};
	struct copy_shape s;

	expect_shape("cuMemcpyHtoD_v2", 3, linear, GRT_COPY_HTOD, 4096, 0x1);
	expect_shape("cuMemcpyHtoD_v2_ptds", 3, linear, GRT_COPY_HTOD, 4096, 0x2);
	expect_shape("cuMemcpyDtoHAsync_v2", 4, linear, GRT_COPY_DTOH, 4096, 0x5500);
	expect_shape("cuMemcpyDtoDAsync_v2_ptsz", 4, linear, GRT_COPY_DTOD, 4096, 0x5500);
	expect_shape("cuMemcpyPeerAsync", 6, peer, GRT_COPY_PEER, 777, 0x5500);
	expect_shape("cuMemcpyAtoA_v2", 5, arrays, GRT_COPY_DTOD, 999, 0x1);
	expect_shape("cuMemcpyHtoA_v2", 4, arrays, GRT_COPY_HTOD, 32, 0x1);
	expect_shape("cuMemcpyAtoHAsync_v2", 5, arrays, GRT_COPY_DTOH, 32, 999);
	expect_shape("cuMemsetD16Async", 4, linear, GRT_GPU_COPY_MEMSET, 8192, 0x5500);
	expect_shape("cuMemsetD8_v2_ptds", 3, linear, GRT_GPU_COPY_MEMSET, 4096, 0x2);
	expect_shape("cuMemsetD2D32_v2", 5, set2d, GRT_GPU_COPY_MEMSET, 1200, 0x1);
	expect_shape("cuMemsetD2D8Async", 6, set2d, GRT_GPU_COPY_MEMSET, 300, 0x5500);
	expect_shape("cuMemcpy2DAsync_v2", 2, desc2, GRT_COPY_HTOD, 300, 0x5500);
	expect_shape("cuMemcpyBatchAsync", 9, batch, GRT_COPY_UNKNOWN, 60, 0x5500);
	/* a 3D copy: device to pageable host, 8 x 4 x 2 */
	d3[COPY_3D_OFF_SRC_TYPE / 8] = CU_MEMORYTYPE_DEVICE;
	d3[COPY_3D_OFF_DST_TYPE / 8] = CU_MEMORYTYPE_HOST;
	d3[COPY_3D_OFF_WIDTH / 8] = 8;
	d3[COPY_3D_OFF_WIDTH / 8 + 1] = 4;
	d3[COPY_3D_OFF_WIDTH / 8 + 2] = 2;
	expect_shape("cuMemcpy3D_v2", 1, desc3, GRT_COPY_DTOH, 64, 0x1);
	expect_shape("cuMemcpy3DPeer", 1, desc3, GRT_COPY_PEER, 64, 0x1);
	/* unified addresses: the pointers' types decide, at the call */
	CHECK(copy_shape_of("cuMemcpyAsync", 4, &s) && s.kind_by_pointers && s.stream_arg == 3);
	CHECK(copy_shape_of("cuMemcpy_ptds", 3, &s) && s.kind_by_pointers &&
	      s.stream_from == COPY_STREAM_PER_THREAD);
	CHECK(copy_shape_of("cuMemcpyHtoD_v2", 3, &s) && !s.kind_by_pointers);
	CHECK_EQ_U64(copy_shape_kind_of_types(0, CU_MEMORYTYPE_DEVICE), GRT_COPY_HTOD);
	CHECK_EQ_U64(copy_shape_kind_of_types(CU_MEMORYTYPE_DEVICE, 0), GRT_COPY_DTOH);
	CHECK_EQ_U64(copy_shape_kind_of_types(CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE),
		     GRT_COPY_DTOD);
	CHECK_EQ_U64(copy_shape_kind_of_types(0, CU_MEMORYTYPE_HOST), GRT_COPY_HTOH);
	CHECK_EQ_U64(copy_shape_kind_of_types(4, CU_MEMORYTYPE_DEVICE), GRT_COPY_DEFAULT);
	/* graph launches are not copies */
	CHECK(!copy_shape_of("cuGraphLaunch", 2, &s));
	CHECK(!copy_shape_of("cuLaunchCooperativeKernelMultiDevice", 3, &s));
}

/* Every copy and memset the library forwards has a shape whose argument indices exist. */
static void test_every_work_call_shaped(void)
{
	struct copy_shape s;
	unsigned copies = 0;

#define SHAPED(name, nargs)                                                                        \
	if (!strncmp(#name, "cuMem", 5)) {                                                         \
		bool ok = copy_shape_of(#name, nargs, &s);                                         \
		CHECK_MSG(ok, "%s: no shape", #name);                                              \
		CHECK_MSG(s.stream_from != COPY_STREAM_ARG || s.stream_arg < (nargs),              \
			  "%s: stream argument %u", #name, s.stream_arg);                          \
		CHECK_MSG(s.bytes_arg < (nargs), "%s: bytes argument %u", #name, s.bytes_arg);     \
		CHECK_MSG((s.stream_from == COPY_STREAM_ARG) == (strstr(#name, "Async") != NULL),  \
			  "%s: stream", #name);                                                    \
		copies += ok;                                                                      \
	}
	INJECT_WORK_CALLS(SHAPED)
#undef SHAPED
	CHECK_EQ_U64(copies, 104);
}

int main(void)
{
	RUN_TEST(test_ring_rejects_bad_sizes);
	RUN_TEST(test_ring_round_trip);
	RUN_TEST(test_ring_overflow_exact_drops);
	RUN_TEST(test_ring_wraps_with_pads);
	RUN_TEST(test_ring_abandoned_record);
	RUN_TEST(test_ring_concurrent_producers);
	RUN_TEST(test_clock_best_sample);
	RUN_TEST(test_clock_interpolation);
	RUN_TEST(test_blocks_from_spans);
	RUN_TEST(test_block_durations_keep_the_device_clock);
	RUN_TEST(test_dur_encoding);
	RUN_TEST(test_duration_buckets);
	RUN_TEST(test_summarize_totals);
	RUN_TEST(test_blocks_from_threads);
	RUN_TEST(test_summarize);
	RUN_TEST(test_summarize_random);
	RUN_TEST(test_probe_cache);
	RUN_TEST(test_instrumentations_merged);
	RUN_TEST(test_twin_arguments);
	RUN_TEST(test_copy_shapes);
	RUN_TEST(test_every_work_call_shaped);
	return TEST_EXIT_STATUS();
}
