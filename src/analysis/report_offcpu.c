/* Report section `offcpu`: off-CPU time per thread, split into sleeping and preempted (sched source). */
#include <errno.h>
#include <stdlib.h>
#include "analysis/kernel_stats.h"
#include "analysis/report_section.h"
#include "trace/records_kernel.h"

struct offcpu_report {
	unsigned top_n;
	struct kstat_table threads;	/* key pid << 32 | tid; aux = time off-CPU while runnable */
	struct comm_table comms;
};

static void *offcpu_create(const struct report_input *in)
{
	struct offcpu_report *r = calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->top_n = in->top_n;
	kstat_init(&r->threads);
	comm_table_init(&r->comms);
	return r;
}

static void offcpu_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct offcpu_report *r = state;
	const struct grt_sched_offcpu_rec *o = rec->payload;
	struct kstat *row;
	uint64_t ns;

	comm_table_note(&r->comms, rec, strings);
	if (rec->hdr.type != GRT_REC_SCHED_OFFCPU)
		return;
	row = kstat_get(&r->threads, (uint64_t)rec->hdr.pid << 32 | rec->hdr.tid);
	if (!row)
		return;
	ns = o->on_cpu_ns > rec->hdr.ts_ns ? o->on_cpu_ns - rec->hdr.ts_ns : 0;
	kstat_add(row, ns, false);
	/* state 0 is TASK_RUNNING: the thread wanted the CPU and was preempted */
	if (o->prev_state == 0)
		row->aux += ns;
}

static void offcpu_print_text(void *state, FILE *out)
{
	struct offcpu_report *r = state;
	size_t rows = kstat_text_rows(r->top_n);

	if (!r->threads.count) {
		fprintf(out, "no off-CPU intervals in this trace (record with -s sched)\n");
		return;
	}
	kstat_sort(&r->threads);
	fprintf(out, "Off-CPU time per thread\n");
	fprintf(out, "  %8s %8s %-16s %8s %12s %12s %10s %14s\n", "pid", "tid", "comm", "switches",
		"offcpu_ms", "sleep_ms", "max_ms", "preempted_ms");
	for (size_t i = 0; i < r->threads.count && i < rows; i++) {
		const struct kstat *s = &r->threads.rows[i];

		fprintf(out, "  %8u %8u %-16s %8llu %12.3f %12.3f %10.3f %14.3f\n", (unsigned)(s->key >> 32),
			(unsigned)s->key, comm_table_get(&r->comms, s->key >> 32), (unsigned long long)s->count,
			s->total_ns / 1e6, (s->total_ns - s->aux) / 1e6, s->max_ns / 1e6, s->aux / 1e6);
	}
	kstat_text_more(out, r->threads.count, rows);
}

static void offcpu_print_json(void *state, struct json_writer *w)
{
	struct offcpu_report *r = state;

	kstat_sort(&r->threads);
	jw_begin_array(w);
	for (size_t i = 0; i < r->threads.count; i++) {
		const struct kstat *s = &r->threads.rows[i];

		jw_begin_object(w);
		jw_field_u64(w, "pid", s->key >> 32);
		jw_field_u64(w, "tid", (uint32_t)s->key);
		jw_field_string(w, "comm", comm_table_get(&r->comms, s->key >> 32));
		jw_field_u64(w, "switches", s->count);
		jw_field_u64(w, "offcpu_ns", s->total_ns);
		jw_field_u64(w, "sleep_ns", s->total_ns - s->aux);
		jw_field_u64(w, "preempted_ns", s->aux);
		jw_field_u64(w, "max_ns", s->max_ns);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void offcpu_destroy(void *state)
{
	struct offcpu_report *r = state;

	kstat_free(&r->threads);
	comm_table_free(&r->comms);
	free(r);
}

GRT_REPORT_SECTION(offcpu_section) = {
	.name = "offcpu",
	.summary = "off-CPU time per thread, sleeping vs preempted (sched source)",
	.default_on = true,
	.sources = 1u << GRT_SRC_SCHED,
	.order = 62,
	.create = offcpu_create,
	.on_record = offcpu_on_record,
	.print_text = offcpu_print_text,
	.print_json = offcpu_print_json,
	.destroy = offcpu_destroy,
};
