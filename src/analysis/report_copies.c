/* Report section `copies`: memcpy traffic per direction with synchronous bandwidth, and memsets. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/peer_copies.h"
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "analysis/stats.h"
#include "trace/records_cuda.h"
#include "trace/trace_names.h"

#define COPIES_INCOMPLETE "out of memory while counting; some call times are missing"

/* enum grt_copy_kind values; anything beyond is counted as GRT_COPY_UNKNOWN */
#define COPY_KINDS (GRT_COPY_DEFAULT + 1)

/*
 * One kind of transfer. calls counts every call, failed ones included; bytes
 * and the sync/async split count the calls that did not fail. Bandwidth uses
 * only synchronous calls that returned: bytes / time in the call.
 */
struct transfer_totals {
	uint64_t calls;
	uint64_t errors;
	uint64_t bytes;
	uint64_t sync_calls, sync_bytes;
	uint64_t async_calls, async_bytes;
	uint64_t timed_bytes;	/* synchronous calls that returned */
	struct grt_stats sync_ns;	/* their API times */
};

struct copies_report {
	struct transfer_totals copies[COPY_KINDS];
	struct transfer_totals memsets;
	struct peer_copies *peers;	/* by device pair; NULL when memory ran out */
	bool out_of_memory;
};

static void *copies_create(const struct report_input *in)
{
	struct copies_report *c = calloc(1, sizeof(struct copies_report));

	if (c && !(c->peers = peer_copies_new()))
		c->out_of_memory = true;
	return c;
}

static void copies_destroy(void *state)
{
	struct copies_report *c = state;

	for (int i = 0; i < COPY_KINDS; i++)
		grt_stats_destroy(&c->copies[i].sync_ns);
	grt_stats_destroy(&c->memsets.sync_ns);
	peer_copies_free(c->peers);
	free(c);
}

static void count_transfer(struct copies_report *c, struct transfer_totals *t,
			   const struct grt_record *rec, const struct grt_cuda_call *call,
			   uint64_t bytes, bool is_async)
{
	uint64_t ns;

	t->calls++;
	if (report_call_failed(call)) {
		t->errors++;
		return;
	}
	t->bytes += bytes;
	if (is_async) {
		t->async_calls++;
		t->async_bytes += bytes;
		return;
	}
	t->sync_calls++;
	t->sync_bytes += bytes;
	if (!report_call_ns(rec, call, &ns))
		return;
	t->timed_bytes += bytes;
	if (grt_stats_add(&t->sync_ns, ns))
		c->out_of_memory = true;
}

static void copies_on_record(void *state, const struct grt_record *rec,
			     const struct grt_strings *strings)
{
	struct copies_report *c = state;

	if (c->peers)
		peer_copies_record(c->peers, rec, strings);
	if (rec->hdr.type == GRT_REC_CUDA_MEMCPY) {
		const struct grt_cuda_memcpy_rec *m = rec->payload;
		uint32_t kind = m->kind < COPY_KINDS ? m->kind : GRT_COPY_UNKNOWN;

		count_transfer(c, &c->copies[kind], rec, &m->call, m->bytes, m->is_async);
	} else if (rec->hdr.type == GRT_REC_CUDA_MEMSET) {
		const struct grt_cuda_memset_rec *m = rec->payload;

		count_transfer(c, &c->memsets, rec, &m->call, m->bytes, m->is_async);
	}
}

/* bytes per nanosecond is GB/s (10^9 bytes per second); -1 when nothing was timed */
static double sync_gbps(const struct transfer_totals *t)
{
	return t->sync_ns.total ? (double)t->timed_bytes / (double)t->sync_ns.total : -1.0;
}

