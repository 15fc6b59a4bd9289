/* `grtrace report --jobs`: verdict, idle gaps, tags, per-kernel/stream/process summaries, job rows. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/collective_waits.h"
#include "analysis/jobs/device_verdict.h"
#include "analysis/jobs/idle_gaps.h"
#include "analysis/jobs/pipeline.h"
#include "analysis/jobs/rows.h"
#include "analysis/jobs/summary.h"
#include "analysis/report_section.h"
#include "analysis/jobs/threshold_list.h"
#include "analysis/jobs/verdict.h"
#include "trace/records_core.h"
#include "trace/records_kernel.h"
#include "trace/trace_names.h"

struct jobs_state {
	struct job_thresholds t;
	struct job_pipeline *pipeline;
	struct job_summary summary;
	struct idle_gaps *gaps;
	struct collective_waits coll_waits;
	struct job_rows rows;
	bool want_rows;
	bool finished;
	unsigned top_n;		/* rows per text table; 0: all (the worst-jobs list then keeps 100) */
	uint64_t drops[GRT_SRC_MAX];
	uint64_t xids;
	uint32_t sources_mask;	/* of the trace's header */
	struct verdict verdict;
};

static void on_job(void *ctx, struct job *j)
{
	struct jobs_state *st = ctx;

	job_summary_add(&st->summary, j);
	idle_gaps_job(st->gaps, j);
	collective_waits_job(&st->coll_waits, j);
	if (st->want_rows)
		job_rows_add(&st->rows, j);
}

static void on_host_wait(void *ctx, uint32_t pid, uint32_t tid, uint32_t device, uint64_t start,
			 uint64_t end)
{
	struct jobs_state *st = ctx;

	idle_gaps_host_wait(st->gaps, pid, tid, device, start, end);
}

static void on_advance(void *ctx, uint64_t frontier)
{
	struct jobs_state *st = ctx;

	idle_gaps_advance(st->gaps, frontier);
}

static void on_uvm(void *ctx, uint32_t pid, uint64_t ts, const struct grt_uvm_event_rec *u)
{
	struct jobs_state *st = ctx;

	idle_gaps_uvm(st->gaps, pid, ts, u);
}

static void on_settled(void *ctx, uint64_t point)
{
	struct jobs_state *st = ctx;

	job_summary_settle(&st->summary, point);
}

static void on_busy(void *ctx, uint32_t device, uint64_t start, uint64_t end)
{
	struct jobs_state *st = ctx;

	idle_gaps_busy(st->gaps, device, start, end);
}

static void jobs_destroy(void *state)
{
	struct jobs_state *st = state;

	if (!st)
		return;
	job_pipeline_free(st->pipeline);
	job_summary_destroy(&st->summary);
	idle_gaps_free(st->gaps);
	collective_waits_destroy(&st->coll_waits);
	job_rows_close(&st->rows);
	free(st);
}

static void explain(const struct report_input *in, const char *msg)
{
	if (in->error && in->error_len)
		snprintf(in->error, in->error_len, "%s", msg);
}

static void *jobs_create(const struct report_input *in)
{
	static const struct job_builder_ops ops = {
		.job = on_job, .host_wait = on_host_wait, .advance = on_advance, .busy = on_busy,
		.settled = on_settled, .uvm = on_uvm,
	};
	struct jobs_state *st = calloc(1, sizeof(*st));
	char err[512] = "";
	int rc;

	if (!st)
		return NULL;
	job_thresholds_default(&st->t);
	if (threshold_list_parse(&st->t, in->thresholds, err, sizeof(err))) {
		explain(in, err);
		free(st);
		errno = EINVAL;
		return NULL;
	}
	st->t.show_own = in->show_own;
	st->sources_mask = in->header ? in->header->sources_mask : 0;
	st->top_n = in->top_n;
	st->want_rows = in->json || in->csv;
	st->gaps = idle_gaps_new(st->top_n && st->top_n < 10 ? st->top_n : 10);
	st->pipeline = job_pipeline_new(in->header, &st->t, &ops, st);
	rc = job_summary_init(&st->summary, st->top_n ? st->top_n : 100);
	if (!rc)
		rc = collective_waits_init(&st->coll_waits, st->top_n && st->top_n < 10 ? st->top_n : 10);
	if (!rc && st->want_rows)
		rc = job_rows_open(&st->rows);
	if (rc || !st->gaps || !st->pipeline) {
		jobs_destroy(st);
		errno = rc ? -rc : ENOMEM;
		return NULL;
	}
	if (in->path && job_pipeline_prepass(st->pipeline, in->path, err, sizeof(err))) {
		explain(in, err);
		jobs_destroy(st);
		errno = EIO;
		return NULL;
	}
	return st;
}

