/* Decoding real UVM queue entries captured on the GPU machine (tests/data/uvm, 580.159.04). */
#include <stdlib.h>
#include <string.h>
#include "sources/uvm_capture.h"
#include "sources/uvm_decode.h"
#include "test_util.h"

/* What the captured program (uvm_workload 8 2, pid 459) did and reported; see
 * tests/data/uvm/README.md. */
#define SAMPLE_PID 459
#define SAMPLE_MOVED (2ULL * 8 * 1024 * 1024)
#define SAMPLE_T_START 31631684746ULL
#define SAMPLE_T_LOOP0 31992954439ULL
#define SAMPLE_T_LOOP1 32009273466ULL
#define SAMPLE_ENTRIES 1809

static int load_sample(const char *path, struct uvm_capture *s)
{
	char why[256];
	int err = uvm_capture_load(path, s, why, sizeof(why));

	if (err)
		printf("  %s (run from the repository root)\n", why);
	return err;
}

struct sample_totals {
	uint64_t by_kind[GRT_UVM_KIND_COUNT];
	uint64_t htod, dtoh, bad_decode, outside_window, wrong_pid, wrong_gpu;
};

static void total_sample(const struct uvm_capture *s, struct sample_totals *t)
{
	struct uvm_clock_map clock = {.mono_minus_raw = s->h.mono_minus_raw_ns};

	memset(t, 0, sizeof(*t));
	for (uint64_t i = 0; i < s->h.count; i++) {
		struct uvm_decoded d;
		const struct grt_uvm_event_rec *e = &d.rec.base;

		if (uvm_decode_entry(s->entries + i * s->h.entry_size, s->h.version, s->h.owner_pid,
				     &clock, &d)) {
			t->bad_decode++;
			continue;
		}
		t->by_kind[e->kind]++;
		if (d.ts_ns < SAMPLE_T_START || d.ts_ns > SAMPLE_T_LOOP1 + 50000000ULL)
			t->outside_window++;
		if (e->kind == GRT_UVM_CPU_FAULT && d.rec.ext.fault_pid != SAMPLE_PID)
			t->wrong_pid++;
		/* one GPU in the machine: id 1 in both numberings */
		if ((e->kind == GRT_UVM_GPU_FAULT || e->kind == GRT_UVM_GPU_FAULT_REPLAY) &&
		    e->src_processor != 1)
			t->wrong_gpu++;
		if (e->kind == GRT_UVM_MIGRATION && e->src_processor == GRT_UVM_PROC_CPU &&
		    e->dst_processor == 1)
			t->htod += e->bytes;
		else if (e->kind == GRT_UVM_MIGRATION && e->src_processor == 1 &&
			 e->dst_processor == GRT_UVM_PROC_CPU)
			t->dtoh += e->bytes;
	}
}

static void check_totals(const char *path, uint32_t version, uint32_t entry_size)
{
	struct uvm_capture s;
	struct sample_totals t;

	if (load_sample(path, &s)) {
		CHECK(0);
		return;
	}
	CHECK_EQ_U64(s.h.version, version);
	CHECK_EQ_U64(s.h.entry_size, entry_size);
	CHECK_EQ_U64(s.h.count, SAMPLE_ENTRIES);
	CHECK_EQ_U64(s.h.owner_pid, SAMPLE_PID);
	CHECK_EQ_U64(s.h.dropped, 0);
	CHECK_STR(s.h.driver, "580.159.04");
	total_sample(&s, &t);
	CHECK_EQ_U64(t.bad_decode, 0);
	CHECK_EQ_U64(t.by_kind[GRT_UVM_CPU_FAULT], 72);
	CHECK_EQ_U64(t.by_kind[GRT_UVM_GPU_FAULT], 1383);
	CHECK_EQ_U64(t.by_kind[GRT_UVM_GPU_FAULT_REPLAY], 10);
	CHECK_EQ_U64(t.by_kind[GRT_UVM_MIGRATION], 344);
	/* every page went to the GPU and back once per pass: what the program did */
	CHECK_EQ_U64(t.htod, SAMPLE_MOVED);
	CHECK_EQ_U64(t.dtoh, SAMPLE_MOVED);
	CHECK_EQ_U64(t.outside_window, 0);
	CHECK_EQ_U64(t.wrong_pid, 0);
	CHECK_EQ_U64(t.wrong_gpu, 0);
	uvm_capture_free(&s);
}

