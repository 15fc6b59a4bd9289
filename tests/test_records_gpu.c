/* Tests of the gpu record descriptions: names, minimum lengths, and the fields parse prints. */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"
#include "trace/grt_writer.h"
#include "trace/record_desc.h"
#include "trace/records_core.h"
#include "trace/records_gpu.h"
#include "test_util.h"

/* Fields rendered as "key=value key=value ..." */
struct line_fields {
	struct grt_fields f;
	char text[1024];
};

static void add(struct grt_fields *f, const char *fmt, ...)
{
	struct line_fields *l = (struct line_fields *)f;
	size_t used = strlen(l->text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->text + used, sizeof(l->text) - used, fmt, ap);
	va_end(ap);
}

static void f_u64(struct grt_fields *f, const char *k, uint64_t v)
{
	add(f, "%s=%llu ", k, (unsigned long long)v);
}
static void f_i64(struct grt_fields *f, const char *k, int64_t v)
{
	add(f, "%s=%lld ", k, (long long)v);
}
static void f_hex(struct grt_fields *f, const char *k, uint64_t v)
{
	add(f, "%s=0x%llx ", k, (unsigned long long)v);
}
static void f_f64(struct grt_fields *f, const char *k, double v)
{
	add(f, "%s=%.2f ", k, v);
}
static void f_str(struct grt_fields *f, const char *k, const char *s)
{
	add(f, "%s=%s ", k, s ? s : "-");
}
static void f_dim3(struct grt_fields *f, const char *k, const uint32_t v[3])
{
	add(f, "%s=(%u,%u,%u) ", k, v[0], v[1], v[2]);
}
static void f_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n)
{
	add(f, "%s=[%u] ", k, n);
}

static const struct grt_fields_ops ops = {f_u64, f_i64, f_hex, f_f64, f_str, f_dim3, f_list};

static const char *describe(uint16_t type, const void *payload, uint32_t len,
			    struct grt_strings *strings, struct line_fields *out)
{
	const struct grt_record_desc *d = grt_record_desc_find(type);
	struct grt_record rec = {.hdr = {.type = type, .payload_len = len}, .payload = payload};

	memset(out, 0, sizeof(*out));
	out->f.ops = &ops;
	if (!d || len < d->min_len)
		return NULL;
	d->describe(&rec, strings, &out->f);
	return out->text;
}

static void test_names_and_lengths(void)
{
	static const struct {
		uint16_t type;
		const char *name;
		uint32_t len;
	} want[] = {
	    {GRT_REC_GPU_KERNEL, "gpu_kernel", 80},	    {GRT_REC_GPU_COPY, "gpu_copy", 56},
	    {GRT_REC_GPU_BLOCK, "gpu_block", 40},	    {GRT_REC_GPU_LAUNCH, "gpu_launch", 88},
	    {GRT_REC_GPU_INSTRUMENT, "gpu_instrument", 16},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct grt_record_desc *d = grt_record_desc_find(want[i].type);

		CHECK(d != NULL);
		if (!d)
			continue;
		CHECK_STR(d->name, want[i].name);
		CHECK_EQ_U64(d->min_len, want[i].len);
		CHECK(grt_record_desc_by_name(want[i].name) == d);
	}
}

