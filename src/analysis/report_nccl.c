/* Report section `nccl`: collectives per rank, their kernels, and which rank waited for which. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/summary.h"
#include "analysis/nccl_calls.h"
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "common/top_list.h"
#include "trace/records_nccl.h"

#define NCCL_INCOMPLETE "out of memory while matching collectives; some waits are missing"

/* The matching lives in nccl_calls.c, shared with the jobs report: this prints it. */
struct nccl_report {
	struct nccl_calls *calls;
	const struct nccl_call **top;	/* the longest waits, longest first */
	uint32_t n_top;
	uint32_t top_n;
	bool finished;
};

static void *nccl_create(const struct report_input *in)
{
	struct nccl_report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->top_n = in->top_n ? in->top_n : REPORT_DEFAULT_TOP;
	r->top = calloc(r->top_n, sizeof(*r->top));
	r->calls = nccl_calls_new(in->header);
	if (!r->top || !r->calls) {
		free(r->top);
		nccl_calls_free(r->calls);
		free(r);
		return NULL;
	}
	return r;
}

static void nccl_destroy(void *state)
{
	struct nccl_report *r = state;

	nccl_calls_free(r->calls);
	free(r->top);
	free(r);
}

static uint64_t wait_of(const void *row)
{
	return (*(const struct nccl_call *const *)row)->wait_ns;
}

static void keep_wait(struct nccl_report *r, const struct nccl_call *w)
{
	long at = top_list_slot(r->top, sizeof(*r->top), &r->n_top, r->top_n, w->wait_ns, wait_of);

	if (at >= 0)
		r->top[at] = w;
}

static void nccl_on_record(void *state, const struct grt_record *rec,
			   const struct grt_strings *strings)
{
	struct nccl_report *r = state;

	nccl_calls_record(r->calls, rec, strings);
}

static void finish(struct nccl_report *r)
{
	if (r->finished)
		return;
	r->finished = true;
	nccl_calls_finish(r->calls);
	for (uint32_t i = 0; i < nccl_calls_count(r->calls); i++) {
		const struct nccl_call *call = nccl_calls_at(r->calls, i);

		if (call->waited_for != NCCL_NONE)
			keep_wait(r, call);
	}
}

static void nccl_print_text(void *state, FILE *out)
{
	struct nccl_report *r = state;
	const struct nccl_calls *c = r->calls;
	char a[32], b[32];
	uint64_t total = 0;

	finish(r);
	for (uint32_t op = 0; op < GRT_NCCL_OPS; op++)
		total += nccl_calls_op_calls(c, op);
	if (!nccl_calls_ranks(c) && !total) {
		fprintf(out, "no NCCL communicator or collective in this trace (record with -s nccl)\n");
		return;
	}
	fprintf(out, "  %-18s %4s %5s %8s %6s %11s %12s %8s %12s %7s\n", "communicator", "rank",
		"of", "pid", "device", "collectives", "bytes", "kernels", "waited", "last_in");
	for (uint32_t i = 0; i < nccl_calls_ranks(c); i++) {
		const struct nccl_rank *s = nccl_calls_rank(c, i);
		char device[16] = "?";

		if (s->device >= 0)
			snprintf(device, sizeof(device), "%d", s->device);
		fprintf(out, "  0x%016" PRIx64 " %4u %5u %8u %6s %11u %12s %8" PRIu64 " %12s %7" PRIu64
			     "\n", s->comm_id, s->rank, s->nranks, s->pid, device, s->seq,
			report_format_bytes(s->bytes, a, sizeof(a)), s->kernels,
			job_format_ns(s->waited_ns, b, sizeof(b)), s->last_in);
	}
	fprintf(out, "collectives by op:\n");
	for (uint32_t op = 0; op < GRT_NCCL_OPS; op++)
		if (nccl_calls_op_calls(c, op))
			fprintf(out, "  %-15s %8" PRIu64 " calls %12s  kernel %s\n", grt_nccl_op_name(op),
				nccl_calls_op_calls(c, op),
				report_format_bytes(nccl_calls_op_bytes(c, op), a, sizeof(a)),
				nccl_calls_op_kernel(c, op) ? nccl_calls_op_kernel(c, op) : "(none seen)");
	if (nccl_calls_unknown_comm(c))
		fprintf(out, "  %" PRIu64 " collectives on communicators created before the trace "
			     "started: no rank, no waits\n", nccl_calls_unknown_comm(c));
	fprintf(out, "waits (a rank entered a collective before the last rank of its communicator, "
		     "or a send or receive before its peer; longest first):\n");
	if (!r->n_top)
		fprintf(out, "  none\n");
	for (uint32_t i = 0; i < r->n_top; i++) {
		const struct nccl_call *w = r->top[i];

		fprintf(out, "  rank %u's %s #%u waited %s for rank %u (communicator 0x%016" PRIx64
			     ", %s%s)\n", w->rank, grt_nccl_op_name(w->op), w->seq + 1,
			job_format_ns(w->wait_ns, a, sizeof(a)), w->for_rank, w->comm_id,
			report_format_bytes(w->bytes, b, sizeof(b)),
			w->basis == NCCL_BASIS_DEVICE ? ", kernel starts on the GPU" : "");
	}
	if (nccl_calls_incomplete(c))
		fprintf(out, "WARNING: %s\n", NCCL_INCOMPLETE);
}

