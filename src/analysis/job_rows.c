/* Per-job rows: the spill file and the CSV/JSON shape of one job. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/job_rows.h"

int job_rows_open(struct job_rows *r)
{
	memset(r, 0, sizeof(*r));
	r->spill = tmpfile();
	return r->spill ? 0 : -errno;
}

void job_rows_close(struct job_rows *r)
{
	if (r->spill)
		fclose(r->spill);
	memset(r, 0, sizeof(*r));
}

void job_rows_add(struct job_rows *r, const struct job *j)
{
	if (!r->spill || r->error)
		return;
	if (fwrite(j, sizeof(*j), 1, r->spill) != 1)
		r->error = -(errno ? errno : EIO);
	else
		r->count++;
}

static const char *const csv_columns =
	"job,group,batch,pid,tid,device,kind,name,stream,api_enter_ns,submit_ns,start_ns,end_ns,"
	"complete_ns,t_submit_host_ns,t_queue_ns,t_exec_ns,t_complete_ns,t_gpu_wait_ns,"
	"t_vm_fault_ns,t_total_ns,t_offcpu_ns,vm_faults,bytes,tags,incomplete,missing,flags";

void job_csv_header(FILE *out)
{
	fprintf(out, "%s\n", csv_columns);
}

/* One CSV line is built in memory and written at once: millions of rows, no printf per cell. */
struct csv_line {
	FILE *out;
	size_t len;
	char text[2048];
};

static void csv_put(struct csv_line *l, const char *s, size_t n)
{
	if (l->len + n > sizeof(l->text)) {
		/* a very long kernel name: the line goes out in pieces */
		fwrite_unlocked(l->text, 1, l->len, l->out);
		l->len = 0;
		if (n > sizeof(l->text)) {
			fwrite_unlocked(s, 1, n, l->out);
			return;
		}
	}
	memcpy(l->text + l->len, s, n);
	l->len += n;
}

static void csv_u64(struct csv_line *l, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	csv_put(l, p, (size_t)(end - p));
}

/* ",v", or an empty cell for what was never seen */
static void csv_opt(struct csv_line *l, int known, uint64_t v)
{
	csv_put(l, ",", 1);
	if (known)
		csv_u64(l, v);
}

static void csv_text(struct csv_line *l, const char *s)
{
	csv_put(l, ",\"", 2);
	for (; s && *s; s++) {
		if (*s == '"')
			csv_put(l, "\"", 1);
		csv_put(l, s, 1);
	}
	csv_put(l, "\"", 1);
}

void job_csv_row(FILE *out, const struct job *j)
{
	char tags[160], missing[160], flags[160], hex[24];
	struct csv_line l = { .out = out, .len = 0 };

	csv_u64(&l, j->id);
	csv_opt(&l, 1, j->group_id);
	csv_opt(&l, 1, j->batch_id);
	csv_opt(&l, 1, j->pid);
	csv_opt(&l, 1, j->tid);
	csv_opt(&l, j->device != JOB_NO_DEVICE, j->device);
	csv_put(&l, ",", 1);
	csv_put(&l, job_kind_name(j->kind), strlen(job_kind_name(j->kind)));
	csv_text(&l, j->name);
	snprintf(hex, sizeof(hex), ",0x%" PRIx64, j->stream);
	csv_put(&l, hex, strlen(hex));
	csv_opt(&l, j->api_enter != 0, j->api_enter);
	csv_opt(&l, j->submit != 0, j->submit);
	csv_opt(&l, j->start != 0, j->start);
	csv_opt(&l, j->end != 0, j->end);
	csv_opt(&l, j->complete != 0, j->complete);
	csv_opt(&l, j->known & JOB_K_SUBMIT_HOST, j->t_submit_host);
	csv_opt(&l, j->known & JOB_K_QUEUE, j->t_queue);
	csv_opt(&l, j->known & JOB_K_EXEC, j->t_exec);
	csv_opt(&l, j->known & JOB_K_COMPLETE, j->t_complete);
	csv_opt(&l, j->known & JOB_K_GPU_WAIT, j->t_gpu_wait);
	csv_opt(&l, 1, j->t_vm_fault);
	csv_opt(&l, j->known & JOB_K_TOTAL, j->t_total);
	csv_opt(&l, 1, j->t_offcpu);
	csv_opt(&l, 1, j->vm_faults);
	csv_opt(&l, 1, j->bytes);
	csv_text(&l, job_tags_text(j, tags, sizeof(tags)));
	csv_opt(&l, 1, (uint64_t)job_incomplete(j));
	csv_text(&l, job_missing_text(j, missing, sizeof(missing)));
	csv_text(&l, job_flags_text(j, flags, sizeof(flags)));
	csv_put(&l, "\n", 1);
	fwrite_unlocked(l.text, 1, l.len, out);
}

