/* Report section `driver`: GPU driver calls by device and operation (RM_ALLOC by class, RM_CONTROL by cmd, UVM_*). */
#include <errno.h>
#include <stdlib.h>
#include "analysis/kernel_stats.h"
#include "analysis/report_section.h"
#include "trace/kernel_names.h"
#include "trace/records_kernel.h"

/*
 * Row key: device (4 bits) | what detail is (2 bits) | operation (24 bits) |
 * detail (32 bits). UVM's 0x3000000N numbers are folded into the 24 bits.
 */
enum detail_kind { DETAIL_NONE = 0, DETAIL_CLASS = 1, DETAIL_CMD = 2 };

#define UVM_HIGH_BASE 0x30000000u
#define OP_FOLDED_HIGH 0x800000u

struct driver_report {
	unsigned top_n;
	struct kstat_table calls;	/* aux: calls whose RM status was not NV_OK */
};

static uint32_t op_fold(uint32_t op)
{
	if (op < OP_FOLDED_HIGH)
		return op;
	if ((op & 0xffffff00u) == UVM_HIGH_BASE)
		return OP_FOLDED_HIGH | (op & 0xff);
	return 0xffffff;
}

static uint32_t op_unfold(uint32_t folded)
{
	return folded >= OP_FOLDED_HIGH && folded != 0xffffff ? UVM_HIGH_BASE | (folded & 0xff) : folded;
}

static uint64_t row_key(const struct grt_nv_ioctl_rec *n)
{
	uint64_t kind = DETAIL_NONE, detail = 0;

	if (n->flags & GRT_NV_F_CLASS) {
		kind = DETAIL_CLASS;
		detail = n->object_class;
	} else if (n->flags & GRT_NV_F_CMD) {
		kind = DETAIL_CMD;
		detail = n->control_cmd;
	}
	return (uint64_t)(n->device & 0xf) << 60 | kind << 56 | (uint64_t)op_fold(n->op) << 32 | detail;
}

static void *driver_create(const struct report_input *in)
{
	struct driver_report *r = calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->top_n = in->top_n;
	kstat_init(&r->calls);
	return r;
}

static void driver_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct driver_report *r = state;
	const struct grt_nv_ioctl_rec *n = rec->payload;
	bool rm_error;
	struct kstat *row;

	if (rec->hdr.type != GRT_REC_NV_IOCTL || !(row = kstat_get(&r->calls, row_key(n))))
		return;
	rm_error = (n->flags & GRT_NV_F_STATUS) && n->rm_status;
	kstat_add(row, n->exit_ns > rec->hdr.ts_ns ? n->exit_ns - rec->hdr.ts_ns : 0, n->ret < 0 || rm_error);
	row->aux += rm_error;
}

struct row_fields {
	const char *device;
	const char *op;
	const char *detail_key;	/* "class", "cmd" or NULL */
	uint32_t detail;
	char op_buf[16];
};

static void row_fields(const struct kstat *s, struct row_fields *f)
{
	uint32_t device = s->key >> 60, kind = (s->key >> 56) & 3, op = op_unfold((s->key >> 32) & 0xffffff);

	f->device = grt_nv_device_name(device);
	f->op = grt_nv_op_name(device, op);
	if (!f->op) {
		snprintf(f->op_buf, sizeof(f->op_buf), "0x%x", op);
		f->op = f->op_buf;
	}
	f->detail_key = kind == DETAIL_CLASS ? "class" : kind == DETAIL_CMD ? "cmd" : NULL;
	f->detail = (uint32_t)s->key;
}

static void driver_print_text(void *state, FILE *out)
{
	struct driver_report *r = state;
	size_t rows = kstat_text_rows(r->top_n);

	if (!r->calls.count) {
		fprintf(out, "no ioctls on NVIDIA devices in this trace (record with -s syscall)\n");
		return;
	}
	kstat_sort(&r->calls);
	fprintf(out, "GPU driver calls (ioctls on NVIDIA devices, total time)\n");
	fprintf(out, "  %-16s %-36s %-18s %8s %11s %9s %10s %7s\n", "device", "operation", "detail", "count",
		"total_ms", "avg_us", "max_us", "failed");
	for (size_t i = 0; i < r->calls.count && i < rows; i++) {
		const struct kstat *s = &r->calls.rows[i];
		struct row_fields f;
		char detail[32] = "-";

		row_fields(s, &f);
		if (f.detail_key)
			snprintf(detail, sizeof(detail), "%s=0x%x", f.detail_key, f.detail);
		fprintf(out, "  %-16s %-36s %-18s %8llu %11.3f %9.1f %10.1f %7llu\n", f.device, f.op, detail,
			(unsigned long long)s->count, s->total_ns / 1e6, s->total_ns / 1e3 / s->count,
			s->max_ns / 1e3, (unsigned long long)s->errors);
	}
	kstat_text_more(out, r->calls.count, rows);
}

static void driver_print_json(void *state, struct json_writer *w)
{
	struct driver_report *r = state;

	kstat_sort(&r->calls);
	jw_begin_array(w);
	for (size_t i = 0; i < r->calls.count; i++) {
		const struct kstat *s = &r->calls.rows[i];
		struct row_fields f;

		row_fields(s, &f);
		jw_begin_object(w);
		jw_field_string(w, "device", f.device);
		jw_field_string(w, "op", f.op);
		if (f.detail_key) {
			jw_key(w, f.detail_key);
			jw_u64(w, f.detail);
		}
		kstat_json_times(w, s, "failed", "rm_errors");
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void driver_destroy(void *state)
{
	struct driver_report *r = state;

	kstat_free(&r->calls);
	free(r);
}

GRT_REPORT_SECTION(driver_section) = {
	.name = "driver",
	.summary = "GPU driver calls by device and operation: RM_ALLOC by class, RM_CONTROL by cmd, UVM_* (syscall source)",
	.default_on = true,
	.sources = 1u << GRT_SRC_SYSCALL,
	.order = 61,
	.create = driver_create,
	.on_record = driver_on_record,
	.print_text = driver_print_text,
	.print_json = driver_print_json,
	.destroy = driver_destroy,
};
