/* GPU eBPF output: BTF layouts, decoding, device read-back, printk, the trace records. */
#include <unistd.h>
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_layout.h"
#include "gpubpf/bpf_sim.h"
#include "gpubpf/bpf_trace.h"
#include "gpubpf/gpubpf_test.h"
#include "test_util.h"
#include "trace/grt_reader.h"
#include "trace/records_bpf.h"

#define N(a) (sizeof(a) / sizeof(a[0]))

/* --- a field collector ------------------------------------------------------------------- */

struct collected {
	struct grt_fields f;
	char text[2048];
	size_t at;
};

static void put(struct collected *c, const char *k, const char *v)
{
	int n =
	    snprintf(c->text + c->at, sizeof(c->text) - c->at, "%s%s=%s", c->at ? " " : "", k, v);

	if (n > 0 && c->at + (size_t)n < sizeof(c->text))
		c->at += (size_t)n;
}

static void c_u64(struct grt_fields *f, const char *k, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
	put((struct collected *)f, k, s);
}

static void c_i64(struct grt_fields *f, const char *k, int64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld", (long long)v);
	put((struct collected *)f, k, s);
}

static void c_hex(struct grt_fields *f, const char *k, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "0x%llx", (unsigned long long)v);
	put((struct collected *)f, k, s);
}

static void c_f64(struct grt_fields *f, const char *k, double v)
{
	char s[32];

	snprintf(s, sizeof(s), "%g", v);
	put((struct collected *)f, k, s);
}

static void c_str(struct grt_fields *f, const char *k, const char *v)
{
	char s[300];

	snprintf(s, sizeof(s), "'%s'", v ? v : "(null)");
	put((struct collected *)f, k, s);
}

static void c_dim3(struct grt_fields *f, const char *k, const uint32_t v[3])
{
	(void)v;
	put((struct collected *)f, k, "dim3");
}

static void c_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n)
{
	char s[256];
	size_t at = 0;

	s[0] = 0;
	for (uint32_t i = 0; i < n && at < sizeof(s) - 24; i++)
		at += (size_t)snprintf(s + at, sizeof(s) - at, "%s%llx", i ? "," : "",
				       (unsigned long long)v[i]);
	put((struct collected *)f, k, s);
}

static const struct grt_fields_ops collect_ops = {c_u64, c_i64,	 c_hex, c_f64,
						  c_str, c_dim3, c_list};

static const char *describe(const char *layout, const void *data, uint32_t len)
{
	static struct collected c;

	memset(&c, 0, sizeof(c));
	c.f.ops = &collect_ops;
	grt_bpf_layout_describe(&c.f, layout, data, len);
	return c.text;
}

/* --- layouts ------------------------------------------------------------------------------- */

static void test_layouts_from_btf(void)
{
	static const struct {
		const char *object, *map;
		bool key;
		const char *layout;
	} cases[] = {
	    {"bpftime_kernel_trace", "entries", false,
	     "bx:u64@0;by:u64@8;bz:u64@16;tx:u64@24;ty:u64@32;tz:u64@40;when:u64@48"},
	    {"bpftime_kernel_trace", "entries", true, "key:u32@0"},
	    {"bpftime_threadhist", "exits", false, "value:u64@0"},
	    {"bpftime_kernelretsnoop", "exit_events", false, "bytes:str1024@0"},
	    {"hash_ops", "per_warp", true, "block:u32@0;warp:u32@4;kernel:u32@8"},
	    {"atomics", "counters", false,
	     "add:u64@0;add_fetched:u64@8;or:u64@16;and:u64@24;xor:u64@32;xchg:u64@40;cas:u64@48;"
	     "fetched_sum:u64@56;add32:u32@64;cas32:u32@68"},
	    /* "pid" is one of the printers' keys */
	    {"percpu", "per_sm", false, "threads:u64@0;last_ns:u64@8;v_pid:u64@16"},
	    {"memcap_sites", "sites", false,
	     "loads:u64@0;stores:u64@8;bytes:u64@16;last_addr:u64@24"},
	};

	for (size_t i = 0; i < N(cases); i++) {
		struct gpubpf_bundle b;
		char err[512];
		bool found = false;

		CHECK_EQ_U64(gpubpf_bundle_load(gpubpf_test_object("progs", cases[i].object), NULL,
						&b, err, sizeof(err)),
			     0);
		for (size_t m = 0; m < b.obj.nr_maps; m++) {
			char *layout;

			if (strcmp(b.obj.maps[m].name, cases[i].map))
				continue;
			found = true;
			layout = gpubpf_btf_layout(b.obj.btf,
						   cases[i].key ? b.obj.maps[m].btf_key_type
								: b.obj.maps[m].btf_value_type,
						   cases[i].key ? "key" : "value");
			CHECK_STR(layout, cases[i].layout);
			free(layout);
		}
		CHECK(found);
		gpubpf_bundle_free(&b);
	}
}

