/* Decoding UVM tools queue entries (v1 and v2) into uvm records; the queue consumer side. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include "common/clock.h"
#include "sources/uvm_decode.h"

void uvm_clock_map_sample(struct uvm_clock_map *m)
{
	uint64_t best = UINT64_MAX;

	/* a preemption between the reads widens the window; keep the narrowest */
	for (int i = 0; i < 5; i++) {
		uint64_t raw0 = grt_clock_ns(CLOCK_MONOTONIC_RAW);
		uint64_t mono = grt_clock_ns(CLOCK_MONOTONIC);
		uint64_t raw1 = grt_clock_ns(CLOCK_MONOTONIC_RAW);

		if (raw1 - raw0 < best) {
			best = raw1 - raw0;
			m->mono_minus_raw = (int64_t)(mono - (raw0 + (raw1 - raw0) / 2));
			m->error_ns = best / 2 + 1;
		}
	}
}

uint64_t uvm_clock_to_mono(const struct uvm_clock_map *m, uint64_t raw_ns)
{
	return raw_ns ? (uint64_t)((int64_t)raw_ns + m->mono_minus_raw) : 0;
}

size_t uvm_entry_size(enum uvm_queue_version version)
{
	switch (version) {
	case UVM_QUEUE_V1:
		return UVM_ENTRY_V1_SIZE;
	case UVM_QUEUE_V2:
		return UVM_ENTRY_V2_SIZE;
	}
	return 0;
}

/* The fields every decoder fills; kind-specific ones follow. */
static void start_record(struct uvm_decoded *out, uint32_t kind, uint8_t driver_type,
			 uint32_t owner_pid, enum uvm_queue_version version)
{
	memset(out, 0, sizeof(*out));
	out->rec.base.kind = kind;
	out->rec.base.owner_pid = owner_pid;
	out->rec.base.src_processor = GRT_UVM_PROC_NONE;
	out->rec.base.dst_processor = GRT_UVM_PROC_NONE;
	out->rec.base.flags = version == UVM_QUEUE_V2 ? GRT_UVM_F_QUEUE_V2 : 0;
	out->rec.ext.driver_type = driver_type;
}

static void set_time(struct uvm_decoded *out, const struct uvm_clock_map *clock, uint64_t raw_begin,
		     uint64_t raw_end)
{
	out->ts_ns = uvm_clock_to_mono(clock, raw_begin);
	out->rec.base.end_ns = out->ts_ns;
	if (raw_end && raw_end >= raw_begin) {
		out->rec.base.end_ns = uvm_clock_to_mono(clock, raw_end);
		out->rec.base.flags |= GRT_UVM_F_HAS_END;
	}
}

static void decode_cpu_fault(const void *entry, struct uvm_decoded *out,
			     const struct uvm_clock_map *clock)
{
	struct uvm_ev_cpu_fault f;

	memcpy(&f, entry, sizeof(f));
	out->rec.base.address = f.address;
	out->rec.base.src_processor = GRT_UVM_PROC_CPU;
	out->rec.base.cause = f.access;
	out->rec.ext.aux = f.pc;
	out->rec.ext.aux32 = f.cpu;
	out->rec.ext.tid = f.tid;
	out->rec.ext.fault_pid = f.pid;
	out->tid = f.tid;
	set_time(out, clock, f.ts, 0);
}

/* Migration fields both versions share once the indices are widened. */
struct migration_fields {
	uint8_t cause;
	uint32_t src, dst;
	uint64_t address, bytes, begin_ts, end_ts, begin_gpu_ts, end_gpu_ts;
};

static void fill_migration(const struct migration_fields *m, struct uvm_decoded *out,
			   const struct uvm_clock_map *clock)
{
	out->rec.base.address = m->address;
	out->rec.base.bytes = m->bytes;
	out->rec.base.src_processor = m->src;
	out->rec.base.dst_processor = m->dst;
	out->rec.base.cause = m->cause;
	out->rec.ext.gpu_ts_ns = m->begin_gpu_ts;
	out->rec.ext.aux = m->end_gpu_ts;
	set_time(out, clock, m->begin_ts, m->end_ts);
}

/*
 * Copies the driver's entry into a local `e` of the queue version's struct and
 * evaluates `take` with it: both layouts name their fields alike, only the
 * offsets differ.
 */