static void test_v1_sample(void)
{
	check_totals("tests/data/uvm/v1.bin", UVM_QUEUE_V1, UVM_ENTRY_V1_SIZE);
}

static void test_v2_sample(void)
{
	check_totals("tests/data/uvm/v2.bin", UVM_QUEUE_V2, UVM_ENTRY_V2_SIZE);
}

/* Both trackers saw the same events in the same order: the two layouts decode to the same records.
 */
static void test_versions_agree(void)
{
	struct uvm_capture v1, v2;
	uint64_t differ = 0, far_apart = 0;

	if (load_sample("tests/data/uvm/v1.bin", &v1) ||
	    load_sample("tests/data/uvm/v2.bin", &v2)) {
		CHECK(0);
		return;
	}
	CHECK_EQ_U64(v1.h.count, v2.h.count);
	for (uint64_t i = 0; i < v1.h.count && i < v2.h.count; i++) {
		struct uvm_clock_map c1 = {.mono_minus_raw = v1.h.mono_minus_raw_ns};
		struct uvm_clock_map c2 = {.mono_minus_raw = v2.h.mono_minus_raw_ns};
		struct uvm_decoded a, b;

		uvm_decode_entry(v1.entries + i * v1.h.entry_size, UVM_QUEUE_V1, SAMPLE_PID, &c1,
				 &a);
		uvm_decode_entry(v2.entries + i * v2.h.entry_size, UVM_QUEUE_V2, SAMPLE_PID, &c2,
				 &b);
		if (a.rec.base.kind != b.rec.base.kind ||
		    a.rec.base.address != b.rec.base.address ||
		    a.rec.base.bytes != b.rec.base.bytes ||
		    a.rec.base.src_processor != b.rec.base.src_processor ||
		    a.rec.base.dst_processor != b.rec.base.dst_processor ||
		    a.rec.base.cause != b.rec.base.cause)
			differ++;
		/* the driver stamps each version's copy separately: microseconds apart at most */
		if ((a.ts_ns > b.ts_ns ? a.ts_ns - b.ts_ns : b.ts_ns - a.ts_ns) > 100000)
			far_apart++;
	}
	CHECK_EQ_U64(differ, 0);
	CHECK_EQ_U64(far_apart, 0);
	uvm_capture_free(&v1);
	uvm_capture_free(&v2);
}

/* Migrations carry GPU copy stamps that bracket a few microseconds each, chained within a block. */
static void test_migration_gpu_stamps(void)
{
	struct uvm_clock_map clock = {0};
	uint64_t with_stamps = 0, sane = 0;
	struct uvm_capture s;

	if (load_sample("tests/data/uvm/v2.bin", &s)) {
		CHECK(0);
		return;
	}
	for (uint64_t i = 0; i < s.h.count; i++) {
		struct uvm_decoded d;

		if (uvm_decode_entry(s.entries + i * s.h.entry_size, UVM_QUEUE_V2, SAMPLE_PID,
				     &clock, &d) ||
		    d.rec.base.kind != GRT_UVM_MIGRATION)
			continue;
		with_stamps += d.rec.ext.gpu_ts_ns != 0;
		sane += d.rec.ext.aux > d.rec.ext.gpu_ts_ns &&
			d.rec.ext.aux - d.rec.ext.gpu_ts_ns < 1000000 &&
			(d.rec.base.flags & GRT_UVM_F_HAS_END) && d.rec.base.end_ns > d.ts_ns;
	}
	CHECK_EQ_U64(with_stamps, 344);
	CHECK_EQ_U64(sane, 344);
	uvm_capture_free(&s);
}

int main(void)
{
	RUN_TEST(test_v1_sample);
	RUN_TEST(test_v2_sample);
	RUN_TEST(test_versions_agree);
	RUN_TEST(test_migration_gpu_stamps);
	return TEST_EXIT_STATUS();
}
