/* Descriptions of the `cuda` source's record types. */
#include "trace/grt_format.h"
#include "trace/record_desc.h"
#include "trace/records_cuda.h"
#include "trace/trace_names.h"

/* Fields every cuda record shares: the API, its return code and duration. */
static void describe_call(const struct grt_record *rec, const struct grt_cuda_call *call,
			  const struct grt_strings *strings, struct grt_fields *out)
{
	grt_field_str(out, "api", grt_cuda_api_name(call->api));
	grt_field_u64(out, "ppid", call->ppid);
	grt_field_str(out, "comm", grt_strings_get(strings, call->comm_str));
	/* a return not sampled is unknown, not a success */
	if (call->flags & GRT_CUDA_F_RETURN_UNSAMPLED)
		grt_field_str(out, "ret", NULL);
	else
		grt_field_i64(out, "ret", call->ret);
	/* no return seen, or a return before the entry (clock trouble): no duration, not 2^64 */
	if (!grt_cuda_call_returned(call) || call->return_ns < rec->hdr.ts_ns)
		grt_field_str(out, "api_ns", NULL);
	else
		grt_field_u64(out, "api_ns", call->return_ns - rec->hdr.ts_ns);
	if (call->flags & GRT_CUDA_F_RETURN_UNSAMPLED)
		grt_field_str(out, "return", "not-sampled");
	/* parse shows everything; grtrace's own calls say so */
	if (call->flags & GRT_CUDA_F_OWN)
		grt_field_u64(out, "own", 1);
}

static void describe_launch(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_cuda_launch_rec *l = rec->payload;
	uint32_t words = l->arg_words < GRT_LAUNCH_ARG_WORDS ? l->arg_words : GRT_LAUNCH_ARG_WORDS;
	const char *kernel = grt_strings_get(strings, l->kernel_str);
	char unknown[32];

	/* the name every command gives a kernel without one: func@0x<handle> */
	grt_field_str(out, "kernel",
		      kernel ? kernel : grt_unknown_kernel_name(l->function, unknown, sizeof(unknown)));
	grt_field_hex(out, "function", l->function);
	grt_field_dim3(out, "grid", l->grid);
	grt_field_dim3(out, "block", l->block);
	grt_field_u64(out, "shared_mem", l->shared_mem);
	grt_field_hex(out, "stream", l->stream);
	grt_field_hex_list(out, "args", l->args, words);
	grt_field_i64(out, "stack_id", l->user_stack_id);
	describe_call(rec, &l->call, strings, out);
}

GRT_RECORD_DESC(launch_desc) = {
	.type = GRT_REC_CUDA_LAUNCH,
	.name = "launch",
	.min_len = sizeof(struct grt_cuda_launch_rec),
	.describe = describe_launch,
};

static void describe_graph_launch(const struct grt_record *rec, const struct grt_strings *strings,
				  struct grt_fields *out)
{
	const struct grt_cuda_graph_launch_rec *g = rec->payload;

	grt_field_hex(out, "graph_exec", g->graph_exec);
	grt_field_hex(out, "stream", g->stream);
	grt_field_i64(out, "stack_id", g->user_stack_id);
	describe_call(rec, &g->call, strings, out);
}

GRT_RECORD_DESC(graph_launch_desc) = {
	.type = GRT_REC_CUDA_GRAPH_LAUNCH,
	.name = "graph_launch",
	.min_len = sizeof(struct grt_cuda_graph_launch_rec),
	.describe = describe_graph_launch,
};

static void describe_alloc(const struct grt_record *rec, const struct grt_strings *strings,
			   struct grt_fields *out)
{
	const struct grt_cuda_alloc_rec *a = rec->payload;

	grt_field_hex(out, "addr", a->addr);
	grt_field_u64(out, "bytes", a->bytes);
	grt_field_str(out, "kind", grt_alloc_kind_name(a->kind));
	grt_field_hex(out, "stream", a->stream);
	grt_field_i64(out, "stack_id", a->user_stack_id);
	describe_call(rec, &a->call, strings, out);
}