static void nccl_print_json(void *state, struct json_writer *w)
{
	struct nccl_report *r = state;
	const struct nccl_calls *c = r->calls;

	finish(r);
	jw_begin_object(w);
	jw_key(w, "ranks");
	jw_begin_array(w);
	for (uint32_t i = 0; i < nccl_calls_ranks(c); i++) {
		const struct nccl_rank *s = nccl_calls_rank(c, i);

		jw_begin_object(w);
		jw_field_u64(w, "comm_id", s->comm_id);
		jw_field_u64(w, "rank", s->rank);
		jw_field_u64(w, "nranks", s->nranks);
		jw_field_u64(w, "pid", s->pid);
		jw_key(w, "device");
		if (s->device >= 0)
			jw_u64(w, (uint64_t)s->device);
		else
			jw_null(w);
		jw_field_u64(w, "collectives", s->seq);
		jw_field_u64(w, "p2p", s->p2p);
		jw_field_u64(w, "bytes", s->bytes);
		jw_field_u64(w, "kernels", s->kernels);
		jw_field_u64(w, "waited_ns", s->waited_ns);
		jw_field_u64(w, "last_in", s->last_in);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "ops");
	jw_begin_array(w);
	for (uint32_t op = 0; op < GRT_NCCL_OPS; op++) {
		if (!nccl_calls_op_calls(c, op))
			continue;
		jw_begin_object(w);
		jw_field_string(w, "op", grt_nccl_op_name(op));
		jw_field_u64(w, "calls", nccl_calls_op_calls(c, op));
		jw_field_u64(w, "bytes", nccl_calls_op_bytes(c, op));
		jw_field_string(w, "kernel", nccl_calls_op_kernel(c, op));
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_field_u64(w, "unknown_comm", nccl_calls_unknown_comm(c));
	jw_key(w, "waits");
	jw_begin_array(w);
	for (uint32_t i = 0; i < r->n_top; i++) {
		const struct nccl_call *t = r->top[i];

		jw_begin_object(w);
		jw_field_u64(w, "rank", t->rank);
		jw_field_u64(w, "waited_for", t->for_rank);
		jw_field_string(w, "op", grt_nccl_op_name(t->op));
		jw_field_u64(w, "index", t->seq + 1);
		jw_field_u64(w, "ns", t->wait_ns);
		jw_field_u64(w, "entered_ns", t->enter);
		jw_field_u64(w, "comm_id", t->comm_id);
		jw_field_u64(w, "bytes", t->bytes);
		jw_field_string(w, "basis", nccl_basis_name(t->basis));
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static const char *nccl_incomplete(void *state)
{
	struct nccl_report *r = state;

	finish(r);
	return nccl_calls_incomplete(r->calls) ? NCCL_INCOMPLETE : NULL;
}

GRT_REPORT_SECTION(nccl_section) = {
	.name = "nccl",
	.summary = "NCCL collectives per rank, their kernels, and which rank waited for which",
	.default_on = true,
	.sources = 1u << GRT_SRC_NCCL,
	.order = 85,
	.create = nccl_create,
	.on_record = nccl_on_record,
	.print_text = nccl_print_text,
	.print_json = nccl_print_json,
	.incomplete = nccl_incomplete,
	.destroy = nccl_destroy,
};
