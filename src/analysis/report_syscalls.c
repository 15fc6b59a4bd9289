/* Report section `syscalls`: per process, syscall counts and time by name. */
#include <errno.h>
#include <stdlib.h>
#include "analysis/kernel_stats.h"
#include "analysis/report_section.h"
#include "trace/kernel_names.h"
#include "trace/records_kernel.h"

struct syscall_report {
	unsigned top_n;
	struct kstat_table calls;	/* key pid << 32 | nr; aux = unfinished calls */
	struct comm_table comms;
};

static void *syscalls_create(const struct report_input *in)
{
	struct syscall_report *r = calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->top_n = in->top_n;
	kstat_init(&r->calls);
	comm_table_init(&r->comms);
	return r;
}

static void syscalls_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct syscall_report *r = state;
	const struct grt_syscall_rec *s = rec->payload;
	struct kstat *row;

	comm_table_note(&r->comms, rec, strings);
	if (rec->hdr.type != GRT_REC_SYSCALL)
		return;
	row = kstat_get(&r->calls, (uint64_t)rec->hdr.pid << 32 | s->nr);
	if (!row)
		return;
	if (s->flags & (GRT_SYSCALL_F_NO_RETURN | GRT_SYSCALL_F_UNFINISHED)) {
		/* no duration: counted, and unfinished ones shown apart */
		row->count++;
		row->aux += !!(s->flags & GRT_SYSCALL_F_UNFINISHED);
		return;
	}
	kstat_add(row, s->exit_ns > rec->hdr.ts_ns ? s->exit_ns - rec->hdr.ts_ns : 0,
		  s->ret < 0 && s->ret > -4096);
}

static const char *syscall_label(uint32_t nr, char *buf, size_t len)
{
	const char *name = grt_syscall_name(nr);

	if (name)
		return name;
	snprintf(buf, len, "syscall_%u", nr);
	return buf;
}

static void syscalls_print_text(void *state, FILE *out)
{
	struct syscall_report *r = state;
	size_t rows = kstat_text_rows(r->top_n);
	char buf[32];

	if (!r->calls.count) {
		fprintf(out, "no syscall records in this trace (record with -s syscall)\n");
		return;
	}
	kstat_sort(&r->calls);
	fprintf(out, "Syscalls by process (total time)\n");
	fprintf(out, "  %8s %-16s %-20s %9s %12s %10s %12s %7s %10s\n", "pid", "comm", "syscall", "count",
		"total_ms", "avg_us", "max_us", "errors", "unfinished");
	for (size_t i = 0; i < r->calls.count && i < rows; i++) {
		const struct kstat *s = &r->calls.rows[i];
		uint64_t timed = s->count - s->aux;

		fprintf(out, "  %8u %-16s %-20s %9llu %12.3f %10.1f %12.1f %7llu %10llu\n",
			(unsigned)(s->key >> 32), comm_table_get(&r->comms, s->key >> 32),
			syscall_label((uint32_t)s->key, buf, sizeof(buf)), (unsigned long long)s->count,
			s->total_ns / 1e6, timed ? s->total_ns / 1e3 / timed : 0.0, s->max_ns / 1e3,
			(unsigned long long)s->errors, (unsigned long long)s->aux);
	}
	kstat_text_more(out, r->calls.count, rows);
}

static void syscalls_print_json(void *state, struct json_writer *w)
{
	struct syscall_report *r = state;
	char buf[32];

	kstat_sort(&r->calls);
	jw_begin_array(w);
	for (size_t i = 0; i < r->calls.count; i++) {
		const struct kstat *s = &r->calls.rows[i];

		jw_begin_object(w);
		jw_field_u64(w, "pid", s->key >> 32);
		jw_field_string(w, "comm", comm_table_get(&r->comms, s->key >> 32));
		jw_field_string(w, "syscall", syscall_label((uint32_t)s->key, buf, sizeof(buf)));
		jw_field_u64(w, "nr", (uint32_t)s->key);
		kstat_json_times(w, s, "errors", "unfinished");
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void syscalls_destroy(void *state)
{
	struct syscall_report *r = state;

	kstat_free(&r->calls);
	comm_table_free(&r->comms);
	free(r);
}

GRT_REPORT_SECTION(syscalls_section) = {
	.name = "syscalls",
	.summary = "per process: syscall counts and time by name (syscall source)",
	.default_on = true,
	.sources = 1u << GRT_SRC_SYSCALL,
	.order = 60,
	.create = syscalls_create,
	.on_record = syscalls_on_record,
	.print_text = syscalls_print_text,
	.print_json = syscalls_print_json,
	.destroy = syscalls_destroy,
};