static void jobs_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct jobs_state *st = state;

	if (rec->hdr.type == GRT_REC_DROP && rec->hdr.payload_len >= sizeof(struct grt_drop_rec)) {
		const struct grt_drop_rec *d = rec->payload;

		if (d->source < GRT_SRC_MAX)
			st->drops[d->source] += d->count;
	} else if (rec->hdr.type == GRT_REC_XID) {
		st->xids++;
	}
	job_pipeline_record(st->pipeline, rec, strings);
}

/* The report has no end-of-records call: the first print finishes the analysis. */
static void finish(struct jobs_state *st)
{
	if (st->finished)
		return;
	st->finished = true;
	job_pipeline_finish(st->pipeline);
	collective_waits_finish(&st->coll_waits);
	verdict_build(&st->verdict, &st->summary, st->gaps, job_pipeline_builder(st->pipeline), &st->t);
}

/* Incomplete jobs, each under the first step of its life it misses (they may miss several). */
static void print_counts_text(struct jobs_state *st, FILE *out)
{
	const struct job_summary *s = &st->summary;
	const char *sep = ", by first missing step: ";

	fprintf(out, "jobs: %" PRIu64 " (%" PRIu64 " complete, %" PRIu64 " incomplete", s->jobs,
		s->jobs - s->incomplete, s->incomplete);
	for (unsigned i = 0; i < JOB_MISSING_STEPS; i++) {
		uint32_t bit = job_missing_steps[i];

		if (!s->first_missing[bit])
			continue;
		fprintf(out, "%s%" PRIu64 " %s", sep, s->first_missing[bit], job_missing_label(bit));
		sep = ", ";
	}
	fprintf(out, ")");
	if (s->failed)
		fprintf(out, ", %" PRIu64 " failed calls", s->failed);
	if (s->graph_nodes)
		fprintf(out, ", %" PRIu64 " graph nodes", s->graph_nodes);
	fprintf(out, "\n");
	if (!job_pipeline_has_prepass(st->pipeline))
		fprintf(out, "exec-long-tail: not checked (needs a second pass over the trace file)\n");
}

#define DEVICE_LINES_MAX 5

/*
 * Device timing is a property of a process (its injected library ran, CUPTI
 * or the block probes timed its work), not of a job: say it is missing only
 * for the trace or the processes that have none at all.
 */
static void print_device_timing_text(struct jobs_state *st, FILE *out)
{
	const struct job_builder *b = job_pipeline_builder(st->pipeline);
	const struct job_builder_stats *bs = job_builder_stats(b);
	struct job_group_table *procs = &st->summary.procs;
	uint32_t shown = 0, more = 0;

	if (!(st->sources_mask & (1u << GRT_SRC_GPU))) {
		/* DRM jobs have theirs from the drivers' rings */
		if (!job_pipeline_drm_jobs(st->pipeline))
			fprintf(out, "device timing: not recorded (add -s gpu): no START/END, no idle gaps\n");
		return;
	}
	if (job_builder_gpu_not_running(b)) {
		fprintf(out, "device timing: none, the gpu source did not run: %s\n",
			job_builder_gpu_not_running(b));
		return;
	}
	if (!bs->device_records && !bs->own_device_records) {
		if (st->summary.jobs)
			fprintf(out, "device timing: none, the gpu source wrote no device record\n");
		return;
	}
	for (uint32_t i = 0; i < procs->count; i++) {
		const struct job_group *g = &procs->rows[i];
		const char *comm;

		if (job_builder_process_device_records(b, g->pid))
			continue;
		if (shown == DEVICE_LINES_MAX) {
			more++;
			continue;
		}
		comm = job_builder_process_name(b, g->pid);
		fprintf(out, "device timing: none for pid %u (%s): its %" PRIu64 " jobs have no START/END\n",
			g->pid, comm ? comm : "?", g->jobs);
		shown++;
	}
	if (more)
		fprintf(out, "device timing: none for %u more processes\n", more);
}

