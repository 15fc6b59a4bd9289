/*
 * serve's UVM counts: the captured H100 queues of tests/data/uvm counted per
 * process (faults by side, migrated bytes by direction), the direction rules,
 * the replay double the end-to-end tests use, and its one-line errors.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "serve/uvm_counts.h"
#include "sources/uvm_capture.h"
#include "sources/uvm_decode.h"
#include "test_util.h"

/* What the captured program did (tests/data/uvm/README.md): 2 passes over 8 MiB each way. */
#define CPU_FAULTS 72
#define GPU_FAULTS 1383
#define MOVED (16ull << 20)

struct drain_ctx {
	enum uvm_queue_version version;
	struct uvm_counts counts;
	unsigned bad;
};

static void on_entry(void *ctx, const void *entry)
{
	static const struct uvm_clock_map clock;
	struct drain_ctx *d = ctx;
	struct uvm_decoded ev;

	if (uvm_decode_entry(entry, d->version, 459, &clock, &ev))
		d->bad++;
	else
		uvm_counts_add(&d->counts, &ev.rec.base);
}

/* A capture turned into a queue drains as a driver's queue does: every entry once, then none. */
static void check_capture(const char *path)
{
	struct uvm_capture c;
	struct uvm_queue q;
	struct drain_ctx d = {0};
	char why[256];

	if (uvm_capture_load(path, &c, why, sizeof(why))) {
		printf("  %s\n", why);
		CHECK(0);
		return;
	}
	CHECK_EQ_U64(uvm_capture_queue(&c, &q), 0);
	d.version = (enum uvm_queue_version)c.h.version;
	CHECK_EQ_U64(uvm_queue_drain(&q, on_entry, &d), 1809);
	CHECK_EQ_U64(uvm_queue_drain(&q, on_entry, &d), 0);
	CHECK_EQ_U64(uvm_queue_new_drops(&q, NULL, NULL), 0);
	CHECK_EQ_U64(d.bad, 0);
	CHECK_EQ_U64(d.counts.faults[UVM_FAULTS_CPU], CPU_FAULTS);
	CHECK_EQ_U64(d.counts.faults[UVM_FAULTS_GPU], GPU_FAULTS);
	CHECK_EQ_U64(d.counts.migrated_bytes[UVM_DIR_HTOD], MOVED);
	CHECK_EQ_U64(d.counts.migrated_bytes[UVM_DIR_DTOH], MOVED);
	CHECK_EQ_U64(d.counts.migrated_bytes[UVM_DIR_DTOD], 0);
	uvm_capture_queue_free(&q);
	uvm_capture_free(&c);
}

static void test_v1_capture_counts(void)
{
	check_capture("tests/data/uvm/v1.bin");
}

static void test_v2_capture_counts(void)
{
	check_capture("tests/data/uvm/v2.bin");
}

static void test_directions_and_kinds(void)
{
	struct uvm_counts c = {0};
	struct grt_uvm_event_rec e = {.kind = GRT_UVM_MIGRATION, .bytes = 4096};

	e.src_processor = GRT_UVM_PROC_CPU, e.dst_processor = 1;
	uvm_counts_add(&c, &e);
	e.src_processor = 2, e.dst_processor = GRT_UVM_PROC_CPU, e.bytes = 8192;
	uvm_counts_add(&c, &e);
	e.src_processor = 1, e.dst_processor = 2, e.bytes = 65536;
	uvm_counts_add(&c, &e);
	e.src_processor = GRT_UVM_PROC_NONE, e.dst_processor = 1; /* no source named: not counted */
	uvm_counts_add(&c, &e);
	e.src_processor = GRT_UVM_PROC_CPU, e.dst_processor = GRT_UVM_PROC_CPU;
	uvm_counts_add(&c, &e);
	e.kind = GRT_UVM_GPU_FAULT_REPLAY; /* a replay retries faults already counted */
	uvm_counts_add(&c, &e);
	e.kind = GRT_UVM_EVICTION;
	uvm_counts_add(&c, &e);
	e.kind = GRT_UVM_CPU_FAULT;
	uvm_counts_add(&c, &e);
	CHECK_EQ_U64(c.migrated_bytes[UVM_DIR_HTOD], 4096);
	CHECK_EQ_U64(c.migrated_bytes[UVM_DIR_DTOH], 8192);
	CHECK_EQ_U64(c.migrated_bytes[UVM_DIR_DTOD], 65536);
	CHECK_EQ_U64(c.faults[UVM_FAULTS_CPU], 1);
	CHECK_EQ_U64(c.faults[UVM_FAULTS_GPU], 0);
	CHECK_STR(uvm_direction_name(UVM_DIR_DTOD), "dtod");
	CHECK_STR(uvm_fault_side_name(UVM_FAULTS_GPU), "gpu");
}