static void test_layout_decoding(void)
{
	struct {
		uint32_t pid;
		int16_t delta;
		uint16_t pad;
		char comm[8];
		uint64_t args[3];
		double load;
		uint64_t ptr;
	} v = {4242, -3, 0, "app\0junk", {1, 2, 3}, 0.5, 0xdeadbeef};
	const char *layout =
	    "v_pid:u32@0;delta:s16@4;comm:str8@8;args:u64[3]@16;load:f64@40;ptr:x64@48";

	CHECK_STR(
	    describe(layout, &v, sizeof(v)),
	    "v_pid=4242 delta=-3 comm='app' args_0=1 args_1=2 args_2=3 load=0.5 ptr=0xdeadbeef");
	/* fields past the data are left out */
	CHECK_STR(describe(layout, &v, 20), "v_pid=4242 delta=-3 comm='app'");
	/* malformed layouts emit what came before the fault, never read past the data */
	CHECK_STR(describe("a:u32@0;b:u7@4", &v, sizeof(v)), "a=4242");
	CHECK_STR(describe("a:u32@", &v, sizeof(v)), "");
	CHECK_STR(describe("a:str99999999@0", &v, sizeof(v)), "");
	CHECK_STR(describe("a:u64[4000000]@0", &v, sizeof(v)), "");
	CHECK_STR(describe(":u32@0", &v, sizeof(v)), "");
	CHECK_STR(describe(NULL, &v, sizeof(v)), "");
	CHECK_STR(describe("big:u64@18446744073709551615", &v, sizeof(v)), "");
	CHECK_STR(describe("big:u64[2]@18446744073709551608", &v, sizeof(v)), "");
	CHECK_STR(describe("s:str16@18446744073709551615", &v, sizeof(v)), "");
}

/* --- device read-back ---------------------------------------------------------------------- */

static size_t put_record(uint8_t *ring, size_t at, uint32_t len, uint16_t prog, uint64_t ns,
			 const void *data, uint32_t n)
{
	struct grt_bpf_ring_rec r = {.len = len, .prog = prog, .smid = 7, .gpu_ns = ns};

	memcpy(ring + GRT_BPF_RING_HEAD_SIZE + at, &r, sizeof(r));
	memcpy(ring + GRT_BPF_RING_HEAD_SIZE + at + sizeof(r), data, n);
	return at + sizeof(r) + grt_bpf_stride(n);
}

static int count_ring(void *arg, const struct gpubpf_ring_record *r)
{
	unsigned *n = arg;

	n[0]++;
	n[1] += r->discarded;
	n[2] += r->len;
	return 0;
}

static void test_ring_walk(void)
{
	static uint8_t ring[GRT_BPF_RING_HEAD_SIZE + 256];
	struct grt_bpf_ring *h = (struct grt_bpf_ring *)ring;
	uint64_t data = 0x1122334455667788ull, dropped;
	unsigned n[3] = {0};
	size_t at = 0;

	h->capacity = 256;
	at = put_record(ring, at, 8, 1, 100, &data, 8);
	at = put_record(ring, at, 5 | GRT_BPF_RING_DISCARDED, 2, 200, &data, 5);
	at = put_record(ring, at, 8, 3, 300, &data, 8);
	h->head = at + 48; /* a reservation still being written: len 0 */
	h->dropped = 9;
	/* drops the device counted per SM: SM 3 and SM 3 + slots share a slot, SM 63 its own */
	*(uint64_t *)(ring + grt_bpf_ring_drop_slot(3)) = 100;
	*(uint64_t *)(ring + grt_bpf_ring_drop_slot(3 + GRT_BPF_RING_DROP_SLOTS)) += 20;
	*(uint64_t *)(ring + grt_bpf_ring_drop_slot(63)) = 1000;
	*(uint64_t *)(ring + grt_bpf_ring_drop_slot(63) + GRT_BPF_RING_EXHAUSTED) = 1; /* not a drop */
	CHECK_EQ_U64(grt_bpf_ring_drop_slot(3) - grt_bpf_ring_drop_slot(2), 128);
	CHECK(grt_bpf_ring_drop_slot(GRT_BPF_RING_DROP_SLOTS - 1) + 8 <= GRT_BPF_RING_HEAD_SIZE);
	CHECK_EQ_U64(gpubpf_ring_walk(ring, sizeof(ring), count_ring, n, &dropped), 3);
	CHECK_EQ_U64(n[0], 3);
	CHECK_EQ_U64(n[1], 1);
	CHECK_EQ_U64(n[2], 21);
	CHECK_EQ_U64(dropped, 9 + 120 + 1000);
	/* a length past the end stops the walk; so does a short image */
	put_record(ring, 0, 250, 1, 100, &data, 8);
	CHECK_EQ_U64(gpubpf_ring_walk(ring, sizeof(ring), NULL, NULL, NULL), 0);
	CHECK_EQ_U64(gpubpf_ring_walk(ring, 16, NULL, NULL, &dropped), 0);
	CHECK_EQ_U64(dropped, 0);
}