static void test_describe(void)
{
	struct grt_strings *s = grt_strings_new();
	struct grt_gpu_kernel_rec k = {.start_ns = 1000,
				       .end_ns = 3500,
				       .api_enter_ns = 900,
				       .stream = 0x10,
				       .correlation_id = 7,
				       .device = 0,
				       .stream_id = 13,
				       .kernel_str = 1,
				       .grid = {256, 1, 1},
				       .block = {256, 1, 1}};
	struct grt_gpu_copy_rec c = {
	    .start_ns = 10, .end_ns = 30, .bytes = 4096, .kind = GRT_GPU_COPY_MEMSET};
	struct grt_gpu_block_rec b = {.launch_id = 0x2a,
				      .start_ns = 100,
				      .end_ns = 160,
				      .block = {3, 1, 0},
				      .smid = UINT32_MAX};
	struct grt_gpu_launch_rec l = {.launch_id = 0x2a,
				       .start_ns = 100,
				       .end_ns = 400,
				       .kernel_str = 1,
				       .blocks = 4,
				       .sms_used = 2,
				       .block_ns_p50 = 50,
				       .block_ns_max = 150,
				       .busiest_sm_ns = 220,
				       .lost_blocks = 1};
	struct grt_gpu_instrument_rec i = {.kernel_str = 1, .status = -2, .reason_str = 2};
	struct line_fields out;

	grt_strings_set(s, 1, "vector_add");
	grt_strings_set(s, 2, "no PTX (machine code only: cubin)");
	CHECK_STR(describe(GRT_REC_GPU_KERNEL, &k, sizeof(k), s, &out),
		  "kernel=vector_add start_ns=1000 end_ns=3500 duration_ns=2500 api_enter_ns=900 "
		  "correlation_id=7 device=0 stream=0x10 stream_id=13 grid=(256,1,1) "
		  "block=(256,1,1) graph_id=0 ");
	CHECK_STR(describe(GRT_REC_GPU_COPY, &c, sizeof(c), s, &out),
		  "kind=memset bytes=4096 start_ns=10 end_ns=30 duration_ns=20 api_enter_ns=0 "
		  "correlation_id=0 "
		  "device=0 stream=0x0 stream_id=0 ");
	CHECK_STR(describe(GRT_REC_GPU_BLOCK, &b, sizeof(b), s, &out),
		  "launch_id=0x2a block=(3,1,0) smid=- start_ns=100 end_ns=160 duration_ns=60 ");
	CHECK_STR(
	    describe(GRT_REC_GPU_LAUNCH, &l, sizeof(l), s, &out),
	    "kernel=vector_add launch_id=0x2a start_ns=100 end_ns=400 exec_ns=300 api_enter_ns=0 "
	    "stream=0x0 blocks=4 sms_used=2 block_ns_p50=50 block_ns_max=150 imbalance=3.00 "
	    "busiest_sm_ns=220 lost_blocks=1 ");
	CHECK_STR(describe(GRT_REC_GPU_INSTRUMENT, &i, sizeof(i), s, &out),
		  "kernel=vector_add instrumented=no status=-2 reason=no PTX (machine code only: "
		  "cubin) ");
	/* an unfinished block has no duration, and a short payload is refused */
	b.end_ns = 0;
	CHECK(strstr(describe(GRT_REC_GPU_BLOCK, &b, sizeof(b), s, &out), "duration_ns=0") != NULL);
	CHECK(describe(GRT_REC_GPU_LAUNCH, &l, GRT_GPU_LAUNCH_REC_V1_0_LEN - 8, s, &out) == NULL);
	/* the host call a record names (format 1.1) shows beside its entry time */
	k.api_return_ns = 950;
	k.host_tid = 42;
	CHECK(strstr(describe(GRT_REC_GPU_KERNEL, &k, sizeof(k), s, &out),
		     " api_enter_ns=900 api_return_ns=950 host_tid=42 correlation_id=7 ") != NULL);
	c.host_tid = 43;
	CHECK(strstr(describe(GRT_REC_GPU_COPY, &c, sizeof(c), s, &out),
		     " api_enter_ns=0 host_tid=43 correlation_id=0 ") != NULL);
	grt_strings_free(s);
}

static void test_clock_record_names_its_clock(void)
{
	struct grt_clock_calib_rec c = {
	    .clock_id = GRT_CLOCK_CUPTI, .gpu_ns = 1005, .host_ns = 1000, .error_ns = 20};
	struct line_fields out;

	CHECK_STR(describe(GRT_REC_CLOCK_CALIB, &c, sizeof(c), NULL, &out),
		  "device=0 gpu_ns=1005 host_ns=1000 offset_ns=5 error_ns=20 clock=cupti ");
	c.clock_id = GRT_CLOCK_GPU_GLOBALTIMER;
	CHECK(strstr(describe(GRT_REC_CLOCK_CALIB, &c, sizeof(c), NULL, &out),
		     "clock=globaltimer") != NULL);
}

/*
 * A gpu_kernel record written before format 1.1 (80 bytes, no host bracket)
 * is read back zero-extended: the appended fields say "unknown", and readers
 * of them stay inside the payload the reader hands out.
 */
static void test_v1_0_kernel_record_is_zero_extended(void)
{
	char path[] = "/tmp/grt-test-v10-XXXXXX";
	struct grt_file_header h = {0};
	struct grt_gpu_kernel_rec k;
	struct grt_event_origin o = {.ts_ns = 5, .pid = 7, .tid = 7};
	struct grt_writer *w;
	struct grt_reader *r;
	struct grt_record rec;
	char err[256];
	int fd = mkstemp(path), found = 0;

	CHECK(fd >= 0);
	close(fd);
	memset(&k, 0xee, sizeof(k));
	k.start_ns = 100;
	w = grt_writer_open(path, &h);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK(grt_writer_append(w, GRT_REC_GPU_KERNEL, &o, &k, GRT_GPU_KERNEL_REC_V1_0_LEN) == 0);
	CHECK(grt_writer_close(w, 0, 10) == 0);
	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK) {
		const struct grt_gpu_kernel_rec *got = rec.payload;

		if (rec.hdr.type != GRT_REC_GPU_KERNEL)
			continue;
		found++;
		CHECK_EQ_U64(rec.hdr.payload_len, GRT_GPU_KERNEL_REC_V1_0_LEN);
		CHECK_EQ_U64(got->start_ns, 100);
		CHECK_EQ_U64(got->graph_id, 0xeeeeeeeeeeeeeeeeULL);
		CHECK_EQ_U64(got->api_return_ns, 0);
		CHECK_EQ_U64(got->host_tid, 0);
		CHECK_EQ_U64(got->flags, 0);
	}
	CHECK_EQ_U64(found, 1);
	grt_reader_close(r);
	unlink(path);
}

int main(void)
{
	RUN_TEST(test_names_and_lengths);
	RUN_TEST(test_describe);
	RUN_TEST(test_clock_record_names_its_clock);
	RUN_TEST(test_v1_0_kernel_record_is_zero_extended);
	return TEST_EXIT_STATUS();
}
