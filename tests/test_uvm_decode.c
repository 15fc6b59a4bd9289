/* Tests of UVM queue decoding: every event type in both versions, the queue, the clocks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sources/uvm_decode.h"
#include "test_util.h"

/* A fixed clock offset, so mapped times are exact. */
static const struct uvm_clock_map clock_1000 = {.mono_minus_raw = 1000};

static void decode_ok(const void *entry, enum uvm_queue_version v, struct uvm_decoded *d)
{
	CHECK_EQ_U64(uvm_decode_entry(entry, v, 4242, &clock_1000, d), 0);
	CHECK_EQ_U64(d->rec.base.owner_pid, 4242);
	CHECK_EQ_U64(!!(d->rec.base.flags & GRT_UVM_F_QUEUE_V2), v == UVM_QUEUE_V2);
}

static void test_cpu_fault(void)
{
	struct uvm_ev_cpu_fault e = {.type = UVM_EV_CPU_FAULT,
				     .access = UVM_ACCESS_WRITE,
				     .cpu = 7,
				     .address = 0x7f0000001234,
				     .ts = 5000,
				     .pid = 4242,
				     .tid = 4243,
				     .pc = 0x401000};
	uint8_t slot[UVM_ENTRY_V2_SIZE] = {0};
	struct uvm_decoded d;

	memcpy(slot, &e, sizeof(e));
	for (int v = UVM_QUEUE_V1; v <= UVM_QUEUE_V2; v++) {
		decode_ok(slot, v, &d);
		CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_CPU_FAULT);
		CHECK_EQ_U64(d.rec.base.address, 0x7f0000001234);
		CHECK_EQ_U64(d.rec.base.bytes, 0);
		CHECK_EQ_U64(d.rec.base.cause, UVM_ACCESS_WRITE);
		CHECK_EQ_U64(d.rec.base.src_processor, GRT_UVM_PROC_CPU);
		CHECK_EQ_U64(d.rec.base.dst_processor, GRT_UVM_PROC_NONE);
		CHECK_EQ_U64(d.ts_ns, 6000);
		CHECK_EQ_U64(d.rec.base.end_ns, 6000);
		CHECK_EQ_U64(d.rec.base.flags & GRT_UVM_F_HAS_END, 0);
		CHECK_EQ_U64(d.tid, 4243);
		CHECK_EQ_U64(d.rec.ext.fault_pid, 4242);
		CHECK_EQ_U64(d.rec.ext.aux, 0x401000);
		CHECK_EQ_U64(d.rec.ext.aux32, 7);
		CHECK_EQ_U64(d.rec.ext.driver_type, UVM_EV_CPU_FAULT);
	}
}

static void test_migration_versions(void)
{
	struct uvm_ev_migration_v1 m1 = {.type = UVM_EV_MIGRATION,
					 .cause = UVM_MIGRATION_CAUSE_PREFETCH,
					 .src = 0,
					 .dst = 1,
					 .address = 0x7f0000200000,
					 .bytes = 2 << 20,
					 .begin_ts = 10000,
					 .end_ts = 30000,
					 .begin_gpu_ts = 111,
					 .end_gpu_ts = 222};
	struct uvm_ev_migration_v2 m2 = {.type = UVM_EV_MIGRATION,
					 .cause = UVM_MIGRATION_CAUSE_COHERENCE,
					 .src = 300,
					 .dst = 0,
					 .src_nid = -1,
					 .dst_nid = 0,
					 .address = 0x7f0000400000,
					 .bytes = 65536,
					 .begin_ts = 10000,
					 .end_ts = 0};
	struct uvm_decoded d;

	decode_ok(&m1, UVM_QUEUE_V1, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_MIGRATION);
	CHECK_EQ_U64(d.rec.base.address, 0x7f0000200000);
	CHECK_EQ_U64(d.rec.base.bytes, 2 << 20);
	CHECK_EQ_U64(d.rec.base.src_processor, 0);
	CHECK_EQ_U64(d.rec.base.dst_processor, 1);
	CHECK_EQ_U64(d.rec.base.cause, UVM_MIGRATION_CAUSE_PREFETCH);
	CHECK_EQ_U64(d.ts_ns, 11000);
	CHECK_EQ_U64(d.rec.base.end_ns, 31000);
	CHECK(d.rec.base.flags & GRT_UVM_F_HAS_END);
	CHECK_EQ_U64(d.rec.ext.gpu_ts_ns, 111);
	CHECK_EQ_U64(d.rec.ext.aux, 222);

	/* v2: 16-bit processor ids, and an asynchronous migration has no end stamp */
	decode_ok(&m2, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.src_processor, 300);
	CHECK_EQ_U64(d.rec.base.dst_processor, 0);
	CHECK_EQ_U64(d.rec.base.cause, UVM_MIGRATION_CAUSE_COHERENCE);
	CHECK_EQ_U64(d.rec.base.bytes, 65536);
	CHECK_EQ_U64(d.rec.base.end_ns, d.ts_ns);
	CHECK_EQ_U64(d.rec.base.flags & GRT_UVM_F_HAS_END, 0);

	/* the same v2 bytes read as v1 put the indices elsewhere: the version matters */
	decode_ok(&m2, UVM_QUEUE_V1, &d);
	CHECK(d.rec.base.src_processor != 300);
}