static void print_gaps_text(struct jobs_state *st, FILE *out)
{
	char a[24], b[24], c[24], d[24], e[24], f[24], u[24];

	for (uint32_t i = 0; i < idle_gaps_devices(st->gaps); i++) {
		const struct device_idle *dv = idle_gaps_device(st->gaps, i);
		uint64_t span = dv->last_end - dv->first_start;
		uint64_t idle = 0;

		for (int c = 0; c < GAP_CLASSES; c++)
			idle += dv->idle[c];

		if (dv->device == JOB_NO_DEVICE)
			fprintf(out, "\nidle gaps (device not recorded):\n");
		else
			fprintf(out, "\nidle gaps (device %u):\n", dv->device);
		fprintf(out, "  span %s, busy %s (%.1f%%), idle %s (%.1f%%) in %" PRIu64 " gaps\n",
			job_format_ns(span, a, sizeof(a)), job_format_ns(dv->busy, b, sizeof(b)),
			span ? 100.0 * (double)dv->busy / (double)span : 0.0, job_format_ns(idle, c, sizeof(c)),
			span ? 100.0 * (double)idle / (double)span : 0.0, dv->gaps);
		fprintf(out, "  host-bound %s, sync-bound %s, uvm-bound %s, other %s\n",
			job_format_ns(dv->idle[GAP_HOST_BOUND], d, sizeof(d)),
			job_format_ns(dv->idle[GAP_SYNC_BOUND], e, sizeof(e)),
			job_format_ns(dv->idle[GAP_UVM_BOUND], u, sizeof(u)),
			job_format_ns(dv->idle[GAP_OTHER], f, sizeof(f)));
		if (dv->late_jobs)
			fprintf(out, "  %" PRIu64 " jobs arrived after their time was judged (gaps may be "
				     "overstated)\n", dv->late_jobs);
		for (uint32_t g = 0; g < dv->n_longest; g++) {
			const struct idle_gap *gp = &dv->longest[g];
			int cls = GAP_OTHER;

			/* named after its largest part */
			for (int k = 0; k < GAP_CLASSES; k++)
				if (gp->split[k] > gp->split[cls])
					cls = k;

			fprintf(out, "  gap %s at %s before job %" PRIu64 " (tid %u): %s\n",
				job_format_ns(gp->end - gp->start, a, sizeof(a)),
				job_format_ns(gp->start - dv->first_start, b, sizeof(b)), gp->job_id, gp->tid,
				gap_class_name((enum gap_class)cls));
		}
	}
}

/* Why device records matched no host call, in a few words. */
static const char *unmatched_reason(const struct jobs_state *st, const struct job_builder_stats *bs,
				    char *buf, size_t len)
{
	if (!(st->sources_mask & (1u << GRT_SRC_CUDA)))
		snprintf(buf, len, "the trace has no cuda source");
	else if (bs->cuda_drops)
		snprintf(buf, len, "%" PRIu64 " cuda events were lost while recording", bs->cuda_drops);
	else
		snprintf(buf, len, "their host calls are not in the trace");
	return buf;
}

