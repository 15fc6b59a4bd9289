/* `grtrace snoop cuda`: one line per CUDA driver call: kernels, memory, copies, syncs, modules. */
#include <inttypes.h>
#include <string.h>
#include "cli/snoop.h"
#include "export/snoop_duration.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/trace_names.h"

/* Where every cuda line ends: how long the call took, and how it went. */
static void print_call_end(FILE *out, const struct grt_record *rec,
			   const struct grt_cuda_call *call)
{
	fprintf(out, "  (%s", grt_cuda_api_name(call->api));
	if (call->flags & GRT_CUDA_F_NO_RETURN)
		fputs(", no return", out);
	else if (call->flags & GRT_CUDA_F_RETURN_UNSAMPLED)
		fputs(", return not sampled", out);
	else
		snoop_print_duration(out, " ", call->return_ns - rec->hdr.ts_ns);
	if (call->ret)
		fprintf(out, ", ERR %d", call->ret);
	fputs(")\n", out);
}

static void print_launch(FILE *out, const struct grt_record *rec, const struct grt_strings *strings)
{
	const struct grt_cuda_launch_rec *l = rec->payload;
	const char *name = grt_strings_get(strings, l->kernel_str);
	char unknown[32];

	fprintf(out, "[GPU] KERNEL %s",
		name ? name : grt_unknown_kernel_name(l->function, unknown, sizeof(unknown)));
	fprintf(out, " GRID (%u,%u,%u) BLOCK (%u,%u,%u) SHMEM %u STREAM 0x%" PRIx64, l->grid[0],
		l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->shared_mem,
		l->stream);
	print_call_end(out, rec, &l->call);
}

static void print_graph_launch(FILE *out, const struct grt_record *rec)
{
	const struct grt_cuda_graph_launch_rec *g = rec->payload;

	fprintf(out, "[GPU] GRAPH 0x%" PRIx64 " STREAM 0x%" PRIx64, g->graph_exec, g->stream);
	print_call_end(out, rec, &g->call);
}

static void print_alloc(FILE *out, const struct grt_record *rec)
{
	const struct grt_cuda_alloc_rec *a = rec->payload;

	fprintf(out, "[GPU] ALLOC %s %" PRIu64 " B at 0x%" PRIx64, grt_alloc_kind_name(a->kind),
		a->bytes, a->addr);
	if (a->stream)
		fprintf(out, " STREAM 0x%" PRIx64, a->stream);
	print_call_end(out, rec, &a->call);
}

static void print_free(FILE *out, const struct grt_record *rec)
{
	const struct grt_cuda_free_rec *f = rec->payload;

	fprintf(out, "[GPU] FREE %s 0x%" PRIx64, grt_alloc_kind_name(f->kind), f->addr);
	if (f->stream)
		fprintf(out, " STREAM 0x%" PRIx64, f->stream);
	print_call_end(out, rec, &f->call);
}

static void print_memcpy(FILE *out, const struct grt_record *rec)
{
	const struct grt_cuda_memcpy_rec *m = rec->payload;
	uint64_t ns = m->call.return_ns > rec->hdr.ts_ns ? m->call.return_ns - rec->hdr.ts_ns : 0;

	fprintf(out, "[GPU] COPY %s %" PRIu64 " B 0x%" PRIx64 " -> 0x%" PRIx64,
		grt_copy_kind_name(m->kind), m->bytes, m->src, m->dst);
	if (m->dims > 1)
		fprintf(out, " %uD", m->dims);
	if (m->is_async)
		fprintf(out, " async STREAM 0x%" PRIx64, m->stream);
	else if (ns && grt_cuda_call_returned(&m->call))
		/* a synchronous copy's call time bounds the transfer: bytes per ns is GB/s */
		fprintf(out, " sync %.2f GB/s", (double)m->bytes / (double)ns);
	print_call_end(out, rec, &m->call);
}

static void print_memset(FILE *out, const struct grt_record *rec)
{
	const struct grt_cuda_memset_rec *m = rec->payload;

	fprintf(out, "[GPU] MEMSET %" PRIu64 " B at 0x%" PRIx64 " value 0x%x", m->bytes, m->dst,
		m->value);
	if (m->is_async)
		fprintf(out, " async STREAM 0x%" PRIx64, m->stream);
	print_call_end(out, rec, &m->call);
}