static int collect_entries(void *arg, uint32_t sub, const uint8_t *key, const uint8_t *value)
{
	char *s = arg;
	uint32_t k;
	uint64_t v;

	memcpy(&k, key, 4);
	memcpy(&v, value, 8);
	snprintf(s + strlen(s), 256 - strlen(s), "%u:%u=%llu ", sub, k, (unsigned long long)v);
	return 0;
}

struct summed_entry {
	uint32_t key;
	uint64_t v[2];
};

struct summed {
	struct summed_entry e[4];
	size_t n;
	size_t value_size;
};

static int collect_summed(void *arg, uint32_t sub, const uint8_t *key, const uint8_t *value)
{
	struct summed *c = arg;

	CHECK_EQ_U64(sub, 0);
	if (c->n == 4)
		return 1;
	memset(&c->e[c->n], 0, sizeof(c->e[0]));
	memcpy(&c->e[c->n].key, key, 4);
	memcpy(c->e[c->n].v, value, c->value_size);
	c->n++;
	return 0;
}

/* A counter kept per SM reads as one value per key: its copies added up, word by word. */
static void test_counter_copies_summed(void)
{
	struct gpubpf_map_shape pairs = {GRT_BPF_MAP_GPU_ARRAY, 4, 16, 2, 8};
	struct gpubpf_map_shape words = {BPF_MAP_TYPE_ARRAY, 4, 4, 1, 4};
	static uint64_t image[2 * GRT_BPF_SM_SLOTS * 16]; /* 2 keys x 256 copies x 128 bytes */
	uint32_t *w = (uint32_t *)image;
	struct summed c = {.value_size = 16};

	CHECK_EQ_U64(grt_bpf_stripe_stride(16), 128);
	CHECK_EQ_U64(grt_bpf_stripe_stride(130), 256);
	CHECK_EQ_U64(gpubpf_map_bytes(&pairs, 0, 0), sizeof(image));
	CHECK_EQ_U64(gpubpf_map_walk(&pairs, (uint8_t *)image, 100, 0, NULL, NULL), -1);
	/* key 0: a = 1 on SM 0 + 2 on SM 131, b = 5 on SM 255; key 1: nothing */
	image[0] = 1;
	image[131 * 16] = 2;
	image[255 * 16 + 1] = 5;
	CHECK_EQ_U64(
	    gpubpf_map_walk(&pairs, (uint8_t *)image, sizeof(image), 0, collect_summed, &c), 1);
	CHECK_EQ_U64(c.n, 1);
	CHECK_EQ_U64(c.e[0].key, 0);
	CHECK_EQ_U64(c.e[0].v[0], 3);
	CHECK_EQ_U64(c.e[0].v[1], 5);
	/* 4-byte counters wrap as one 4-byte copy would, never carrying into the next word */
	memset(image, 0, sizeof(image));
	w[0] = 0xffffffffu;
	w[32] = 2; /* SM 1's copy, 128 bytes on */
	w[33] = 9; /* its padding: not part of the value */
	c = (struct summed){.value_size = 4};
	CHECK_EQ_U64(
	    gpubpf_map_walk(&words, (uint8_t *)image, sizeof(image), 0, collect_summed, &c), 1);
	CHECK_EQ_U64(c.e[0].v[0], 1);
}