static void print_notes_text(struct jobs_state *st, FILE *out)
{
	const struct job_builder_stats *bs = job_builder_stats(job_pipeline_builder(st->pipeline));
	char why[96];

	for (uint32_t s = 0; s < GRT_SRC_MAX; s++)
		if (st->drops[s])
			fprintf(out, "note: %" PRIu64 " %s events were lost while recording: some jobs miss "
				     "events\n", st->drops[s], grt_source_name(s));
	if (bs->device_unmatched)
		fprintf(out, "note: %" PRIu64 " device records without a recorded host call (no jobs; their "
			     "execution counts as busy GPU time): %s\n", bs->device_unmatched,
			unmatched_reason(st, bs, why, sizeof(why)));
	if (bs->device_late)
		fprintf(out, "note: %" PRIu64 " device records came after their call's job was finished "
			     "(later than late-window): counted as busy GPU time only\n", bs->device_late);
	if (bs->device_near)
		fprintf(out, "note: %" PRIu64 " device records matched by nearest time: trace has no call "
			     "identity\n", bs->device_near);
	if (bs->device_by_order)
		fprintf(out, "note: %" PRIu64 " device records matched by stream order: trace has no call "
			     "identity\n", bs->device_by_order);
	if (bs->own_jobs || bs->own_device_unmatched)
		fprintf(out, "note: grtrace's own work left out: %" PRIu64 " jobs (calibration, probe "
			     "collection), counted as busy GPU time; --own shows them\n",
			bs->own_jobs + bs->own_device_unmatched);
	if (bs->unknown_event_syncs)
		fprintf(out, "note: %" PRIu64 " event syncs on events never recorded in the trace\n",
			bs->unknown_event_syncs);
	if (bs->forced)
		fprintf(out, "note: %" PRIu64 " jobs finished early at the open-job limit (max-open-jobs)\n",
			bs->forced);
	if (bs->uvm_dropped)
		fprintf(out, "note: %" PRIu64 " UVM events fell out of the bounded fault window\n",
			bs->uvm_dropped);
	if (st->xids)
		fprintf(out, "note: %" PRIu64 " GPU Xid errors in the trace\n", st->xids);
}

static void jobs_print_text(void *state, FILE *out)
{
	struct jobs_state *st = state;

	finish(st);
	fprintf(out, "verdict: %s\n", st->verdict.text);
	print_counts_text(st, out);
	print_device_timing_text(st, out);
	print_gaps_text(st, out);
	device_verdict_print_text(st->gaps, job_builder_devices(job_pipeline_builder(st->pipeline)),
				  &st->coll_waits, out);
	collective_waits_print_text(&st->coll_waits, out);
	job_summary_print_text(&st->summary, out, st->top_n);
	print_notes_text(st, out);
}