static void print_row(FILE *out, const char *name, struct transfer_totals *t)
{
	char gbps[16] = "-", p50[16] = "-";

	if (t->sync_ns.count) {
		snprintf(gbps, sizeof(gbps), "%.3f", sync_gbps(t));
		snprintf(p50, sizeof(p50), "%.3f",
			 report_ns_to_us(grt_stats_percentile(&t->sync_ns, 50)));
	}
	/* bytes as a number, like every cell of a text table: the title names the unit */
	fprintf(out, "  %-8s %8" PRIu64 " %12" PRIu64 " %8" PRIu64 " %9s %11s %8" PRIu64 " %7" PRIu64 "\n",
		name, t->calls, t->bytes, t->sync_calls, gbps, p50, t->async_calls, t->errors);
}

static void copies_print_text(void *state, FILE *out)
{
	struct copies_report *c = state;
	bool any = c->memsets.calls > 0;

	for (int i = 0; i < COPY_KINDS; i++)
		any |= c->copies[i].calls > 0;
	if (!any) {
		fprintf(out, "no memcpy or memset calls in this trace\n");
		return;
	}
	fprintf(out, "  %-8s %8s %12s %8s %9s %11s %8s %7s\n", "kind", "calls", "bytes", "sync",
		"sync_GB/s", "sync_p50_us", "async", "errors");
	for (int i = 0; i < COPY_KINDS; i++)
		if (c->copies[i].calls)
			print_row(out, grt_copy_kind_name((uint32_t)i), &c->copies[i]);
	if (c->memsets.calls)
		print_row(out, "memset", &c->memsets);
	fprintf(out, "  (sync_GB/s: bytes / time in the synchronous call, which includes waiting for "
		     "earlier work on the stream: a lower bound of the link's bandwidth)\n");
	if (c->peers)
		peer_copies_print_text(c->peers, out);
	if (c->out_of_memory)
		fprintf(out, "WARNING: %s\n", COPIES_INCOMPLETE);
}

static void json_totals(struct json_writer *w, struct transfer_totals *t)
{
	jw_key(w, "calls");
	jw_u64(w, t->calls);
	jw_key(w, "errors");
	jw_u64(w, t->errors);
	jw_key(w, "bytes");
	jw_u64(w, t->bytes);
	jw_key(w, "sync_calls");
	jw_u64(w, t->sync_calls);
	jw_key(w, "sync_bytes");
	jw_u64(w, t->sync_bytes);
	jw_key(w, "async_calls");
	jw_u64(w, t->async_calls);
	jw_key(w, "async_bytes");
	jw_u64(w, t->async_bytes);
	jw_key(w, "timed_bytes");
	jw_u64(w, t->timed_bytes);
	jw_key(w, "sync_gbytes_per_s");
	if (t->sync_ns.total)
		jw_f64(w, sync_gbps(t));
	else
		jw_null(w);
	jw_key(w, "sync_ns");
	report_json_stats(w, &t->sync_ns);
}

static void copies_print_json(void *state, struct json_writer *w)
{
	struct copies_report *c = state;

	jw_begin_object(w);
	jw_key(w, "directions");
	jw_begin_array(w);
	for (int i = 0; i < COPY_KINDS; i++) {
		if (!c->copies[i].calls)
			continue;
		jw_begin_object(w);
		jw_key(w, "direction");
		jw_string(w, grt_copy_kind_name((uint32_t)i));
		json_totals(w, &c->copies[i]);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "memsets");
	jw_begin_object(w);
	json_totals(w, &c->memsets);
	jw_end_object(w);
	if (c->peers && peer_copies_any(c->peers)) {
		jw_key(w, "peers");
		peer_copies_print_json(c->peers, w);
	}
	jw_end_object(w);
}

static const char *copies_incomplete(void *state)
{
	const struct copies_report *c = state;

	return c->out_of_memory || (c->peers && peer_copies_incomplete(c->peers)) ? COPIES_INCOMPLETE
										 : NULL;
}

GRT_REPORT_SECTION(copies_section) = {
	.name = "copies",
	.summary = "memcpy per direction (calls, bytes, sync bandwidth, async), memsets, peer copies by device pair and link",
	.default_on = true,
	.order = 40,
	.create = copies_create,
	.on_record = copies_on_record,
	.print_text = copies_print_text,
	.print_json = copies_print_json,
	.incomplete = copies_incomplete,
	.destroy = copies_destroy,
};
