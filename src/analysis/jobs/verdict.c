/* Choosing and wording the dominant cause from the idle gaps and the tag totals. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "analysis/jobs/verdict.h"
#include "analysis/report_util.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void device_totals(struct verdict *v, const struct idle_gaps *g)
{
	for (uint32_t i = 0; i < idle_gaps_devices(g); i++) {
		const struct device_idle *d = idle_gaps_device(g, i);

		v->span_ns += d->last_end - d->first_start;
		v->busy_ns += d->busy;
		for (int c = 0; c < GAP_CLASSES; c++)
			v->idle_ns[c] += d->idle[c];
	}
}

static const char *thread_label(const struct job_builder *b, uint32_t tid, char *buf, size_t len)
{
	const char *comm = job_builder_thread_name(b, tid);

	if (comm)
		snprintf(buf, len, "thread %u (%s)", tid, comm);
	else
		snprintf(buf, len, "thread %u", tid);
	return buf;
}

/* The process whose managed memory kept the GPU waiting, and how much it moved each way. */
static void uvm_sentence(struct verdict *v, const struct idle_gaps *g, const struct job_builder *b,
			 uint32_t pid, size_t n)
{
	const struct uvm_totals *u = idle_gaps_uvm_totals(g, pid);
	const char *comm = job_builder_process_name(b, pid);
	char to_dev[24], to_host[24];

	v->cause = "uvm-bound";
	snprintf(v->text + n, sizeof(v->text) - n,
		 "pid %u (%s) moves unified memory between CPU and GPU while the GPU waits: %s "
		 "migrated to the device, %s to the host in %" PRIu64 " migrations, %" PRIu64
		 " CPU faults",
		 pid, comm ? comm : "?", report_format_bytes(u ? u->to_device : 0, to_dev, sizeof(to_dev)),
		 report_format_bytes(u ? u->to_host : 0, to_host, sizeof(to_host)),
		 u ? u->migrations : 0, u ? u->cpu_faults : 0);
}

static void idle_verdict(struct verdict *v, const struct idle_gaps *g, const struct job_builder *b,
			 uint64_t idle)
{
	enum gap_class best = GAP_HOST_BOUND;
	char who[96];
	uint32_t pid;
	size_t n;

	for (int c = 1; c < GAP_CLASSES; c++)
		if (v->idle_ns[c] > v->idle_ns[best])
			best = (enum gap_class)c;
	v->cause_share = pct(v->idle_ns[best], idle);
	n = (size_t)snprintf(v->text, sizeof(v->text), "%.0f%% of GPU time idle; %.0f%% of idle time %s: ",
			     v->idle_share, v->cause_share,
			     best == GAP_OTHER ? "other (work submitted, not started)" : gap_class_name(best));
	if (best == GAP_OTHER) {
		v->cause = "launch-latency";
		snprintf(v->text + n, sizeof(v->text) - n,
			 "submitted jobs wait to start (launch latency, or dependencies on another device)");
		return;
	}
	idle_gaps_top_thread(g, best, &v->tid, &pid);
	thread_label(b, v->tid, who, sizeof(who));
	if (best == GAP_UVM_BOUND) {
		uvm_sentence(v, g, b, pid, n);
	} else if (best == GAP_HOST_BOUND) {
		v->cause = "host-bound";
		snprintf(v->text + n, sizeof(v->text) - n,
			 "launches from %s arrive slower than the GPU finishes them", who);
	} else {
		v->cause = "sync-bound";
		snprintf(v->text + n, sizeof(v->text) - n,
			 "%s waits for the GPU to finish before it submits more work", who);
	}
}

/* The row of a summary table with the most jobs carrying tag. */
static const struct job_group *most_tagged(const struct job_group_table *t, enum job_tag tag)
{
	const struct job_group *best = NULL;

	for (uint32_t i = 0; i < t->count; i++)
		if (t->rows[i].tagged[tag] && (!best || t->rows[i].tagged[tag] > best->tagged[tag]))
			best = &t->rows[i];
	return best;
}

/* "51.2 ms of the 54.0 ms span (95%; 9.19 s summed over jobs)": the union first, the sum said as one */
static void tag_time_text(const struct job_summary *s, const struct tag_summary *ts, char *buf,
			  size_t len)
{
	char wall[24], span[24], sum[24];
	uint64_t whole = job_summary_span(s);

	snprintf(buf, len, "%s of the %s span (%.0f%%; %s summed over jobs)",
		 job_format_ns(ts->wall_ns, wall, sizeof(wall)), job_format_ns(whole, span, sizeof(span)),
		 pct(ts->wall_ns, whole), job_format_ns(ts->cost_ns, sum, sizeof(sum)));
}