#define WITH_EVENT(version, entry, name, take)                                                     \
	do {                                                                                       \
		if ((version) == UVM_QUEUE_V2) {                                                   \
			struct uvm_ev_##name##_v2 e;                                               \
			memcpy(&e, (entry), sizeof(e));                                            \
			take;                                                                      \
		} else {                                                                           \
			struct uvm_ev_##name##_v1 e;                                               \
			memcpy(&e, (entry), sizeof(e));                                            \
			take;                                                                      \
		}                                                                                  \
	} while (0)

static void decode_migration(const void *entry, enum uvm_queue_version version,
			     struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	struct migration_fields m;

	WITH_EVENT(
	    version, entry, migration,
	    (m = (struct migration_fields){e.cause, e.src, e.dst, e.address, e.bytes, e.begin_ts,
					   e.end_ts, e.begin_gpu_ts, e.end_gpu_ts}));
	fill_migration(&m, out, clock);
}

struct gpu_fault_fields {
	uint8_t fault_type, access, client_type;
	uint32_t gpu, gpc_or_channel, client_id, batch;
	uint64_t address, ts, gpu_ts;
};

static void decode_gpu_fault(const void *entry, enum uvm_queue_version version,
			     struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	struct gpu_fault_fields g;

	WITH_EVENT(version, entry, gpu_fault,
		   (g = (struct gpu_fault_fields){e.fault_type, e.access, e.client_type, e.gpu,
						  e.gpc_or_channel, e.client_id, e.batch, e.address,
						  e.ts, e.gpu_ts}));
	out->rec.base.address = g.address;
	out->rec.base.src_processor = g.gpu;
	out->rec.base.cause = g.access;
	if (g.client_type == 2)
		out->rec.base.flags |= GRT_UVM_F_NON_REPLAYABLE;
	out->rec.ext.fault_type = g.fault_type;
	out->rec.ext.client_type = g.client_type;
	out->rec.ext.aux = g.batch;
	out->rec.ext.aux32 = g.client_id << 16 | (g.gpc_or_channel & 0xffff);
	out->rec.ext.gpu_ts_ns = g.gpu_ts;
	set_time(out, clock, g.ts, 0);
}

static void decode_replay(const void *entry, enum uvm_queue_version version,
			  struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	uint32_t gpu, batch;
	uint8_t client_type;
	uint64_t ts, gpu_ts;

	WITH_EVENT(version, entry, replay,
		   (gpu = e.gpu, batch = e.batch, client_type = e.client_type, ts = e.ts,
		    gpu_ts = e.gpu_ts));
	out->rec.base.src_processor = gpu;
	if (client_type == 2)
		out->rec.base.flags |= GRT_UVM_F_NON_REPLAYABLE;
	out->rec.ext.client_type = client_type;
	out->rec.ext.aux = batch;
	out->rec.ext.gpu_ts_ns = gpu_ts;
	set_time(out, clock, ts, 0);
}

static void decode_fatal(const void *entry, enum uvm_queue_version version, struct uvm_decoded *out,
			 const struct uvm_clock_map *clock)
{
	uint32_t processor;
	uint8_t fault_type, access, reason;
	uint64_t address, ts;

	WITH_EVENT(version, entry, fatal,
		   (processor = e.processor, fault_type = e.fault_type, access = e.access,
		    reason = e.reason, address = e.address, ts = e.ts));
	out->rec.base.address = address;
	out->rec.base.src_processor = processor;
	out->rec.base.cause = access;
	out->rec.ext.fault_type = fault_type;
	out->rec.ext.aux32 = reason;
	set_time(out, clock, ts, 0);
}

/* Read-duplicate and thrashing: a region, its size, and a processor mask. */
static void decode_region_mask(const void *entry, enum uvm_queue_version version, bool thrashing,
			       struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	uint64_t address, size, ts, mask;

	if (thrashing && version == UVM_QUEUE_V2) {
		struct uvm_ev_thrashing_v2 e;

		memcpy(&e, entry, sizeof(e));
		address = e.address, size = e.size, ts = e.ts, mask = e.processors[0];
	} else if (thrashing) {
		struct uvm_ev_thrashing_v1 e;

		memcpy(&e, entry, sizeof(e));
		address = e.address, size = e.size, ts = e.ts, mask = e.processors;
	} else if (version == UVM_QUEUE_V2) {
		struct uvm_ev_read_dup_v2 e;

		memcpy(&e, entry, sizeof(e));
		address = e.address, size = e.size, ts = e.ts, mask = e.processors[0];
	} else {
		struct uvm_ev_read_dup_v1 e;

		memcpy(&e, entry, sizeof(e));
		address = e.address, size = e.size, ts = e.ts, mask = e.processors;
	}
	out->rec.base.address = address;
	out->rec.base.bytes = size;
	out->rec.ext.aux = mask;
	set_time(out, clock, ts, 0);
}