static void gaps_json(struct jobs_state *st, struct json_writer *w)
{
	jw_begin_array(w);
	for (uint32_t i = 0; i < idle_gaps_devices(st->gaps); i++) {
		const struct device_idle *dv = idle_gaps_device(st->gaps, i);

		jw_begin_object(w);
		jw_key(w, "device");
		if (dv->device == JOB_NO_DEVICE)
			jw_null(w);
		else
			jw_u64(w, dv->device);
		jw_field_u64(w, "span_ns", dv->last_end - dv->first_start);
		jw_field_u64(w, "busy_ns", dv->busy);
		for (int c = 0; c < GAP_CLASSES; c++) {
			static const char *const keys[] = { "host_bound_ns", "sync_bound_ns", "other_ns",
							    "uvm_bound_ns" };

			jw_key(w, keys[c]);
			jw_u64(w, dv->idle[c]);
		}
		jw_field_u64(w, "gaps", dv->gaps);
		jw_field_u64(w, "late_jobs", dv->late_jobs);
		jw_key(w, "longest");
		jw_begin_array(w);
		for (uint32_t g = 0; g < dv->n_longest; g++) {
			const struct idle_gap *gp = &dv->longest[g];

			jw_begin_object(w);
			jw_field_u64(w, "start_ns", gp->start);
			jw_field_u64(w, "end_ns", gp->end);
			jw_field_u64(w, "host_bound_ns", gp->split[GAP_HOST_BOUND]);
			jw_field_u64(w, "sync_bound_ns", gp->split[GAP_SYNC_BOUND]);
			jw_field_u64(w, "other_ns", gp->split[GAP_OTHER]);
			jw_field_u64(w, "uvm_bound_ns", gp->split[GAP_UVM_BOUND]);
			jw_field_u64(w, "job", gp->job_id);
			jw_field_u64(w, "pid", gp->pid);
			jw_field_u64(w, "tid", gp->tid);
			jw_end_object(w);
		}
		jw_end_array(w);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void notes_json(struct jobs_state *st, struct json_writer *w)
{
	const struct job_builder *b = job_pipeline_builder(st->pipeline);
	const struct job_builder_stats *bs = job_builder_stats(b);
	struct job_group_table *procs = &st->summary.procs;
	char why[96];

	jw_begin_object(w);
	jw_key(w, "device_timing");
	jw_bool(w, ((st->sources_mask & (1u << GRT_SRC_GPU)) && job_builder_expects_device(b)) ||
		       job_pipeline_drm_jobs(st->pipeline));
	jw_key(w, "gpu_not_running");
	if (job_builder_gpu_not_running(b))
		jw_string(w, job_builder_gpu_not_running(b));
	else
		jw_null(w);
	jw_key(w, "pids_without_device_timing");
	jw_begin_array(w);
	for (uint32_t i = 0; bs->device_records && i < procs->count; i++)
		if (!job_builder_process_device_records(b, procs->rows[i].pid))
			jw_u64(w, procs->rows[i].pid);
	jw_end_array(w);
	jw_key(w, "tail_checked");
	jw_bool(w, job_pipeline_has_prepass(st->pipeline));
	jw_key(w, "drops");
	jw_begin_object(w);
	for (uint32_t s = 0; s < GRT_SRC_MAX; s++)
		if (st->drops[s]) {
			jw_key(w, grt_source_name(s));
			jw_u64(w, st->drops[s]);
		}
	jw_end_object(w);
	jw_field_u64(w, "device_records", bs->device_records);
	jw_field_u64(w, "own_device_records", bs->own_device_records);
	jw_field_u64(w, "device_by_identity", bs->device_by_identity);
	jw_field_u64(w, "device_near", bs->device_near);
	jw_field_u64(w, "device_by_order", bs->device_by_order);
	jw_field_u64(w, "device_unmatched", bs->device_unmatched);
	jw_key(w, "device_unmatched_reason");
	if (bs->device_unmatched)
		jw_string(w, unmatched_reason(st, bs, why, sizeof(why)));
	else
		jw_null(w);
	jw_field_u64(w, "device_late", bs->device_late);
	jw_field_u64(w, "device_duplicates", bs->device_duplicates);
	jw_field_u64(w, "own_jobs", bs->own_jobs + bs->own_device_unmatched);
	jw_field_u64(w, "unknown_event_syncs", bs->unknown_event_syncs);
	jw_field_u64(w, "forced", bs->forced);
	jw_field_u64(w, "max_open_jobs", bs->max_open);
	jw_field_u64(w, "uvm_dropped", bs->uvm_dropped);
	jw_field_u64(w, "xids", st->xids);
	jw_end_object(w);
}

static void jobs_print_json(void *state, struct json_writer *w)
{
	struct jobs_state *st = state;

	finish(st);
	jw_begin_object(w);
	jw_key(w, "verdict");
	verdict_print_json(&st->verdict, w);
	job_summary_print_json(&st->summary, w);
	jw_key(w, "idle_gaps");
	gaps_json(st, w);
	jw_key(w, "devices");
	device_verdict_print_json(st->gaps,
				  job_builder_devices(job_pipeline_builder(st->pipeline)),
				  &st->coll_waits, w);
	jw_key(w, "notes");
	notes_json(st, w);
	jw_key(w, "jobs");
	job_rows_print_json(&st->rows, w);
	jw_end_object(w);
}

static const char *jobs_incomplete(void *state)
{
	struct jobs_state *st = state;

	if (job_pipeline_complete(st->pipeline) && job_summary_complete(&st->summary) &&
	    !idle_gaps_alloc_failures(st->gaps) && !st->coll_waits.alloc_failed && !st->rows.error)
		return NULL;
	return "out of memory while building jobs; some jobs, their events or idle gaps are missing";
}

GRT_REPORT_SECTION(jobs_section) = {
	.name = "jobs",
	.summary = "per-job timing breakdown, blocking causes, GPU idle gaps and a verdict",
	.default_on = false,
	.order = 5,
	.sees_own = true,
	.create = jobs_create,
	.on_record = jobs_on_record,
	.print_text = jobs_print_text,
	.print_json = jobs_print_json,
	.incomplete = jobs_incomplete,
	.destroy = jobs_destroy,
};