static void test_gpu_fault_and_replay(void)
{
	struct uvm_ev_gpu_fault_v1 g1 = {.type = UVM_EV_GPU_FAULT,
					 .fault_type = 2,
					 .access = UVM_ACCESS_READ,
					 .gpu = 1,
					 .gpc_or_channel = 5,
					 .client_id = 9,
					 .address = 0x7f0000010000,
					 .ts = 2000,
					 .gpu_ts = 777,
					 .batch = 31,
					 .client_type = 1};
	struct uvm_ev_gpu_fault_v2 g2 = {.type = UVM_EV_GPU_FAULT,
					 .fault_type = 3,
					 .gpu = 2,
					 .gpc_or_channel = 6,
					 .client_id = 10,
					 .address = 0x7f0000020000,
					 .ts = 3000,
					 .gpu_ts = 888,
					 .batch = 32,
					 .client_type = 2,
					 .access = UVM_ACCESS_ATOMIC};
	struct uvm_ev_replay_v2 r2 = {.type = UVM_EV_GPU_FAULT_REPLAY,
				      .client_type = 1,
				      .gpu = 2,
				      .batch = 32,
				      .ts = 4000,
				      .gpu_ts = 999};
	struct uvm_ev_replay_v1 r1 = {.type = UVM_EV_GPU_FAULT_REPLAY,
				      .gpu = 1,
				      .client_type = 2,
				      .batch = 31,
				      .ts = 4500,
				      .gpu_ts = 1999};
	struct uvm_decoded d;

	decode_ok(&g1, UVM_QUEUE_V1, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_GPU_FAULT);
	CHECK_EQ_U64(d.rec.base.src_processor, 1);
	CHECK_EQ_U64(d.rec.base.cause, UVM_ACCESS_READ);
	CHECK_EQ_U64(d.rec.base.flags & GRT_UVM_F_NON_REPLAYABLE, 0);
	CHECK_EQ_U64(d.rec.ext.fault_type, 2);
	CHECK_EQ_U64(d.rec.ext.aux, 31);
	CHECK_EQ_U64(d.rec.ext.aux32, 9u << 16 | 5);
	CHECK_EQ_U64(d.rec.ext.gpu_ts_ns, 777);
	CHECK_EQ_U64(d.ts_ns, 3000);

	decode_ok(&g2, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.src_processor, 2);
	CHECK_EQ_U64(d.rec.base.cause, UVM_ACCESS_ATOMIC);
	CHECK(d.rec.base.flags & GRT_UVM_F_NON_REPLAYABLE);
	CHECK_EQ_U64(d.rec.ext.client_type, 2);
	CHECK_EQ_U64(d.rec.base.address, 0x7f0000020000);

	decode_ok(&r2, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_GPU_FAULT_REPLAY);
	CHECK_EQ_U64(d.rec.base.src_processor, 2);
	CHECK_EQ_U64(d.rec.ext.aux, 32);
	CHECK_EQ_U64(d.rec.ext.gpu_ts_ns, 999);
	CHECK_EQ_U64(d.ts_ns, 5000);

	decode_ok(&r1, UVM_QUEUE_V1, &d);
	CHECK_EQ_U64(d.rec.base.src_processor, 1);
	CHECK(d.rec.base.flags & GRT_UVM_F_NON_REPLAYABLE);
	CHECK_EQ_U64(d.rec.ext.aux, 31);
}

