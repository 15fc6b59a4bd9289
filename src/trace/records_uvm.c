/* Description and names of the uvm record: unified-memory faults, migrations, evictions. */
#include <stdio.h>
#include "trace/grt_format.h"
#include "trace/record_desc.h"
#include "trace/records_uvm.h"
#include "trace/trace_names.h"

static const char *const kind_names[GRT_UVM_KIND_COUNT] = {
    [GRT_UVM_CPU_FAULT] = "cpu_fault",
    [GRT_UVM_GPU_FAULT] = "gpu_fault",
    [GRT_UVM_GPU_FAULT_REPLAY] = "gpu_fault_replay",
    [GRT_UVM_MIGRATION] = "migration",
    [GRT_UVM_EVICTION] = "eviction",
    [GRT_UVM_THRASHING] = "thrashing",
    [GRT_UVM_THROTTLING_START] = "throttling_start",
    [GRT_UVM_THROTTLING_END] = "throttling_end",
    [GRT_UVM_MAP_REMOTE] = "map_remote",
    [GRT_UVM_READ_DUPLICATE] = "read_duplicate",
    [GRT_UVM_READ_DUPLICATE_INVALIDATE] = "read_duplicate_invalidate",
    [GRT_UVM_FATAL_FAULT] = "fatal_fault",
    [GRT_UVM_QUEUE_OVERFLOW] = "queue_overflow",
    [GRT_UVM_FAULT_BUFFER_OVERFLOW] = "fault_buffer_overflow",
    [GRT_UVM_PAGE_SIZE_CHANGE] = "page_size_change",
};

const char *grt_uvm_kind_name(uint32_t kind)
{
	return GRT_NAME_OF(kind_names, kind);
}

static const char *const migration_causes[] = {
    [0] = "none",     [1] = "user",	[2] = "coherence",
    [3] = "prefetch", [4] = "eviction", [5] = "access_counters",
};

static const char *const map_remote_causes[] = {
    [0] = "none",   [1] = "coherence",	   [2] = "thrashing",
    [3] = "policy", [4] = "out_of_memory", [5] = "eviction",
};

static const char *const access_types[] = {
    [0] = "none", [1] = "read", [2] = "write", [3] = "atomic", [4] = "prefetch",
};

/* Driver event types, for queue-overflow records (which type was lost). */
static const char *const driver_types[] = {
    [1] = "cpu_fault",
    [2] = "migration",
    [3] = "gpu_fault",
    [4] = "gpu_fault_replay",
    [5] = "fault_buffer_overflow",
    [6] = "fatal_fault",
    [7] = "read_duplicate",
    [8] = "read_duplicate_invalidate",
    [9] = "page_size_change",
    [10] = "thrashing",
    [11] = "throttling_start",
    [12] = "throttling_end",
    [13] = "map_remote",
    [14] = "eviction",
};

const char *grt_uvm_cause_name(uint32_t kind, uint32_t cause)
{
	switch (kind) {
	case GRT_UVM_MIGRATION:
		return GRT_NAME_OF(migration_causes, cause);
	case GRT_UVM_MAP_REMOTE:
		return GRT_NAME_OF(map_remote_causes, cause);
	case GRT_UVM_CPU_FAULT:
	case GRT_UVM_GPU_FAULT:
	case GRT_UVM_FATAL_FAULT:
		return GRT_NAME_OF(access_types, cause);
	case GRT_UVM_QUEUE_OVERFLOW:
		return GRT_NAME_OF(driver_types, cause);
	default:
		return "-";
	}
}

const char *grt_uvm_processor_name(uint32_t id, char *buf, unsigned len)
{
	if (id == GRT_UVM_PROC_NONE)
		return "-";
	if (id == GRT_UVM_PROC_CPU)
		return "cpu";
	snprintf(buf, len, "gpu%u", id);
	return buf;
}

static void describe_uvm(const struct grt_record *rec, const struct grt_strings *strings,
			 struct grt_fields *out)
{
	const struct grt_uvm_event_rec *e = rec->payload;
	char src[16], dst[16];

	grt_field_str(out, "event", grt_uvm_kind_name(e->kind));
	grt_field_u64(out, "owner_pid", e->owner_pid);
	grt_field_hex(out, "addr", e->address);
	grt_field_u64(out, "bytes", e->bytes);
	grt_field_str(out, "src", grt_uvm_processor_name(e->src_processor, src, sizeof(src)));
	grt_field_str(out, "dst", grt_uvm_processor_name(e->dst_processor, dst, sizeof(dst)));
	grt_field_str(out, "cause", grt_uvm_cause_name(e->kind, e->cause));
	if (e->flags & GRT_UVM_F_HAS_END)
		grt_field_u64(out, "dur_ns",
			      e->end_ns >= rec->hdr.ts_ns ? e->end_ns - rec->hdr.ts_ns : 0);
	if (rec->hdr.payload_len >= sizeof(struct grt_uvm_event_full)) {
		const struct grt_uvm_event_ext *x = &((const struct grt_uvm_event_full *)e)->ext;

		grt_field_hex(out, "aux", x->aux);
		grt_field_u64(out, "aux32", x->aux32);
		grt_field_u64(out, "gpu_ts", x->gpu_ts_ns);
		grt_field_u64(out, "fault_type", x->fault_type);
		if (e->kind == GRT_UVM_CPU_FAULT)
			grt_field_u64(out, "fault_pid", x->fault_pid);
	}
}

GRT_RECORD_DESC(uvm_event_desc) = {
    .type = GRT_REC_UVM_EVENT,
    .name = "uvm",
    .min_len = sizeof(struct grt_uvm_event_rec),
    .describe = describe_uvm,
};