static void test_map_walk(void)
{
	struct gpubpf_map_shape per_thread = {GRT_BPF_MAP_PERGPUTD_ARRAY, 4, 8, 2};
	struct gpubpf_map_shape hash = {BPF_MAP_TYPE_HASH, 4, 8, 3};
	uint64_t image[64] = {0};
	char out[256] = "";

	CHECK_EQ_U64(gpubpf_map_bytes(&per_thread, 4, 0), 64);
	image[1] = 5; /* key 0 thread 1 */
	image[6] = 7; /* key 1 thread 2 */
	CHECK_EQ_U64(gpubpf_map_walk(&per_thread, (uint8_t *)image, 64, 4, collect_entries, out),
		     2);
	CHECK_STR(out, "1:0=5 2:1=7 ");
	CHECK_EQ_U64(gpubpf_map_walk(&per_thread, (uint8_t *)image, 63, 4, NULL, NULL), -1);
	/* hash: 4 slots of 24 bytes; only FULL ones count */
	memset(image, 0, sizeof(image));
	CHECK_EQ_U64(gpubpf_map_bytes(&hash, 0, 0), 4 * 24);
	image[0] = GRT_BPF_HASH_FULL, image[1] = 10, image[2] = 100;
	image[3] = GRT_BPF_HASH_DELETED, image[4] = 11, image[5] = 110;
	image[9] = GRT_BPF_HASH_FULL, image[10] = 12, image[11] = 120;
	out[0] = 0;
	CHECK_EQ_U64(gpubpf_map_walk(&hash, (uint8_t *)image, 96, 0, collect_entries, out), 2);
	CHECK_STR(out, "0:10=100 0:12=120 ");
}

static void test_printk_format(void)
{
	static const struct {
		const char *fmt;
		uint64_t args[3];
		const char *out;
	} cases[] = {
	    {"x=%lu y=%lu\n", {5, 6}, "x=5 y=6"},
	    {"%d %u %x", {(uint64_t)-1, (uint64_t)-1, 255}, "-1 4294967295 ff"},
	    {"%lld %llx %p", {(uint64_t)-2, 0xabcull << 32, 4096}, "-2 abc00000000 0x1000"},
	    {"%5d|%-4u|%04x", {42, 7, 10}, "   42|7   |000a"},
	    {"%hd %hhu %c %%", {0x18000, 0x1ff, 'A'}, "-32768 255 A %"},
	    {"%s=%d", {0, 5}, "(str)=5"},
	    {"%d %d %d %d", {1, 2, 3}, "1 2 3 (none)"},
	    {"%q %", {1}, "? "},
	};

	for (size_t i = 0; i < N(cases); i++) {
		char out[128];

		gpubpf_format_printk(out, sizeof(out), cases[i].fmt, strlen(cases[i].fmt) + 1,
				     cases[i].args);
		CHECK_STR(out, cases[i].out);
	}
	{
		char tiny[5];

		uint64_t args[3] = {123456, 7, 0};

		gpubpf_format_printk(tiny, sizeof(tiny), "%d%d", 5, args);
		CHECK_STR(tiny, "1234");
	}
}

/* --- the trace ----------------------------------------------------------------------------- */