static void test_regions_and_masks(void)
{
	struct uvm_ev_thrashing_v1 t1 = {.type = UVM_EV_THRASHING_DETECTED,
					 .processors = 0x3,
					 .address = 0x7f0000600000,
					 .size = 1 << 21,
					 .ts = 100};
	struct uvm_ev_thrashing_v2 t2 = {.type = UVM_EV_THRASHING_DETECTED,
					 .address = 0x7f0000800000,
					 .size = 1 << 16,
					 .ts = 200,
					 .processors = {0x5, 0, 0, 0, 1}};
	struct uvm_ev_read_dup_v2 rd = {.type = UVM_EV_READ_DUPLICATE,
					.address = 0x7f0000a00000,
					.size = 4096,
					.ts = 300,
					.processors = {0x6}};
	struct uvm_ev_read_dup_inval_v1 ri = {.type = UVM_EV_READ_DUPLICATE_INVALIDATE,
					      .resident = 1,
					      .address = 0x7f0000a00000,
					      .size = 4096,
					      .ts = 400};
	struct uvm_ev_eviction_v2 ev = {.type = UVM_EV_EVICTION,
					.src = 1,
					.dst = 0,
					.address_out = 0x7f0000c00000,
					.address_in = 0x7f0000e00000,
					.size = 2 << 20,
					.ts = 500};
	struct uvm_ev_map_remote_v1 mr = {.type = UVM_EV_MAP_REMOTE,
					  .src = 1,
					  .dst = 0,
					  .cause = UVM_MAP_REMOTE_CAUSE_THRASHING,
					  .address = 0x7f0001000000,
					  .size = 65536,
					  .ts = 600,
					  .gpu_ts = 42};
	struct uvm_decoded d;

	decode_ok(&t1, UVM_QUEUE_V1, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_THRASHING);
	CHECK_EQ_U64(d.rec.base.bytes, 1 << 21);
	CHECK_EQ_U64(d.rec.ext.aux, 0x3);
	decode_ok(&t2, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.address, 0x7f0000800000);
	CHECK_EQ_U64(d.rec.ext.aux, 0x5);
	CHECK_EQ_U64(d.ts_ns, 1200);
	decode_ok(&rd, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_READ_DUPLICATE);
	CHECK_EQ_U64(d.rec.ext.aux, 0x6);
	decode_ok(&ri, UVM_QUEUE_V1, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_READ_DUPLICATE_INVALIDATE);
	CHECK_EQ_U64(d.rec.base.dst_processor, 1);
	decode_ok(&ev, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_EVICTION);
	CHECK_EQ_U64(d.rec.base.address, 0x7f0000c00000);
	CHECK_EQ_U64(d.rec.base.bytes, 2 << 20);
	CHECK_EQ_U64(d.rec.base.src_processor, 1);
	CHECK_EQ_U64(d.rec.base.dst_processor, 0);
	CHECK_EQ_U64(d.rec.ext.aux, 0x7f0000e00000);
	decode_ok(&mr, UVM_QUEUE_V1, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_MAP_REMOTE);
	CHECK_EQ_U64(d.rec.base.cause, UVM_MAP_REMOTE_CAUSE_THRASHING);
	CHECK_EQ_U64(d.rec.ext.gpu_ts_ns, 42);
	CHECK_STR(grt_uvm_cause_name(d.rec.base.kind, d.rec.base.cause), "thrashing");
}