GRT_RECORD_DESC(alloc_desc) = {
	.type = GRT_REC_CUDA_ALLOC,
	.name = "alloc",
	.min_len = sizeof(struct grt_cuda_alloc_rec),
	.describe = describe_alloc,
};

static void describe_free(const struct grt_record *rec, const struct grt_strings *strings,
			  struct grt_fields *out)
{
	const struct grt_cuda_free_rec *f = rec->payload;

	grt_field_hex(out, "addr", f->addr);
	grt_field_str(out, "kind", grt_alloc_kind_name(f->kind));
	grt_field_hex(out, "stream", f->stream);
	describe_call(rec, &f->call, strings, out);
}

GRT_RECORD_DESC(free_desc) = {
	.type = GRT_REC_CUDA_FREE,
	.name = "free",
	.min_len = sizeof(struct grt_cuda_free_rec),
	.describe = describe_free,
};

static void describe_memcpy(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_cuda_memcpy_rec *m = rec->payload;
	uint64_t api_ns = m->call.return_ns > rec->hdr.ts_ns ? m->call.return_ns - rec->hdr.ts_ns : 0;

	grt_field_hex(out, "dst", m->dst);
	grt_field_hex(out, "src", m->src);
	grt_field_u64(out, "bytes", m->bytes);
	grt_field_str(out, "kind", grt_copy_kind_name(m->kind));
	grt_field_u64(out, "async", m->is_async);
	grt_field_u64(out, "dims", m->dims);
	grt_field_hex(out, "stream", m->stream);
	/* bandwidth means something only when the call waited for the copy */
	if (!m->is_async && api_ns && grt_cuda_call_returned(&m->call))
		grt_field_f64(out, "gbytes_per_s", (double)m->bytes / (double)api_ns);
	if (m->kind == GRT_COPY_PEER) {
		grt_field_hex(out, "dst_ctx", m->dst_ctx);
		grt_field_hex(out, "src_ctx", m->src_ctx);
	}
	describe_call(rec, &m->call, strings, out);
}

GRT_RECORD_DESC(memcpy_desc) = {
	.type = GRT_REC_CUDA_MEMCPY,
	.name = "memcpy",
	.min_len = GRT_CUDA_MEMCPY_REC_V1_2_LEN,
	.full_len = sizeof(struct grt_cuda_memcpy_rec),
	.describe = describe_memcpy,
};

static void describe_context(const struct grt_record *rec, const struct grt_strings *strings,
			     struct grt_fields *out)
{
	const struct grt_cuda_context_rec *c = rec->payload;

	grt_field_str(out, "op", grt_ctx_op_name(c->op));
	grt_field_hex(out, "ctx", c->ctx);
	grt_field_i64(out, "device", c->device);
	describe_call(rec, &c->call, strings, out);
}

GRT_RECORD_DESC(context_desc) = {
	.type = GRT_REC_CUDA_CONTEXT,
	.name = "context",
	.min_len = sizeof(struct grt_cuda_context_rec),
	.describe = describe_context,
};

static void describe_device(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_cuda_device_rec *d = rec->payload;
	char uuid[48];

	grt_field_i64(out, "device", d->device);
	grt_field_str(out, "pci_bus_id", grt_strings_get(strings, d->pci_bus_id_str));
	grt_field_str(out, "uuid", d->has_uuid ? grt_uuid_text(d->uuid, uuid, sizeof(uuid)) : NULL);
	describe_call(rec, &d->call, strings, out);
}

GRT_RECORD_DESC(device_desc) = {
	.type = GRT_REC_CUDA_DEVICE,
	.name = "device",
	.min_len = sizeof(struct grt_cuda_device_rec),
	.describe = describe_device,
};

static void describe_memset(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_cuda_memset_rec *m = rec->payload;

	grt_field_hex(out, "dst", m->dst);
	grt_field_u64(out, "bytes", m->bytes);
	grt_field_u64(out, "elem_size", m->elem_size);
	grt_field_hex(out, "value", m->value);
	grt_field_u64(out, "async", m->is_async);
	grt_field_hex(out, "stream", m->stream);
	describe_call(rec, &m->call, strings, out);
}