static void decode_read_dup_invalidate(const void *entry, enum uvm_queue_version version,
				       struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	uint32_t resident;
	uint64_t address, size, ts;

	WITH_EVENT(version, entry, read_dup_inval,
		   (resident = e.resident, address = e.address, size = e.size, ts = e.ts));
	out->rec.base.address = address;
	out->rec.base.bytes = size;
	out->rec.base.dst_processor = resident;
	set_time(out, clock, ts, 0);
}

static void decode_page_size(const void *entry, enum uvm_queue_version version,
			     struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	uint32_t processor, size;
	uint64_t address, ts;

	WITH_EVENT(version, entry, page_size,
		   (processor = e.processor, size = e.size, address = e.address, ts = e.ts));
	out->rec.base.address = address;
	out->rec.base.src_processor = processor;
	out->rec.ext.aux32 = size;
	set_time(out, clock, ts, 0);
}

static void decode_throttling(const void *entry, enum uvm_queue_version version,
			      struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	uint32_t processor;
	uint64_t address, ts;

	WITH_EVENT(version, entry, throttling,
		   (processor = e.processor, address = e.address, ts = e.ts));
	out->rec.base.address = address;
	out->rec.base.src_processor = processor;
	set_time(out, clock, ts, 0);
}

static void decode_map_remote(const void *entry, enum uvm_queue_version version,
			      struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	uint32_t src, dst;
	uint8_t cause;
	uint64_t address, size, ts, gpu_ts;

	WITH_EVENT(version, entry, map_remote,
		   (src = e.src, dst = e.dst, cause = e.cause, address = e.address, size = e.size,
		    ts = e.ts, gpu_ts = e.gpu_ts));
	out->rec.base.address = address;
	out->rec.base.bytes = size;
	out->rec.base.src_processor = src;
	out->rec.base.dst_processor = dst;
	out->rec.base.cause = cause;
	out->rec.ext.gpu_ts_ns = gpu_ts;
	set_time(out, clock, ts, 0);
}

static void decode_eviction(const void *entry, enum uvm_queue_version version,
			    struct uvm_decoded *out, const struct uvm_clock_map *clock)
{
	uint32_t src, dst;
	uint64_t address_out, address_in, size, ts;

	WITH_EVENT(version, entry, eviction,
		   (src = e.src, dst = e.dst, address_out = e.address_out,
		    address_in = e.address_in, size = e.size, ts = e.ts));
	out->rec.base.address = address_out;
	out->rec.base.bytes = size;
	out->rec.base.src_processor = src;
	out->rec.base.dst_processor = dst;
	out->rec.ext.aux = address_in;
	set_time(out, clock, ts, 0);
}

/* Driver event type -> record kind; 0 where no release defines the type. */
static const uint8_t kind_of_type[UVM_EV_NUM_TYPES] = {
    [UVM_EV_CPU_FAULT] = GRT_UVM_CPU_FAULT,
    [UVM_EV_MIGRATION] = GRT_UVM_MIGRATION,
    [UVM_EV_GPU_FAULT] = GRT_UVM_GPU_FAULT,
    [UVM_EV_GPU_FAULT_REPLAY] = GRT_UVM_GPU_FAULT_REPLAY,
    [UVM_EV_FAULT_BUFFER_OVERFLOW] = GRT_UVM_FAULT_BUFFER_OVERFLOW,
    [UVM_EV_FATAL_FAULT] = GRT_UVM_FATAL_FAULT,
    [UVM_EV_READ_DUPLICATE] = GRT_UVM_READ_DUPLICATE,
    [UVM_EV_READ_DUPLICATE_INVALIDATE] = GRT_UVM_READ_DUPLICATE_INVALIDATE,
    [UVM_EV_PAGE_SIZE_CHANGE] = GRT_UVM_PAGE_SIZE_CHANGE,
    [UVM_EV_THRASHING_DETECTED] = GRT_UVM_THRASHING,
    [UVM_EV_THROTTLING_START] = GRT_UVM_THROTTLING_START,
    [UVM_EV_THROTTLING_END] = GRT_UVM_THROTTLING_END,
    [UVM_EV_MAP_REMOTE] = GRT_UVM_MAP_REMOTE,
    [UVM_EV_EVICTION] = GRT_UVM_EVICTION,
};