static void test_point_events(void)
{
	struct uvm_ev_fatal_v2 f2 = {.type = UVM_EV_FATAL_FAULT,
				     .fault_type = 6,
				     .access = UVM_ACCESS_WRITE,
				     .reason = UVM_FATAL_REASON_INVALID_ADDRESS,
				     .processor = 1,
				     .address = 0xdead000,
				     .ts = 10};
	struct uvm_ev_throttling_v2 ts = {
	    .type = UVM_EV_THROTTLING_START, .processor = 1, .address = 0x7f0000000000, .ts = 20};
	struct uvm_ev_throttling_v1 te = {
	    .type = UVM_EV_THROTTLING_END, .processor = 1, .address = 0x7f0000000000, .ts = 30};
	struct uvm_ev_page_size_v2 ps = {.type = UVM_EV_PAGE_SIZE_CHANGE,
					 .processor = 1,
					 .size = 65536,
					 .address = 0x7f0000000000,
					 .ts = 40};
	uint8_t overflow[UVM_ENTRY_V2_SIZE] = {UVM_EV_FAULT_BUFFER_OVERFLOW};
	struct uvm_decoded d;

	decode_ok(&f2, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_FATAL_FAULT);
	CHECK_EQ_U64(d.rec.ext.aux32, UVM_FATAL_REASON_INVALID_ADDRESS);
	CHECK_EQ_U64(d.rec.ext.fault_type, 6);
	CHECK_EQ_U64(d.rec.base.src_processor, 1);
	decode_ok(&ts, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_THROTTLING_START);
	CHECK_EQ_U64(d.rec.base.src_processor, 1);
	decode_ok(&te, UVM_QUEUE_V1, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_THROTTLING_END);
	CHECK_EQ_U64(d.ts_ns, 1030);
	decode_ok(&ps, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_PAGE_SIZE_CHANGE);
	CHECK_EQ_U64(d.rec.ext.aux32, 65536);
	decode_ok(overflow, UVM_QUEUE_V2, &d);
	CHECK_EQ_U64(d.rec.base.kind, GRT_UVM_FAULT_BUFFER_OVERFLOW);
	CHECK_EQ_U64(d.ts_ns, 0); /* no stamp: the source substitutes the drain time */
}

static void test_rejects_unknown_types(void)
{
	static const uint8_t types[] = {0, 15, 62, 63, 200};
	uint8_t slot[UVM_ENTRY_V2_SIZE] = {0};
	struct uvm_decoded d;

	for (size_t i = 0; i < sizeof(types); i++) {
		slot[0] = types[i];
		CHECK_EQ_U64(uvm_decode_entry(slot, UVM_QUEUE_V2, 1, &clock_1000, &d),
			     (uint64_t)-EINVAL);
	}
	slot[0] = UVM_EV_MIGRATION;
	CHECK_EQ_U64(uvm_decode_entry(slot, 3, 1, &clock_1000, &d), (uint64_t)-EINVAL);
	CHECK_EQ_U64(uvm_entry_size(UVM_QUEUE_V1), 64);
	CHECK_EQ_U64(uvm_entry_size(UVM_QUEUE_V2), 72);
}

/* ---- the shared queue, with this test playing the driver ---- */

struct fake_driver_queue {
	struct uvm_queue_control ctrl;
	uint8_t entries[8][UVM_ENTRY_V1_SIZE];
	struct uvm_queue q;
};

static void fake_init(struct fake_driver_queue *f)
{
	memset(f, 0, sizeof(*f));
	f->q = (struct uvm_queue){.ctrl = &f->ctrl,
				  .entries = &f->entries[0][0],
				  .count = 8,
				  .entry_size = UVM_ENTRY_V1_SIZE};
}

/* What the driver's enqueue does: refuse when one slot is left, else write and advance put. */
static void fake_put(struct fake_driver_queue *f, uint8_t type, uint64_t tag)
{
	uint32_t mask = 7, get = f->ctrl.get_behind & mask, put = f->ctrl.put_behind & mask;

	if (((8 + get - put) & mask) == 1) {
		f->ctrl.dropped[type]++;
		return;
	}
	memset(f->entries[put], 0, UVM_ENTRY_V1_SIZE);
	f->entries[put][0] = type;
	memcpy(&f->entries[put][8], &tag, sizeof(tag));
	f->ctrl.put_ahead = f->ctrl.put_behind = (put + 1) & mask;
}

struct seen {
	uint64_t tags[32];
	unsigned n;
};