/* The replay double: each watched process gets the capture's counts, once, kept after its exit. */
static void test_counter_replay(void)
{
	struct uvm_counter *u = NULL;
	struct uvm_counts c;
	char why[256] = "";

	CHECK_EQ_U64(uvm_counter_start(&u, "tests/data/uvm/v2.bin", why, sizeof(why)), 0);
	if (!u)
		return;
	uvm_counter_watch(u, 1000);
	uvm_counter_watch(u, 1000); /* seen again: one tracker */
	CHECK(!uvm_counter_get(u, 1000, &c)); /* bound on the next tick */
	uvm_counter_poll(u, 1);
	CHECK(uvm_counter_get(u, 1000, &c));
	CHECK_EQ_U64(c.faults[UVM_FAULTS_GPU], GPU_FAULTS);
	uvm_counter_poll(u, 2); /* drained: nothing counted twice */
	CHECK(uvm_counter_get(u, 1000, &c));
	CHECK_EQ_U64(c.faults[UVM_FAULTS_CPU], CPU_FAULTS);
	CHECK_EQ_U64(c.migrated_bytes[UVM_DIR_HTOD], MOVED);
	memset(&c, 0, sizeof(c));
	CHECK(uvm_counter_finish(u, 1000, &c));
	CHECK_EQ_U64(c.migrated_bytes[UVM_DIR_DTOH], MOVED);
	CHECK(!uvm_counter_get(u, 1000, &c));
	CHECK(!uvm_counter_finish(u, 1000, &c));
	/* a process that exits before the first tick is bound at its exit */
	uvm_counter_watch(u, 1001);
	memset(&c, 0, sizeof(c));
	CHECK(uvm_counter_finish(u, 1001, &c));
	CHECK_EQ_U64(c.faults[UVM_FAULTS_GPU], GPU_FAULTS);
	CHECK(!uvm_counter_get(u, 4242, &c)); /* never watched */
	CHECK_EQ_U64(uvm_counter_lost(u), 0);
	uvm_counter_watch(u, 1002); /* still watched at the stop: released there */
	uvm_counter_poll(u, 3);
	uvm_counter_stop(u);
}

static void test_counter_errors(void)
{
	struct uvm_counter *u = NULL;
	char why[256] = "";

	CHECK_EQ_U64(uvm_counter_start(&u, "/nonexistent/q.bin", why, sizeof(why)),
		     (uint64_t)-ENOENT);
	CHECK_STR(why, "/nonexistent/q.bin: No such file or directory");
	CHECK_EQ_U64(uvm_counter_start(&u, "tests/data/uvm/README.md", why, sizeof(why)),
		     (uint64_t)-EINVAL);
	CHECK(strstr(why, "tests/data/uvm/README.md is not a UVM queue capture"));
	CHECK(!u);
	if (access("/dev/nvidia-uvm-tools", F_OK)) {
		CHECK_EQ_U64(uvm_counter_start(&u, NULL, why, sizeof(why)), (uint64_t)-ENOENT);
		CHECK_STR(why, "no /dev/nvidia-uvm-tools: NVIDIA UVM driver not loaded (modprobe "
			       "nvidia-uvm)");
	}
	/* the counter's users may hold none */
	uvm_counter_watch(NULL, 1);
	uvm_counter_poll(NULL, 1);
	CHECK_EQ_U64(uvm_counter_lost(NULL), 0);
	uvm_counter_stop(NULL);
}

int main(void)
{
	RUN_TEST(test_v1_capture_counts);
	RUN_TEST(test_v2_capture_counts);
	RUN_TEST(test_directions_and_kinds);
	RUN_TEST(test_counter_replay);
	RUN_TEST(test_counter_errors);
	return TEST_EXIT_STATUS();
}
