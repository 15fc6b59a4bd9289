/* Report section `api`: per process, per CUDA driver API: calls, errors and time spent in the call. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "analysis/stats.h"
#include "trace/records_cuda.h"
#include "trace/trace_names.h"

#define API_INCOMPLETE "out of memory while counting; some calls are missing"

struct api_row {
	uint64_t calls;
	uint64_t errors;
	uint64_t unfinished;
	uint64_t unsampled;	/* returns not sampled (record --launch-returns) */
	int32_t last_error;	/* CUresult of the latest failed call */
	struct grt_stats api_ns;
};

struct api_process {
	uint32_t pid;
	uint64_t calls, errors;
	uint64_t total_ns;
	struct api_row *rows[GRT_CUDA_API_COUNT]; /* by enum grt_cuda_api; [0] takes unknown values */
};

struct api_report {
	struct api_process **procs;
	size_t nprocs, cap;
	struct u64_map by_pid;	/* pid -> index in procs */
	struct pid_comms comms;
	unsigned top_n;
	bool out_of_memory;
};

static void *api_create(const struct report_input *in)
{
	struct api_report *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	u64_map_init(&a->by_pid);
	pid_comms_init(&a->comms);
	a->top_n = in->top_n;
	return a;
}

static void api_destroy(void *state)
{
	struct api_report *a = state;

	for (size_t i = 0; i < a->nprocs; i++) {
		for (int api = 0; api < GRT_CUDA_API_COUNT; api++) {
			if (!a->procs[i]->rows[api])
				continue;
			grt_stats_destroy(&a->procs[i]->rows[api]->api_ns);
			free(a->procs[i]->rows[api]);
		}
		free(a->procs[i]);
	}
	free(a->procs);
	u64_map_destroy(&a->by_pid);
	pid_comms_destroy(&a->comms);
	free(a);
}

static struct api_process *process_for(struct api_report *a, uint32_t pid)
{
	struct api_process *p;
	uint64_t index;