int uvm_decode_entry(const void *entry, enum uvm_queue_version version, uint32_t owner_pid,
		     const struct uvm_clock_map *clock, struct uvm_decoded *out)
{
	uint8_t type = *(const uint8_t *)entry;

	if (type >= UVM_EV_NUM_TYPES || !kind_of_type[type] || !uvm_entry_size(version))
		return -EINVAL;
	start_record(out, kind_of_type[type], type, owner_pid, version);
	switch (type) {
	case UVM_EV_CPU_FAULT:
		decode_cpu_fault(entry, out, clock);
		break;
	case UVM_EV_MIGRATION:
		decode_migration(entry, version, out, clock);
		break;
	case UVM_EV_GPU_FAULT:
		decode_gpu_fault(entry, version, out, clock);
		break;
	case UVM_EV_GPU_FAULT_REPLAY:
		decode_replay(entry, version, out, clock);
		break;
	case UVM_EV_FATAL_FAULT:
		decode_fatal(entry, version, out, clock);
		break;
	case UVM_EV_READ_DUPLICATE:
		decode_region_mask(entry, version, false, out, clock);
		break;
	case UVM_EV_THRASHING_DETECTED:
		decode_region_mask(entry, version, true, out, clock);
		break;
	case UVM_EV_READ_DUPLICATE_INVALIDATE:
		decode_read_dup_invalidate(entry, version, out, clock);
		break;
	case UVM_EV_PAGE_SIZE_CHANGE:
		decode_page_size(entry, version, out, clock);
		break;
	case UVM_EV_THROTTLING_START:
	case UVM_EV_THROTTLING_END:
		decode_throttling(entry, version, out, clock);
		break;
	case UVM_EV_MAP_REMOTE:
		decode_map_remote(entry, version, out, clock);
		break;
	case UVM_EV_EVICTION:
		decode_eviction(entry, version, out, clock);
		break;
	default:
		/* fault buffer overflow: no payload beyond its type in any release */
		break;
	}
	return 0;
}

unsigned uvm_queue_drain(struct uvm_queue *q, void (*on_entry)(void *ctx, const void *entry),
			 void *ctx)
{
	uint32_t mask = q->count - 1;
	uint32_t get = q->ctrl->get_behind & mask;
	/* acquire: the entry bytes the driver wrote before moving put are visible */
	uint32_t put = __atomic_load_n(&q->ctrl->put_behind, __ATOMIC_ACQUIRE) & mask;
	unsigned consumed = 0;

	if (get == put)
		return 0;
	/* tell the driver which slots are being read (its wake-up test uses get_ahead) */
	__atomic_store_n(&q->ctrl->get_ahead, put, __ATOMIC_RELEASE);
	while (get != put) {
		on_entry(ctx, q->entries + (size_t)get * q->entry_size);
		get = (get + 1) & mask;
		consumed++;
	}
	/* release: the slots are free only once they were read */
	__atomic_store_n(&q->ctrl->get_behind, get, __ATOMIC_RELEASE);
	return consumed;
}

uint64_t uvm_queue_new_drops(struct uvm_queue *q,
			     void (*on_drop)(void *ctx, uint32_t driver_type, uint64_t n),
			     void *ctx)
{
	uint64_t total = 0;

	for (uint32_t t = 0; t < UVM_EV_NUM_TYPES_ALL; t++) {
		uint64_t now = __atomic_load_n(&q->ctrl->dropped[t], __ATOMIC_RELAXED);

		if (now <= q->dropped_seen[t])
			continue;
		if (on_drop)
			on_drop(ctx, t, now - q->dropped_seen[t]);
		total += now - q->dropped_seen[t];
		q->dropped_seen[t] = now;
	}
	return total;
}
