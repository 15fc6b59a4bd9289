/* Descriptions of the `nccl` source's record types, and the names of NCCL's enumerations. */
#include "trace/record_desc.h"
#include "trace/records_nccl.h"
#include "trace/trace_names.h"

static const char *const op_names[] = {
	[GRT_NCCL_ALL_REDUCE] = "all-reduce",
	[GRT_NCCL_ALL_GATHER] = "all-gather",
	[GRT_NCCL_REDUCE_SCATTER] = "reduce-scatter",
	[GRT_NCCL_BROADCAST] = "broadcast",
	[GRT_NCCL_REDUCE] = "reduce",
	[GRT_NCCL_SEND] = "send",
	[GRT_NCCL_RECV] = "recv",
};

const char *grt_nccl_op_name(uint32_t op)
{
	return GRT_NAME_OF(op_names, op);
}

/* ncclInt8, Uint8, Int32, Uint32, Int64, Uint64, Float16, Float32, Float64, Bfloat16, Fp8 x2 */
static const uint8_t datatype_sizes[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };

uint32_t grt_nccl_datatype_size(uint32_t datatype)
{
	return datatype < sizeof(datatype_sizes) ? datatype_sizes[datatype] : 0;
}

static void describe_return(const struct grt_record *rec, uint64_t return_ns, int32_t ret,
			    uint32_t flags, struct grt_fields *out)
{
	if (flags & GRT_NCCL_F_NO_RETURN) {
		grt_field_str(out, "ret", NULL);
		grt_field_str(out, "api_ns", NULL);
		return;
	}
	grt_field_i64(out, "ret", ret);
	if (return_ns >= rec->hdr.ts_ns)
		grt_field_u64(out, "api_ns", return_ns - rec->hdr.ts_ns);
	else
		grt_field_str(out, "api_ns", NULL);
}

static void describe_comm(const struct grt_record *rec, const struct grt_strings *strings,
			  struct grt_fields *out)
{
	const struct grt_nccl_comm_rec *c = rec->payload;

	grt_field_hex(out, "comm", c->comm);
	grt_field_hex(out, "comm_id", c->comm_id);
	grt_field_u64(out, "nranks", c->nranks);
	grt_field_u64(out, "rank", c->rank);
	if (rec->hdr.payload_len >= sizeof(*c) && (c->flags & GRT_NCCL_F_SPLIT)) {
		grt_field_hex(out, "parent", c->parent);
		grt_field_i64(out, "color", c->color);
		grt_field_i64(out, "key", c->key);
	}
	describe_return(rec, c->return_ns, c->ret, c->flags, out);
}

GRT_RECORD_DESC(nccl_comm_desc) = {
	.type = GRT_REC_NCCL_COMM,
	.name = "nccl_comm",
	.min_len = GRT_NCCL_COMM_MIN_LEN,
	.describe = describe_comm,
};

static void describe_coll(const struct grt_record *rec, const struct grt_strings *strings,
			  struct grt_fields *out)
{
	const struct grt_nccl_coll_rec *c = rec->payload;

	grt_field_str(out, "op", grt_nccl_op_name(c->op));
	grt_field_hex(out, "comm", c->comm);
	grt_field_hex(out, "stream", c->stream);
	grt_field_u64(out, "count", c->count);
	grt_field_u64(out, "datatype", c->datatype);
	grt_field_u64(out, "bytes", c->bytes);
	grt_field_i64(out, "root", c->root);
	describe_return(rec, c->return_ns, c->ret, c->flags, out);
}

GRT_RECORD_DESC(nccl_coll_desc) = {
	.type = GRT_REC_NCCL_COLL,
	.name = "nccl_coll",
	.min_len = sizeof(struct grt_nccl_coll_rec),
	.describe = describe_coll,
};