static void record_tag(void *ctx, const void *entry)
{
	struct seen *s = ctx;

	memcpy(&s->tags[s->n++], (const uint8_t *)entry + 8, 8);
}

struct drop_seen {
	uint64_t by_type[UVM_EV_NUM_TYPES_ALL];
};

static void record_drop(void *ctx, uint32_t type, uint64_t n)
{
	((struct drop_seen *)ctx)->by_type[type] += n;
}

static void test_queue_wraps_in_order(void)
{
	struct fake_driver_queue f;
	struct seen s = {0};

	fake_init(&f);
	CHECK_EQ_U64(uvm_queue_drain(&f.q, record_tag, &s), 0);
	for (uint64_t i = 0; i < 5; i++)
		fake_put(&f, UVM_EV_CPU_FAULT, 100 + i);
	CHECK_EQ_U64(uvm_queue_drain(&f.q, record_tag, &s), 5);
	CHECK_EQ_U64(f.ctrl.get_behind, 5);
	CHECK_EQ_U64(f.ctrl.get_ahead, 5);
	/* the next six wrap around the end of the 8-slot ring */
	for (uint64_t i = 5; i < 11; i++)
		fake_put(&f, UVM_EV_MIGRATION, 100 + i);
	CHECK_EQ_U64(uvm_queue_drain(&f.q, record_tag, &s), 6);
	CHECK_EQ_U64(f.ctrl.get_behind, 3);
	CHECK_EQ_U64(s.n, 11);
	for (unsigned i = 0; i < s.n; i++)
		CHECK_EQ_U64(s.tags[i], 100 + i);
}

static void test_queue_full_counts_drops(void)
{
	struct fake_driver_queue f;
	struct drop_seen drops = {0};
	struct seen s = {0};

	fake_init(&f);
	/* 8 slots hold 7 entries; the rest are dropped by type */
	for (uint64_t i = 0; i < 10; i++)
		fake_put(&f, i < 8 ? UVM_EV_GPU_FAULT : UVM_EV_MIGRATION, i);
	CHECK_EQ_U64(uvm_queue_new_drops(&f.q, record_drop, &drops), 3);
	CHECK_EQ_U64(drops.by_type[UVM_EV_GPU_FAULT], 1);
	CHECK_EQ_U64(drops.by_type[UVM_EV_MIGRATION], 2);
	/* counted once: the next call reports only new drops */
	CHECK_EQ_U64(uvm_queue_new_drops(&f.q, record_drop, &drops), 0);
	CHECK_EQ_U64(uvm_queue_drain(&f.q, record_tag, &s), 7);
	for (unsigned i = 0; i < 7; i++)
		CHECK_EQ_U64(s.tags[i], i);
	/* room again after the drain */
	fake_put(&f, UVM_EV_CPU_FAULT, 99);
	CHECK_EQ_U64(uvm_queue_new_drops(&f.q, record_drop, &drops), 0);
	CHECK_EQ_U64(uvm_queue_drain(&f.q, record_tag, &s), 1);
	CHECK_EQ_U64(s.tags[7], 99);
}

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void test_clock_map(void)
{
	struct uvm_clock_map m;
	uint64_t raw, mono, mapped;

	uvm_clock_map_sample(&m);
	CHECK(m.error_ns < 1000000);
	raw = read_clock(CLOCK_MONOTONIC_RAW);
	mono = read_clock(CLOCK_MONOTONIC);
	mapped = uvm_clock_to_mono(&m, raw);
	/* a raw stamp taken just before a monotonic read maps to just before it */
	CHECK(mapped <= mono + m.error_ns && mono - mapped < 1000000);
	CHECK_EQ_U64(uvm_clock_to_mono(&m, 0), 0);
}

int main(void)
{
	RUN_TEST(test_cpu_fault);
	RUN_TEST(test_migration_versions);
	RUN_TEST(test_gpu_fault_and_replay);
	RUN_TEST(test_regions_and_masks);
	RUN_TEST(test_point_events);
	RUN_TEST(test_rejects_unknown_types);
	RUN_TEST(test_queue_wraps_in_order);
	RUN_TEST(test_queue_full_counts_drops);
	RUN_TEST(test_clock_map);
	return TEST_EXIT_STATUS();
}