static void tag_sentence(struct verdict *v, struct job_summary *s, const struct job_builder *b,
			 const struct job_thresholds *t, enum job_tag tag, size_t n)
{
	const struct tag_summary *ts = &s->tags[tag];
	const struct job_group *k = most_tagged(&s->kernels, tag);
	const struct job_group *st = most_tagged(&s->streams, tag);
	char when[128];
	char *out = v->text + n;
	size_t left = sizeof(v->text) - n;

	tag_time_text(s, ts, when, sizeof(when));
	switch (tag) {
	case JOB_TAG_QUEUE_WAIT:
		snprintf(out, left,
			 "%" PRIu64 " jobs spent most of their time queued behind earlier work, queued "
			 "work during %s, most on pid %u stream 0x%" PRIx64 ": the GPU is saturated",
			 ts->jobs, when, st ? st->pid : 0, st ? st->stream : 0);
		break;
	case JOB_TAG_EXEC_LONG_TAIL:
		snprintf(out, left,
			 "%" PRIu64 " launches ran longer than %.1fx the P90 of their kernel, past it "
			 "during %s, most of %s",
			 ts->jobs, t->tail_factor_milli / 1000.0, when, k && k->name ? k->name : "?");
		break;
	case JOB_TAG_VM_FAULT:
		snprintf(out, left, "%" PRIu64 " jobs ran into unified-memory faults or migrations, "
				    "during %s", ts->jobs, when);
		break;
	case JOB_TAG_DEPENDENCY_WAIT:
		snprintf(out, left,
			 "%" PRIu64 " jobs waited on events of other streams before they could start, "
			 "during %s", ts->jobs, when);
		break;
	case JOB_TAG_HOST_SUBMIT_SLOW:
		snprintf(out, left, "%" PRIu64 " launch calls were slow in the driver, inside them during %s",
			 ts->jobs, when);
		break;
	case JOB_TAG_PREEMPTED:
		snprintf(out, left,
			 "%" PRIu64 " launch calls were switched off-CPU, off-CPU during %s, most in pid %u",
			 ts->jobs, when, st ? st->pid : 0);
		break;
	case JOB_TAG_COLLECTIVE_WAIT:
		snprintf(out, left,
			 "%" PRIu64 " NCCL kernels waited for a later rank of their collective, waiting "
			 "during %s (verdict per device names who waited for whom)", ts->jobs, when);
		break;
	default:
		break;
	}
}

/* The tag that covers the most wall time wins (the union: overlapping jobs count once). */
static void tag_verdict(struct verdict *v, struct job_summary *s, const struct job_builder *b,
			const struct job_thresholds *t)
{
	int best = -1;
	size_t n = 0;

	for (int tag = 0; tag < JOB_TAG_COUNT; tag++)
		if (s->tags[tag].wall_ns && (best < 0 || s->tags[tag].wall_ns > s->tags[best].wall_ns))
			best = tag;
	if (v->idle_share >= 0)
		n = (size_t)snprintf(v->text, sizeof(v->text), "%.0f%% of GPU time idle; ", v->idle_share);
	/*
	 * Without device timing, queueing, execution tails and idle gaps are
	 * invisible: "nothing stands out" would be a claim the trace cannot back.
	 */
	if (best < 0 && v->idle_share < 0) {
		v->cause = "no-device-timing";
		snprintf(v->text, sizeof(v->text),
			 "cannot judge without device timing: none of the %" PRIu64 " jobs has its GPU "
			 "start and end (record with -s gpu), and no host-side cause stands out",
			 s->jobs);
		return;
	}
	if (v->idle_share < 0)
		n = (size_t)snprintf(v->text, sizeof(v->text),
				     "no device timing, so only host-side causes are weighed; ");
	if (best < 0) {
		v->cause = "none";
		snprintf(v->text + n, sizeof(v->text) - n, "no blocking cause stands out in %" PRIu64 " jobs",
			 s->jobs);
		return;
	}
	v->cause = job_tag_name(best);
	v->cause_share = pct(s->tags[best].wall_ns, job_summary_span(s));
	n += (size_t)snprintf(v->text + n, sizeof(v->text) - n, "dominant cause %s: ", v->cause);
	tag_sentence(v, s, b, t, (enum job_tag)best, n);
}

void verdict_build(struct verdict *v, struct job_summary *s, const struct idle_gaps *g,
		   const struct job_builder *b, const struct job_thresholds *t)
{
	uint64_t idle;

	memset(v, 0, sizeof(*v));
	v->idle_share = -1;
	job_summary_finish(s);
	if (!s->jobs) {
		v->cause = "no-jobs";
		snprintf(v->text, sizeof(v->text), "no GPU jobs in this trace");
		return;
	}
	device_totals(v, g);
	idle = 0;
	for (int c = 0; c < GAP_CLASSES; c++)
		idle += v->idle_ns[c];
	if (v->span_ns)
		v->idle_share = pct(idle, v->span_ns);
	if (v->span_ns && (unsigned __int128)idle * 1000000u > (unsigned __int128)t->idle_share_ppm * v->span_ns) {
		idle_verdict(v, g, b, idle);
		return;
	}
	tag_verdict(v, s, b, t);
}

void verdict_print_json(const struct verdict *v, struct json_writer *w)
{
	jw_begin_object(w);
	jw_key(w, "cause");
	jw_string(w, v->cause);
	jw_key(w, "text");
	jw_string(w, v->text);
	jw_key(w, "idle_share");
	if (v->idle_share >= 0)
		jw_f64(w, v->idle_share / 100.0);
	else
		jw_null(w);
	jw_key(w, "cause_share");
	jw_f64(w, v->cause_share / 100.0);
	jw_key(w, "span_ns");
	jw_u64(w, v->span_ns);
	jw_key(w, "busy_ns");
	jw_u64(w, v->busy_ns);
	jw_key(w, "idle_host_bound_ns");
	jw_u64(w, v->idle_ns[GAP_HOST_BOUND]);
	jw_key(w, "idle_sync_bound_ns");
	jw_u64(w, v->idle_ns[GAP_SYNC_BOUND]);
	jw_key(w, "idle_other_ns");
	jw_u64(w, v->idle_ns[GAP_OTHER]);
	jw_key(w, "idle_uvm_bound_ns");
	jw_u64(w, v->idle_ns[GAP_UVM_BOUND]);
	jw_key(w, "thread");
	if (v->tid)
		jw_u64(w, v->tid);
	else
		jw_null(w);
	jw_end_object(w);
}
