/* Descriptions of the `gpu` source's record types (CUPTI activity, block probes). */
#include "trace/grt_format.h"
#include "trace/record_desc.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"
#include "trace/trace_names.h"

static uint64_t span(uint64_t start, uint64_t end)
{
	return end >= start && start ? end - start : 0;
}

/* The host call a device record names (trace format 1.1); nothing for older records. */
static void describe_call_bracket(uint64_t api_return_ns, uint32_t host_tid,
				  struct grt_fields *out)
{
	if (api_return_ns)
		grt_field_u64(out, "api_return_ns", api_return_ns);
	if (host_tid)
		grt_field_u64(out, "host_tid", host_tid);
}

static void describe_gpu_kernel(const struct grt_record *rec, const struct grt_strings *strings,
				struct grt_fields *out)
{
	const struct grt_gpu_kernel_rec *k = rec->payload;

	grt_field_str(out, "kernel", grt_strings_get(strings, k->kernel_str));
	grt_field_u64(out, "start_ns", k->start_ns);
	grt_field_u64(out, "end_ns", k->end_ns);
	grt_field_u64(out, "duration_ns", span(k->start_ns, k->end_ns));
	grt_field_u64(out, "api_enter_ns", k->api_enter_ns);
	describe_call_bracket(k->api_return_ns, k->host_tid, out);
	grt_field_u64(out, "correlation_id", k->correlation_id);
	grt_field_u64(out, "device", k->device);
	grt_field_hex(out, "stream", k->stream);
	grt_field_u64(out, "stream_id", k->stream_id);
	grt_field_dim3(out, "grid", k->grid);
	grt_field_dim3(out, "block", k->block);
	grt_field_u64(out, "graph_id", k->graph_id);
	if (k->flags & GRT_GPU_F_OWN)
		grt_field_u64(out, "own", 1);
}

GRT_RECORD_DESC(gpu_kernel_desc) = {
    .type = GRT_REC_GPU_KERNEL,
    .name = "gpu_kernel",
    .min_len = GRT_GPU_KERNEL_REC_V1_0_LEN,
    .full_len = sizeof(struct grt_gpu_kernel_rec),
    .describe = describe_gpu_kernel,
};

static void describe_gpu_copy(const struct grt_record *rec, const struct grt_strings *strings,
			      struct grt_fields *out)
{
	const struct grt_gpu_copy_rec *c = rec->payload;

	grt_field_str(out, "kind",
		      c->kind == GRT_GPU_COPY_MEMSET ? "memset" : grt_copy_kind_name(c->kind));
	grt_field_u64(out, "bytes", c->bytes);
	grt_field_u64(out, "start_ns", c->start_ns);
	grt_field_u64(out, "end_ns", c->end_ns);
	grt_field_u64(out, "duration_ns", span(c->start_ns, c->end_ns));
	grt_field_u64(out, "api_enter_ns", c->api_enter_ns);
	describe_call_bracket(c->api_return_ns, c->host_tid, out);
	grt_field_u64(out, "correlation_id", c->correlation_id);
	grt_field_u64(out, "device", c->device);
	grt_field_hex(out, "stream", c->stream);
	grt_field_u64(out, "stream_id", c->stream_id);
	if (c->flags & GRT_GPU_F_EVENT_TIMED)
		grt_field_str(out, "timed_by", "events");
	if (c->flags & GRT_GPU_F_OWN)
		grt_field_u64(out, "own", 1);
}

GRT_RECORD_DESC(gpu_copy_desc) = {
    .type = GRT_REC_GPU_COPY,
    .name = "gpu_copy",
    .min_len = GRT_GPU_COPY_REC_V1_0_LEN,
    .full_len = sizeof(struct grt_gpu_copy_rec),
    .describe = describe_gpu_copy,
};

static void describe_gpu_block(const struct grt_record *rec, const struct grt_strings *strings,
			       struct grt_fields *out)
{
	const struct grt_gpu_block_rec *b = rec->payload;

	grt_field_hex(out, "launch_id", b->launch_id);
	grt_field_dim3(out, "block", b->block);
	if (b->smid == UINT32_MAX)
		grt_field_str(out, "smid", NULL);
	else
		grt_field_u64(out, "smid", b->smid);
	grt_field_u64(out, "start_ns", b->start_ns);
	grt_field_u64(out, "end_ns", b->end_ns);
	grt_field_u64(out, "duration_ns", span(b->start_ns, b->end_ns));
}

GRT_RECORD_DESC(gpu_block_desc) = {
    .type = GRT_REC_GPU_BLOCK,
    .name = "gpu_block",
    .min_len = sizeof(struct grt_gpu_block_rec),
    .describe = describe_gpu_block,
};

static void describe_gpu_launch(const struct grt_record *rec, const struct grt_strings *strings,
				struct grt_fields *out)
{
	const struct grt_gpu_launch_rec *l = rec->payload;

	grt_field_str(out, "kernel", grt_strings_get(strings, l->kernel_str));
	grt_field_hex(out, "launch_id", l->launch_id);
	grt_field_u64(out, "start_ns", l->start_ns);
	grt_field_u64(out, "end_ns", l->end_ns);
	grt_field_u64(out, "exec_ns", span(l->start_ns, l->end_ns));
	grt_field_u64(out, "api_enter_ns", l->api_enter_ns);
	describe_call_bracket(l->api_return_ns, l->host_tid, out);
	grt_field_hex(out, "stream", l->stream);
	grt_field_u64(out, "blocks", l->blocks);
	grt_field_u64(out, "sms_used", l->sms_used);
	grt_field_u64(out, "block_ns_p50", l->block_ns_p50);
	grt_field_u64(out, "block_ns_max", l->block_ns_max);
	grt_field_f64(out, "imbalance",
		      l->block_ns_p50 ? (double)l->block_ns_max / (double)l->block_ns_p50 : 0.0);
	grt_field_u64(out, "busiest_sm_ns", l->busiest_sm_ns);
	grt_field_u64(out, "lost_blocks", l->lost_blocks);
	if (l->flags & GRT_GPU_F_OWN)
		grt_field_u64(out, "own", 1);
}

GRT_RECORD_DESC(gpu_launch_desc) = {
    .type = GRT_REC_GPU_LAUNCH,
    .name = "gpu_launch",
    .min_len = GRT_GPU_LAUNCH_REC_V1_0_LEN,
    .full_len = sizeof(struct grt_gpu_launch_rec),
    .describe = describe_gpu_launch,
};

static void describe_gpu_instrument(const struct grt_record *rec, const struct grt_strings *strings,
				    struct grt_fields *out)
{
	const struct grt_gpu_instrument_rec *i = rec->payload;

	grt_field_str(out, "kernel", grt_strings_get(strings, i->kernel_str));
	grt_field_str(out, "instrumented", i->status ? "no" : "yes");
	grt_field_i64(out, "status", i->status);
	grt_field_str(out, "reason", grt_strings_get(strings, i->reason_str));
}

GRT_RECORD_DESC(gpu_instrument_desc) = {
    .type = GRT_REC_GPU_INSTRUMENT,
    .name = "gpu_instrument",
    .min_len = sizeof(struct grt_gpu_instrument_rec),
    .describe = describe_gpu_instrument,
};