static void print_sync(FILE *out, const struct grt_record *rec)
{
	const struct grt_cuda_sync_rec *s = rec->payload;

	fprintf(out, "[GPU] SYNC %s", grt_sync_kind_name(s->kind));
	if (s->kind != GRT_SYNC_CTX && s->kind != GRT_SYNC_EVENT && s->kind != GRT_SYNC_EVENT_QUERY)
		fprintf(out, " STREAM 0x%" PRIx64, s->stream);
	if (s->event)
		fprintf(out, " EVENT 0x%" PRIx64, s->event);
	print_call_end(out, rec, &s->call);
}

static void print_module(FILE *out, const struct grt_record *rec, const struct grt_strings *strings)
{
	const struct grt_cuda_module_rec *m = rec->payload;
	const char *path = grt_strings_get(strings, m->path_str);

	fprintf(out, "[GPU] MODULE %s 0x%" PRIx64, grt_module_kind_name(m->kind), m->module);
	if (path)
		fprintf(out, " %s", path);
	print_call_end(out, rec, &m->call);
}

static void print_func_name(FILE *out, const struct grt_record *rec,
			    const struct grt_strings *strings)
{
	const struct grt_cuda_func_name_rec *f = rec->payload;
	const char *name = grt_strings_get(strings, f->name_str);

	fprintf(out, "[GPU] NAME 0x%" PRIx64 " = %s", f->handle, name ? name : "?");
	print_call_end(out, rec, &f->call);
}

/*
 * The cuda source's status records: one per probed libcuda copy (what was
 * probed), or why the source could not run. The session's generic
 * "attached" adds nothing to those.
 */
static void print_status(FILE *out, const struct grt_record *rec, const struct grt_strings *strings)
{
	const struct grt_source_status_rec *st = rec->payload;
	const char *message = grt_strings_get(strings, st->message_str);

	if (st->source != GRT_SRC_CUDA || !message || (!st->status && !strcmp(message, "attached")))
		return;
	fprintf(out, "[GPU] %s %s\n", st->status ? "UNAVAILABLE" : "PROBED", message);
}

/* The common line start, then the command's own comm column. */
static void start_line(FILE *out, const struct grt_record *rec, const struct grt_strings *strings,
		       uint64_t t0_ns)
{
	const struct grt_cuda_call *call = rec->payload;
	const char *comm = grt_strings_get(strings, call->comm_str);

	snoop_line_start(out, rec, t0_ns);
	fprintf(out, "%-16s ", comm ? comm : "?");
}

static void print_cuda(FILE *out, const struct grt_record *rec, const struct grt_strings *strings,
		       uint64_t t0_ns)
{
	uint16_t type = rec->hdr.type;

	if (type == GRT_REC_DROP) {
		const struct grt_drop_rec *d = rec->payload;

		if (d->source == GRT_SRC_CUDA)
			fprintf(out, "[GPU] LOST %" PRIu64 " events (ring buffer full)\n",
				d->count);
		return;
	}
	if (type == GRT_REC_SOURCE_STATUS) {
		print_status(out, rec, strings);
		return;
	}
	if (type < GRT_REC_CUDA_LAUNCH || type > GRT_REC_CUDA_GRAPH_LAUNCH)
		return;
	start_line(out, rec, strings, t0_ns);
	switch (type) {
	case GRT_REC_CUDA_LAUNCH:
		print_launch(out, rec, strings);
		break;
	case GRT_REC_CUDA_GRAPH_LAUNCH:
		print_graph_launch(out, rec);
		break;
	case GRT_REC_CUDA_ALLOC:
		print_alloc(out, rec);
		break;
	case GRT_REC_CUDA_FREE:
		print_free(out, rec);
		break;
	case GRT_REC_CUDA_MEMCPY:
		print_memcpy(out, rec);
		break;
	case GRT_REC_CUDA_MEMSET:
		print_memset(out, rec);
		break;
	case GRT_REC_CUDA_SYNC:
		print_sync(out, rec);
		break;
	case GRT_REC_CUDA_MODULE_LOAD:
		print_module(out, rec, strings);
		break;
	case GRT_REC_CUDA_FUNC_NAME:
		print_func_name(out, rec, strings);
		break;
	}
}

static const struct snoop_view cuda_view = {
    .name = "cuda",
    .sources = "cuda",
    .summary = "CUDA driver calls: kernels, allocations, copies, syncs (uprobes on libcuda)",
    .header = "comm             event",
    .print = print_cuda,
};

GRT_SNOOP_VIEW(cuda_view);
