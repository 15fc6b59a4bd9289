/* Descriptions of the core record types (strings, drops, trailer, processes, stacks, clocks). */
#include <stddef.h>
#include "trace/grt_format.h"
#include "trace/record_desc.h"
#include "trace/records_core.h"
#include "trace/trace_names.h"

static int validate_string(const void *payload, uint32_t len)
{
	const struct grt_string_rec *s = payload;

	return s->len == 0 || s->len != len - sizeof(*s) || s->text[s->len - 1] != 0;
}

static void describe_string(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_string_rec *s = rec->payload;

	grt_field_u64(out, "id", s->id);
	grt_field_str(out, "text", s->text);
}

GRT_RECORD_DESC(string_desc) = {
	.type = GRT_REC_STRING,
	.name = "string",
	.min_len = sizeof(struct grt_string_rec) + 1,
	.validate = validate_string,
	.describe = describe_string,
};

static void describe_drop(const struct grt_record *rec, const struct grt_strings *strings,
			  struct grt_fields *out)
{
	const struct grt_drop_rec *d = rec->payload;

	grt_field_str(out, "source", grt_source_name(d->source));
	grt_field_u64(out, "count", d->count);
}

GRT_RECORD_DESC(drop_desc) = {
	.type = GRT_REC_DROP,
	.name = "drop",
	.min_len = sizeof(struct grt_drop_rec),
	.describe = describe_drop,
};

static void describe_trailer(const struct grt_record *rec, const struct grt_strings *strings,
			     struct grt_fields *out)
{
	const struct grt_trailer_rec *t = rec->payload;

	grt_field_str(out, "reason", grt_end_reason_name(t->reason));
	grt_field_u64(out, "records", t->records);
	grt_field_u64(out, "drops", t->drops);
}

GRT_RECORD_DESC(trailer_desc) = {
	.type = GRT_REC_TRAILER,
	.name = "trailer",
	.min_len = offsetof(struct grt_trailer_rec, crc), /* format 1.1 and older */
	.full_len = sizeof(struct grt_trailer_rec),
	.describe = describe_trailer,
};

static void describe_checksum(const struct grt_record *rec, const struct grt_strings *strings,
			      struct grt_fields *out)
{
	const struct grt_checksum_rec *c = rec->payload;

	grt_field_str(out, "algo", c->algo == GRT_CHECKSUM_CRC32C ? "crc32c" : "unknown");
	grt_field_u64(out, "records", c->records);
	grt_field_u64(out, "start", c->start);
	grt_field_u64(out, "length", c->length);
	grt_field_hex(out, "crc", c->crc);
}

GRT_RECORD_DESC(checksum_desc) = {
	.type = GRT_REC_CHECKSUM,
	.name = "checksum",
	.min_len = sizeof(struct grt_checksum_rec),
	.describe = describe_checksum,
};

static const char *const process_events[] = {
	[GRT_PROC_SEEN] = "seen", [GRT_PROC_START] = "start", [GRT_PROC_EXIT] = "exit",
};

static void describe_process(const struct grt_record *rec, const struct grt_strings *strings,
			     struct grt_fields *out)
{
	const struct grt_process_rec *p = rec->payload;

	grt_field_str(out, "event", GRT_NAME_OF(process_events, p->event));
	grt_field_u64(out, "ppid", p->ppid);
	grt_field_str(out, "comm", grt_strings_get(strings, p->comm_str));
	grt_field_str(out, "exe", grt_strings_get(strings, p->exe_str));
	if (p->event == GRT_PROC_EXIT) {
		grt_field_i64(out, "exit_code", p->exit_code);
		grt_field_u64(out, "signal", p->exit_signal);
		grt_field_u64(out, "core_dumped", p->exit_flags & GRT_PROC_CORE_DUMPED ? 1 : 0);
	}
}

GRT_RECORD_DESC(process_desc) = {
	.type = GRT_REC_PROCESS,
	.name = "process",
	.min_len = sizeof(struct grt_process_rec),
	.describe = describe_process,
};

static void describe_mapping(const struct grt_record *rec, const struct grt_strings *strings,
			     struct grt_fields *out)
{
	const struct grt_mapping_rec *m = rec->payload;

	grt_field_hex(out, "start", m->start);
	grt_field_hex(out, "end", m->end);
	grt_field_hex(out, "offset", m->file_offset);
	grt_field_str(out, "path", grt_strings_get(strings, m->path_str));
}

GRT_RECORD_DESC(mapping_desc) = {
	.type = GRT_REC_MAPPING,
	.name = "mapping",
	.min_len = sizeof(struct grt_mapping_rec),
	.describe = describe_mapping,
};

static int validate_stack(const void *payload, uint32_t len)
{
	const struct grt_stack_rec *s = payload;

	return s->depth > GRT_MAX_STACK_DEPTH || len < sizeof(*s) + s->depth * sizeof(s->ips[0]);
}

static void describe_stack(const struct grt_record *rec, const struct grt_strings *strings,
			   struct grt_fields *out)
{
	const struct grt_stack_rec *s = rec->payload;

	grt_field_u64(out, "stack_id", s->stack_id);
	grt_field_u64(out, "depth", s->depth);
	grt_field_hex_list(out, "ips", s->ips, s->depth);
}

GRT_RECORD_DESC(stack_desc) = {
	.type = GRT_REC_STACK,
	.name = "stack",
	.min_len = sizeof(struct grt_stack_rec),
	.validate = validate_stack,
	.describe = describe_stack,
};

static void describe_clock(const struct grt_record *rec, const struct grt_strings *strings,
			   struct grt_fields *out)
{
	const struct grt_clock_calib_rec *c = rec->payload;

	grt_field_u64(out, "device", c->device);
	grt_field_u64(out, "gpu_ns", c->gpu_ns);
	grt_field_u64(out, "host_ns", c->host_ns);
	grt_field_i64(out, "offset_ns", (int64_t)(c->gpu_ns - c->host_ns));
	grt_field_u64(out, "error_ns", c->error_ns);
	grt_field_str(out, "clock", c->clock_id == GRT_CLOCK_GPU_GLOBALTIMER ? "globaltimer"
				    : c->clock_id == GRT_CLOCK_CUPTI	     ? "cupti"
									     : "unknown");
}

GRT_RECORD_DESC(clock_desc) = {
	.type = GRT_REC_CLOCK_CALIB,
	.name = "clock_calib",
	.min_len = sizeof(struct grt_clock_calib_rec),
	.describe = describe_clock,
};

static void describe_source_status(const struct grt_record *rec, const struct grt_strings *strings,
				   struct grt_fields *out)
{
	const struct grt_source_status_rec *s = rec->payload;

	grt_field_str(out, "source", grt_source_name(s->source));
	grt_field_i64(out, "status", s->status);
	grt_field_str(out, "message", grt_strings_get(strings, s->message_str));
}

GRT_RECORD_DESC(source_status_desc) = {
	.type = GRT_REC_SOURCE_STATUS,
	.name = "source_status",
	.min_len = sizeof(struct grt_source_status_rec),
	.describe = describe_source_status,
};