	if (u64_map_get(&a->by_pid, pid, &index))
		return a->procs[index];
	if (a->nprocs == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		struct api_process **bigger = realloc(a->procs, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		a->procs = bigger;
		a->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p || u64_map_put(&a->by_pid, pid, a->nprocs)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	a->procs[a->nprocs++] = p;
	return p;
}

static struct api_row *row_for(struct api_process *p, uint32_t api)
{
	if (api >= GRT_CUDA_API_COUNT)
		api = GRT_CUDA_API_UNKNOWN;
	if (!p->rows[api])
		p->rows[api] = calloc(1, sizeof(*p->rows[api]));
	return p->rows[api];
}

static void api_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct api_report *a = state;
	const struct grt_cuda_call *call = report_cuda_call(rec);
	struct api_process *p;
	struct api_row *row;
	uint64_t ns;

	pid_comms_on_record(&a->comms, rec, strings);
	if (!call)
		return;
	p = process_for(a, rec->hdr.pid);
	row = p ? row_for(p, call->api) : NULL;
	if (!row) {
		a->out_of_memory = true;
		return;
	}
	row->calls++;
	p->calls++;
	if (report_call_failed(call)) {
		row->errors++;
		p->errors++;
		row->last_error = call->ret;
	}
	if (!report_call_ns(rec, call, &ns)) {
		if (call->flags & GRT_CUDA_F_RETURN_UNSAMPLED)
			row->unsampled++;
		else
			row->unfinished++;
		return;
	}
	p->total_ns += ns;
	if (grt_stats_add(&row->api_ns, ns))
		a->out_of_memory = true;
}

static int compare_pids(const void *x, const void *y)
{
	const struct api_process *a = *(struct api_process *const *)x, *b = *(struct api_process *const *)y;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int compare_apis(const void *x, const void *y, void *ctx)
{
	const struct api_process *p = ctx;
	const struct api_row *a = p->rows[*(const int *)x], *b = p->rows[*(const int *)y];

	if (a->api_ns.total != b->api_ns.total)
		return a->api_ns.total > b->api_ns.total ? -1 : 1;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return *(const int *)x - *(const int *)y;
}

/* The APIs a process called, most time first; returns how many. */
static int sorted_apis(struct api_process *p, int order[GRT_CUDA_API_COUNT])
{
	int n = 0;

	for (int api = 0; api < GRT_CUDA_API_COUNT; api++)
		if (p->rows[api])
			order[n++] = api;
	qsort_r(order, (size_t)n, sizeof(order[0]), compare_apis, p);
	return n;
}

static void print_process(struct api_report *a, struct api_process *p, FILE *out)
{
	int order[GRT_CUDA_API_COUNT];
	int n = sorted_apis(p, order), shown;
	uint64_t unfinished = 0, unsampled = 0;

	fprintf(out, "pid %u (%s): calls %" PRIu64 ", errors %" PRIu64 ", %.3f ms in the driver API\n",
		p->pid, pid_comms_get(&a->comms, p->pid), p->calls, p->errors,
		(double)p->total_ns / 1e6);
	fprintf(out, "  %9s %6s %12s %10s %10s %10s  %s\n", "calls", "errors", "total_us", "mean_us",
		"p50_us", "p99_us", "api");
	shown = a->top_n && (int)a->top_n < n ? (int)a->top_n : n;
	for (int i = 0; i < n; i++) {
		struct api_row *row = p->rows[order[i]];

		unfinished += row->unfinished;
		unsampled += row->unsampled;
		if (i >= shown)
			continue;
		fprintf(out, "  %9" PRIu64 " %6" PRIu64 " %12.3f %10.3f %10.3f %10.3f  %s", row->calls,
			row->errors, report_ns_to_us(row->api_ns.total),
			grt_stats_mean(&row->api_ns) / 1000.0,
			report_ns_to_us(grt_stats_percentile(&row->api_ns, 50)),
			report_ns_to_us(grt_stats_percentile(&row->api_ns, 99)),
			grt_cuda_api_name((uint32_t)order[i]));
		if (row->errors)
			fprintf(out, " (last error %d)", row->last_error);
		fputc('\n', out);
	}
	if (shown < n)
		fprintf(out, "  ... %d more APIs (--top 0 shows all)\n", n - shown);
	if (unfinished)
		fprintf(out, "  calls that never returned: %" PRIu64 " (their time is not counted)\n",
			unfinished);
	if (unsampled)
		fprintf(out,
			"  launches whose return was not sampled (--launch-returns): %" PRIu64
			" (their time and errors are not counted)\n",
			unsampled);
}

static void api_print_text(void *state, FILE *out)
{
	struct api_report *a = state;

	if (!a->nprocs) {
		fprintf(out, "no CUDA driver API calls in this trace\n");
		return;
	}
	qsort(a->procs, a->nprocs, sizeof(a->procs[0]), compare_pids);
	for (size_t i = 0; i < a->nprocs; i++)
		print_process(a, a->procs[i], out);
	if (a->out_of_memory)
		fprintf(out, "WARNING: %s\n", API_INCOMPLETE);
}

static void json_process(struct api_report *a, struct api_process *p, struct json_writer *w)
{
	int order[GRT_CUDA_API_COUNT];
	int n = sorted_apis(p, order);

	jw_begin_object(w);
	jw_key(w, "pid");
	jw_u64(w, p->pid);
	jw_key(w, "comm");
	jw_string(w, pid_comms_get(&a->comms, p->pid));
	jw_key(w, "calls");
	jw_u64(w, p->calls);
	jw_key(w, "errors");
	jw_u64(w, p->errors);
	jw_key(w, "total_ns");
	jw_u64(w, p->total_ns);
	jw_key(w, "apis");
	jw_begin_array(w);
	for (int i = 0; i < n; i++) {
		struct api_row *row = p->rows[order[i]];

		jw_begin_object(w);
		jw_key(w, "api");
		jw_string(w, grt_cuda_api_name((uint32_t)order[i]));
		jw_key(w, "calls");
		jw_u64(w, row->calls);
		jw_key(w, "errors");
		jw_u64(w, row->errors);
		jw_key(w, "last_error");
		if (row->errors)
			jw_i64(w, row->last_error);
		else
			jw_null(w);
		jw_key(w, "unfinished");
		jw_u64(w, row->unfinished);
		jw_key(w, "unsampled");
		jw_u64(w, row->unsampled);
		jw_key(w, "api_ns");
		report_json_stats(w, &row->api_ns);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void api_print_json(void *state, struct json_writer *w)
{
	struct api_report *a = state;

	if (a->nprocs > 1)
		qsort(a->procs, a->nprocs, sizeof(a->procs[0]), compare_pids);
	jw_begin_array(w);
	for (size_t i = 0; i < a->nprocs; i++)
		json_process(a, a->procs[i], w);
	jw_end_array(w);
}

static const char *api_incomplete(void *state)
{
	const struct api_report *a = state;

	return a->out_of_memory || a->comms.out_of_memory ? API_INCOMPLETE : NULL;
}

GRT_REPORT_SECTION(api_section) = {
	.name = "api",
	.summary = "per process and CUDA driver API: calls, errors, time in the call (mean, P50, P99)",
	.default_on = true,
	.order = 30,
	.create = api_create,
	.on_record = api_on_record,
	.print_text = api_print_text,
	.print_json = api_print_json,
	.incomplete = api_incomplete,
	.destroy = api_destroy,
};