static void json_opt(struct json_writer *w, const char *key, int known, uint64_t v)
{
	jw_key(w, key);
	if (known)
		jw_u64(w, v);
	else
		jw_null(w);
}

static void json_names(struct json_writer *w, const char *key, const char *csv)
{
	char part[64];

	jw_key(w, key);
	jw_begin_array(w);
	while (*csv) {
		size_t n = strcspn(csv, ",");

		snprintf(part, sizeof(part), "%.*s", (int)n, csv);
		jw_string(w, part);
		csv += n + (csv[n] == ',');
	}
	jw_end_array(w);
}

void job_json_row(struct json_writer *w, const struct job *j)
{
	char buf[160];

	jw_begin_object(w);
	jw_field_u64(w, "job", j->id);
	jw_field_u64(w, "group", j->group_id);
	jw_field_u64(w, "batch", j->batch_id);
	jw_field_u64(w, "pid", j->pid);
	jw_field_u64(w, "tid", j->tid);
	json_opt(w, "device", j->device != JOB_NO_DEVICE, j->device);
	jw_field_string(w, "kind", job_kind_name(j->kind));
	jw_field_string(w, "name", j->name);
	jw_field_u64(w, "stream", j->stream);
	json_opt(w, "api_enter_ns", j->api_enter != 0, j->api_enter);
	json_opt(w, "submit_ns", j->submit != 0, j->submit);
	json_opt(w, "start_ns", j->start != 0, j->start);
	json_opt(w, "end_ns", j->end != 0, j->end);
	json_opt(w, "complete_ns", j->complete != 0, j->complete);
	json_opt(w, "t_submit_host_ns", j->known & JOB_K_SUBMIT_HOST, j->t_submit_host);
	json_opt(w, "t_queue_ns", j->known & JOB_K_QUEUE, j->t_queue);
	json_opt(w, "t_exec_ns", j->known & JOB_K_EXEC, j->t_exec);
	json_opt(w, "t_complete_ns", j->known & JOB_K_COMPLETE, j->t_complete);
	json_opt(w, "t_gpu_wait_ns", j->known & JOB_K_GPU_WAIT, j->t_gpu_wait);
	json_opt(w, "t_vm_fault_ns", 1, j->t_vm_fault);
	json_opt(w, "t_total_ns", j->known & JOB_K_TOTAL, j->t_total);
	json_opt(w, "t_offcpu_ns", 1, j->t_offcpu);
	jw_field_u64(w, "vm_faults", j->vm_faults);
	if (j->bytes) {
		jw_field_u64(w, "bytes", j->bytes);
	}
	json_names(w, "tags", job_tags_text(j, buf, sizeof(buf)));
	jw_key(w, "incomplete");
	jw_bool(w, job_incomplete(j));
	json_names(w, "missing", job_missing_text(j, buf, sizeof(buf)));
	json_names(w, "flags", job_flags_text(j, buf, sizeof(buf)));
	jw_end_object(w);
}

/* Calls row() for every spilled job. */
static int replay(struct job_rows *r, void (*row)(void *ctx, const struct job *j), void *ctx)
{
	struct job j;

	if (r->error)
		return r->error;
	if (!r->spill)
		return 0;
	if (fflush(r->spill) || fseek(r->spill, 0, SEEK_SET))
		return -errno;
	for (uint64_t i = 0; i < r->count; i++) {
		if (fread(&j, sizeof(j), 1, r->spill) != 1)
			return -EIO;
		row(ctx, &j);
	}
	return 0;
}

static void csv_row_cb(void *ctx, const struct job *j)
{
	job_csv_row(ctx, j);
}

static void json_row_cb(void *ctx, const struct job *j)
{
	job_json_row(ctx, j);
}

int job_rows_print_csv(struct job_rows *r, FILE *out)
{
	job_csv_header(out);
	return replay(r, csv_row_cb, out);
}

#define ROWS_BUFFER (1u << 20)

int job_rows_print_json(struct job_rows *r, struct json_writer *w)
{
	char *buf = w->buf ? NULL : malloc(ROWS_BUFFER); /* millions of rows: write in large pieces */
	int err;

	if (buf)
		jw_set_buffer(w, buf, ROWS_BUFFER);
	jw_begin_array(w);
	err = replay(r, json_row_cb, w);
	jw_end_array(w);
	if (buf) {
		jw_set_buffer(w, NULL, 0);
		free(buf);
	}
	return err;
}