/* A simulated run of three objects: the trace's records, counted and checked. */
static void test_trace_of_a_run(void)
{
	static const char *const names[] = {"bpftime_threadhist", "ringbuf", "bpftime_mem_trace"};
	const char *objects[3];
	struct sim_config c = {.launch = {.kernel = "ring_kernel",
					  .grid = {2, 1, 1},
					  .block = {4, 1, 1},
					  .nr_sms = 2,
					  .t0_ns = 1000,
					  .block_ns = 100,
					  .thread_ns = 10,
					  .body_ns = 50},
			       .access = {{false, 0, 4}, {true, 1, 8}},
			       .nr_access = 2,
			       .guard_param = -1,
			       .thread_capacity = 16,
			       .ring_bytes = 1 << 16};
	char path[] = "/tmp/grt-gpubpf-XXXXXX", err[512];
	struct sim s;
	struct grt_reader *r;
	struct grt_record rec;
	unsigned counts[16] = {0};
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	for (int i = 0; i < 3; i++)
		objects[i] = strdup(gpubpf_test_object("progs", names[i]));
	CHECK_EQ_U64(sim_run(&s, objects, 3, &c, err, sizeof(err)), 0);
	CHECK_EQ_U64(sim_write_trace(&s, path, err, sizeof(err)), 0);
	sim_free(&s);
	for (int i = 0; i < 3; i++)
		free((char *)objects[i]);
	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK) {
		if (rec.hdr.type >= GRT_REC_BPF_OBJECT && rec.hdr.type < GRT_REC_BPF_OBJECT + 16)
			counts[rec.hdr.type - GRT_REC_BPF_OBJECT]++;
		if (rec.hdr.type == GRT_REC_BPF_EVENT) {
			const struct grt_bpf_event_rec *e = rec.payload;

			CHECK_STR(grt_reader_string(r, e->map_name_str), "samples");
			CHECK_EQ_U64(e->data_len, 16);
			/* the calibration: mono = gpu + 1 s */
			CHECK_EQ_U64(rec.hdr.ts_ns, 1000000000ull + e->gpu_ns);
		}
		if (rec.hdr.type == GRT_REC_BPF_MAP_DUMP &&
		    ((const struct grt_bpf_map_dump_rec *)rec.payload)->nr_entries) {
			const struct grt_bpf_map_dump_rec *d = rec.payload;
			uint64_t key, value;

			/* mem_trace's counter: key 0 (padded to 8), 8 threads x 2 accesses */
			CHECK_EQ_U64(d->nr_entries, 1);
			CHECK_EQ_U64(d->entry_size, GRT_BPF_DUMP_ENTRY_HEAD + 8 + 8);
			memcpy(&key, d->entries + GRT_BPF_DUMP_ENTRY_HEAD, 8);
			memcpy(&value, d->entries + GRT_BPF_DUMP_ENTRY_HEAD + 8, 8);
			CHECK_EQ_U64(key, 0);
			CHECK_EQ_U64(value, 16);
		}
	}
	CHECK_EQ_U64(counts[GRT_REC_BPF_OBJECT - GRT_REC_BPF_OBJECT], 3);
	CHECK_EQ_U64(counts[GRT_REC_BPF_PROG - GRT_REC_BPF_OBJECT], 3);
	/* exits, samples, 2 read-only sections, accesses */
	CHECK_EQ_U64(counts[GRT_REC_BPF_MAP - GRT_REC_BPF_OBJECT], 5);
	CHECK_EQ_U64(counts[GRT_REC_BPF_MAP_DUMP - GRT_REC_BPF_OBJECT], 2);
	/* 8 threads: 8 outputs, 4 submitted reservations (even threads), 4 discarded */
	CHECK_EQ_U64(counts[GRT_REC_BPF_EVENT - GRT_REC_BPF_OBJECT], 12);
	CHECK_EQ_U64(counts[GRT_REC_BPF_PRINTK - GRT_REC_BPF_OBJECT], 9); /* 8 printk, 1 puts */
	CHECK_EQ_U64(counts[GRT_REC_BPF_LOST - GRT_REC_BPF_OBJECT], 0);
	grt_reader_close(r);
	unlink(path);
}

/* A ring too small for every event: drops counted, as bpf_lost and as the source's drop. */
static void test_lost_events(void)
{
	const char *objects[] = {gpubpf_test_object("progs", "bpftime_kernelretsnoop")};
	struct sim_config c = {.launch = {.kernel = "_Z9vectorAddPKfS0_Pf",
					  .grid = {4, 1, 1},
					  .block = {32, 1, 1},
					  .nr_sms = 1},
			       .guard_param = -1,
			       .thread_capacity = 128,
			       .ring_bytes = 480};
	char path[] = "/tmp/grt-gpubpf-XXXXXX", err[512];
	struct sim s;
	struct grt_reader *r;
	struct grt_record rec;
	uint64_t events = 0, lost = 0, drops = 0;
	int fd = mkstemp(path);

	close(fd);
	CHECK_EQ_U64(sim_run(&s, objects, 1, &c, err, sizeof(err)), 0);
	CHECK_EQ_U64(sim_write_trace(&s, path, err, sizeof(err)), 0);
	sim_free(&s);
	r = grt_reader_open(path, err, sizeof(err));
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK) {
		events += rec.hdr.type == GRT_REC_BPF_EVENT;
		if (rec.hdr.type == GRT_REC_BPF_LOST)
			lost += ((const struct grt_bpf_lost_rec *)rec.payload)->count;
		if (rec.hdr.type == GRT_REC_DROP)
			drops += ((const struct grt_drop_rec *)rec.payload)->count;
	}
	/* 48-byte records (16 + 32): 10 fit in 480 bytes, 118 of 128 are lost */
	CHECK_EQ_U64(events, 10);
	CHECK_EQ_U64(lost, 118);
	CHECK_EQ_U64(drops, 118);
	grt_reader_close(r);
	unlink(path);
}

int main(int argc, char **argv)
{
	(void)argc;
	gpubpf_test_init(argv[0]);
	RUN_TEST(test_layouts_from_btf);
	RUN_TEST(test_layout_decoding);
	RUN_TEST(test_ring_walk);
	RUN_TEST(test_counter_copies_summed);
	RUN_TEST(test_map_walk);
	RUN_TEST(test_printk_format);
	RUN_TEST(test_trace_of_a_run);
	RUN_TEST(test_lost_events);
	return TEST_EXIT_STATUS();
}