GRT_RECORD_DESC(memset_desc) = {
	.type = GRT_REC_CUDA_MEMSET,
	.name = "memset",
	.min_len = sizeof(struct grt_cuda_memset_rec),
	.describe = describe_memset,
};

static void describe_sync(const struct grt_record *rec, const struct grt_strings *strings,
			  struct grt_fields *out)
{
	const struct grt_cuda_sync_rec *s = rec->payload;

	grt_field_str(out, "kind", grt_sync_kind_name(s->kind));
	grt_field_hex(out, "stream", s->stream);
	grt_field_hex(out, "event", s->event);
	describe_call(rec, &s->call, strings, out);
}

GRT_RECORD_DESC(sync_desc) = {
	.type = GRT_REC_CUDA_SYNC,
	.name = "sync",
	.min_len = sizeof(struct grt_cuda_sync_rec),
	.describe = describe_sync,
};

static void describe_module(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_cuda_module_rec *m = rec->payload;

	grt_field_str(out, "kind", grt_module_kind_name(m->kind));
	grt_field_hex(out, "module", m->module);
	grt_field_hex(out, "image", m->image);
	grt_field_str(out, "path", grt_strings_get(strings, m->path_str));
	describe_call(rec, &m->call, strings, out);
}

GRT_RECORD_DESC(module_desc) = {
	.type = GRT_REC_CUDA_MODULE_LOAD,
	.name = "module_load",
	.min_len = sizeof(struct grt_cuda_module_rec),
	.describe = describe_module,
};

static void describe_func_name(const struct grt_record *rec, const struct grt_strings *strings,
			       struct grt_fields *out)
{
	const struct grt_cuda_func_name_rec *f = rec->payload;

	grt_field_hex(out, "handle", f->handle);
	grt_field_hex(out, "module", f->module);
	grt_field_str(out, "name", grt_strings_get(strings, f->name_str));
	describe_call(rec, &f->call, strings, out);
}

GRT_RECORD_DESC(func_name_desc) = {
	.type = GRT_REC_CUDA_FUNC_NAME,
	.name = "func_name",
	.min_len = sizeof(struct grt_cuda_func_name_rec),
	.describe = describe_func_name,
};

static const char *launch_probes_name(uint32_t probes)
{
	switch (probes) {
	case GRT_CUDA_PROBES_RETPROBE:
		return "uprobe+uretprobe";
	case GRT_CUDA_PROBES_SESSION:
		return "uprobe-session";
	case GRT_CUDA_PROBES_INPROC:
		return "in-process";
	case GRT_CUDA_PROBES_ENTRY:
		return "uprobe";
	}
	return NULL;
}

static void describe_config(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_cuda_config_rec *c = rec->payload;

	grt_field_u64(out, "launch_returns", c->launch_return_every);
	grt_field_str(out, "launch_probes", launch_probes_name(c->launch_probes));
	grt_field_u64(out, "launch_stacks", c->launch_stacks);
}

GRT_RECORD_DESC(config_desc) = {
	.type = GRT_REC_CUDA_CONFIG,
	.name = "cuda_config",
	.min_len = sizeof(struct grt_cuda_config_rec),
	.describe = describe_config,
};

/* Never handed out by the reader (it expands them into launches); described for completeness. */
static void describe_launch_repeat(const struct grt_record *rec, const struct grt_strings *strings,
				   struct grt_fields *out)
{
	const struct grt_cuda_launch_repeat_rec *r = rec->payload;

	(void)strings;
	grt_field_u64(out, "api_ns", r->api_ns);
	grt_field_i64(out, "ret", r->ret);
	grt_field_u64(out, "flags", r->flags);
	grt_field_u64(out, "arg_words", r->arg_words);
}

GRT_RECORD_DESC(launch_repeat_desc) = {
	.type = GRT_REC_CUDA_LAUNCH_REPEAT,
	.name = "launch_repeat",
	.min_len = sizeof(struct grt_cuda_launch_repeat_rec),
	.describe = describe_launch_repeat,
};
