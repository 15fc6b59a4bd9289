/* The report pass: stream the trace once through every selected section, then print them in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "analysis/report.h"
#include "analysis/own_work.h"
#include "analysis/report_header.h"
#include "analysis/report_util.h"
#include "common/log.h"
#include "common/json_value.h"
#include "common/text_escape.h"
#include "export/csv_tables.h"
#include "trace/trace_names.h"
#include "trace/records_core.h"

struct running_section {
	const struct report_section *section;
	void *state;
};

static int compare_order(const void *a, const void *b)
{
	const struct running_section *x = a, *y = b;

	if (x->section->order != y->section->order)
		return x->section->order < y->section->order ? -1 : 1;
	return strcmp(x->section->name, y->section->name);
}

static void destroy_sections(struct running_section *run, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (run[i].state)
			run[i].section->destroy(run[i].state);
	free(run);
}

/* The one error line for a section that could not be created; returns the exit code. */
static int section_failed(const struct report_section *s, const struct report_options *opt,
			  const char *why, int err)
{
	if (why[0])
		grt_error("report: %s: %s", s->name, why);
	else if (err == EINVAL)
		grt_error("report: bad --threshold '%s' for the %s section: give KEY=VALUE, each "
			  "number from 0 to %g", opt->thresholds ? opt->thresholds : "", s->name,
			  REPORT_THRESHOLD_MAX);
	else
		grt_error("report: cannot set up the %s section: %s", s->name,
			  strerror(err ? err : ENOMEM));
	return err == EINVAL ? GRT_EXIT_USAGE : GRT_EXIT_FAILURE;
}

/*
 * Creates the selected sections, leaving out default ones about sources the
 * trace did not record; *count says how many run. On failure prints the one
 * error line and returns an exit code.
 */
static int create_sections(const char *path, const struct report_options *opt,
			   const struct grt_file_header *header, struct running_section **out,
			   size_t *count)
{
	char why[256] = "";
	struct report_input in = {
		.header = header, .top_n = opt->top_n, .thresholds = opt->thresholds, .json = opt->json,
		.csv = opt->csv, .show_own = opt->show_own, .path = path, .error = why,
		.error_len = sizeof(why),
	};
	struct running_section *run = calloc(opt->nsections ? opt->nsections : 1, sizeof(*run));
	size_t n = 0;

	if (!run) {
		grt_error("out of memory");
		return GRT_EXIT_FAILURE;
	}
	for (size_t k = 0; k < opt->nsections; k++) {
		const struct report_section *s = opt->sections[k];

		if (!opt->chosen && s->sources && !(s->sources & header->sources_mask))
			continue;
		errno = 0;
		run[n].section = s;
		run[n].state = s->create(&in);
		if (!run[n].state) {
			int rc = section_failed(s, opt, why, errno);

			destroy_sections(run, n);
			return rc;
		}
		n++;
	}
	qsort(run, n, sizeof(*run), compare_order);
	*out = run;
	*count = n;
	return GRT_EXIT_OK;
}

/*
 * Text and CSV reach terminals: every string the traced program chose
 * (kernel names, comm, paths, messages) is shown escaped, as parse shows it.
 * The sections see the escaped table instead of the reader's, so no section
 * has to remember; JSON escapes by itself and gets the text as recorded.
 */
struct shown_strings {
	struct grt_strings *escaped;	/* NULL for JSON */
	char *buf;
	size_t cap;
};

static int show_string(struct shown_strings *shown, const struct grt_record *rec)
{
	const struct grt_string_rec *s = rec->payload;
	size_t need = text_escape(NULL, 0, s->text, false) + 1;

	if (need > shown->cap) {
		char *bigger = realloc(shown->buf, need);

		if (!bigger)
			return -ENOMEM;
		shown->buf = bigger;
		shown->cap = need;
	}
	text_escape(shown->buf, shown->cap, s->text, false);
	return grt_strings_set(shown->escaped, s->id, shown->buf);
}

/* The file header with its texts escaped the same way (cut to their fields' sizes). */
static void escape_header(struct grt_file_header *h)
{
	char buf[sizeof(h->command_line)];

#define ESCAPE_FIELD(f)                                                                            	do {                                                                                       		text_escape(buf, sizeof(h->f), h->f, false);                                       		memcpy(h->f, buf, sizeof(h->f));                                                   	} while (0)
	ESCAPE_FIELD(hostname);
	ESCAPE_FIELD(kernel_release);
	ESCAPE_FIELD(driver_version);
	ESCAPE_FIELD(cuda_version);
	ESCAPE_FIELD(command_line);
#undef ESCAPE_FIELD
}

/*
 * Returns the reader's status at the end: GRT_READ_END or GRT_READ_ERROR.
 * grtrace's own records reach only the sections that keep them apart
 * themselves, unless --own asked to see them as the program's.
 */
static enum grt_read_status stream_records(struct grt_reader *r, struct report_header *header,
					   struct running_section *run, size_t n,
					   struct shown_strings *shown, bool show_own)
{
	const struct grt_strings *strings = shown->escaped ? shown->escaped : grt_reader_strings(r);
	struct grt_record rec;
	struct own_work own;
	enum grt_read_status st;

	own_work_init(&own);
	while ((st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		bool hide;

		if (shown->escaped && rec.hdr.type == GRT_REC_STRING && show_string(shown, &rec)) {
			st = GRT_READ_ERROR;
			break;
		}
		hide = own_work_record(&own, &rec, strings) && !show_own;
		report_header_on_record(header, &rec, strings);
		for (size_t i = 0; i < n; i++)
			if (!hide || run[i].section->sees_own)
				run[i].section->on_record(run[i].state, &rec, strings);
	}
	header->own_records = own.records;
	header->own_shown = show_own;
	own_work_destroy(&own);
	return st;
}

/*
 * Whether a section's sources ran; when none did, why (the trace's status
 * records say it): a section must not report "nothing happened" about what
 * was never watched. NULL when the section is about what was recorded.
 */
static const char *not_recorded(const struct report_header *h, const struct report_section *s,
				char *why, size_t len)
{
	size_t used = 0;

	if (!s->sources)
		return NULL;
	why[0] = 0;
	for (int i = 0; i < GRT_SRC_MAX; i++) {
		const char *name = grt_source_name((uint32_t)i);

		if (!(s->sources & 1u << i))
			continue;
		if (h->status_seen[i] ? h->status[i] == 0 : (h->file->sources_mask & 1u << i) != 0)
			return NULL;
		if (used >= len)
			continue;
		if (h->status_seen[i])
			used += (size_t)snprintf(why + used, len - used, "%ssource %s was skipped: %s",
						 used ? "; " : "", name,
						 h->status_message[i] ? h->status_message[i]
								      : "no reason recorded");
		else
			used += (size_t)snprintf(why + used, len - used,
						 "%ssource %s was not asked for (record with -s %s)",
						 used ? "; " : "", name, name);
	}
	return why[0] ? why : NULL;
}

static void print_text(const struct report_header *header, struct running_section *run, size_t n,
		       FILE *out)
{
	char why[512];

	report_header_print_text(header, out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "\n== %s ==\n", run[i].section->name);
		if (not_recorded(header, run[i].section, why, sizeof(why)))
			fprintf(out, "  not recorded: %s\n", why);
		else
			run[i].section->print_text(run[i].state, out);
	}
}

/* A section's JSON value, or {"recorded": false, "why": ...} when its sources did not run. */
static void print_section_json(const struct report_header *header, struct running_section *run,
			       struct json_writer *w)
{
	char why[512];

	if (not_recorded(header, run->section, why, sizeof(why))) {
		jw_begin_object(w);
		jw_key(w, "recorded");
		jw_bool(w, false);
		jw_field_string(w, "why", why);
		jw_end_object(w);
	} else {
		run->section->print_json(run->state, w);
	}
}

static void print_json(const struct report_header *header, struct running_section *run, size_t n,
		       FILE *out)
{
	struct json_writer w;

	jw_init(&w, out);
	jw_begin_object(&w);
	jw_key(&w, "trace");
	report_header_print_json(header, &w);
	for (size_t i = 0; i < n; i++) {
		jw_key(&w, run[i].section->name);
		print_section_json(header, &run[i], &w);
	}
	jw_end_object(&w);
	jw_newline(&w);
}

/* The JSON of the selected sections, parsed back: the tables come from it. */
static struct json_value *sections_json(const struct report_header *header,
					struct running_section *run, size_t n)
{
	struct json_value *v = NULL;
	struct json_writer w;
	size_t len = 0;
	char *text = NULL;
	FILE *mem = open_memstream(&text, &len);
	char why[512];

	if (!mem)
		return NULL;
	jw_init(&w, mem);
	jw_begin_object(&w);
	for (size_t i = 0; i < n; i++) {
		/* a section that recorded nothing has no table; say so instead of an empty one */
		if (not_recorded(header, run[i].section, why, sizeof(why))) {
			grt_notice("report: %s: not recorded: %s", run[i].section->name, why);
			continue;
		}
		jw_key(&w, run[i].section->name);
		run[i].section->print_json(run[i].state, &w);
	}
	jw_end_object(&w);
	if (!fclose(mem))
		v = json_value_parse(text, len);
	free(text);
	return v;
}

static int write_table_file(const char *dir, const struct csv_table *t)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.csv", dir, t->name);
	f = fopen(path, "we");
	if (!f) {
		grt_error("report: cannot create %s: %s; give -o a writable directory", path,
			  strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	if (csv_table_write(t, f)) {
		fclose(f);
		grt_error("out of memory");
		return GRT_EXIT_FAILURE;
	}
	if (fclose(f)) {
		grt_error("report: writing %s failed: %s", path, strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	return GRT_EXIT_OK;
}

static void list_tables(const struct csv_tables *set, char *out, size_t len)
{
	size_t used = 0;

	out[0] = 0;
	for (size_t i = 0; i < set->count && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "",
					 set->tables[i].name);
}

/* Every table to its own file under dir (created when missing). */
static int write_table_dir(const char *dir, const struct csv_tables *set)
{
	int rc = GRT_EXIT_OK;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		grt_error("report: cannot create the directory %s: %s; give -o a writable directory",
			  dir, strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	for (size_t i = 0; i < set->count && rc == GRT_EXIT_OK; i++)
		rc = write_table_file(dir, &set->tables[i]);
	return rc;
}

static bool is_directory(const char *path)
{
	struct stat st;

	return path && !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * CSV is one table per output, so pandas reads it as it is: a single table
 * goes to out (or -o FILE), several need -o DIR (a file each) or --table.
 */
static int print_csv(const struct report_header *header, struct running_section *run, size_t n,
		     const struct report_options *opt, FILE *out)
{
	struct json_value *v = sections_json(header, run, n);
	struct csv_tables set = { 0 };
	const struct csv_table *one = NULL;
	bool to_stdout = !opt->csv_path || !strcmp(opt->csv_path, "-");
	char names[1024];
	int rc = GRT_EXIT_OK;

	if (!v) {
		grt_error("out of memory");
		return GRT_EXIT_FAILURE;
	}
	for (size_t i = 0; i < v->count && rc == GRT_EXIT_OK; i++)
		if (csv_tables_collect(&set, &v->items[i], v->keys[i])) {
			grt_error("out of memory");
			rc = GRT_EXIT_FAILURE;
		}
	list_tables(&set, names, sizeof(names));
	if (rc != GRT_EXIT_OK) {
		/* the error is printed */
	} else if (opt->csv_table && !(one = csv_tables_find(&set, opt->csv_table))) {
		grt_error("report: no table '%s' in the selected sections; they have: %s",
			  opt->csv_table, set.count ? names : "none");
		rc = GRT_EXIT_USAGE;
	} else if (!one && set.count == 1 && !is_directory(opt->csv_path)) {
		one = &set.tables[0];
	} else if (!one && !to_stdout) {
		rc = write_table_dir(opt->csv_path, &set);
	} else if (!one) {
		grt_error("report: --format csv writes one table per output and %s; name one with "
			  "--table NAME, or give -o DIR for a file per table",
			  set.count ? "the selected sections have several" : "the selected sections have none");
		if (set.count)
			grt_notice("report: tables: %s", names);
		rc = GRT_EXIT_USAGE;
	}
	if (one && to_stdout) {
		if (csv_table_write(one, out)) {
			grt_error("out of memory");
			rc = GRT_EXIT_FAILURE;
		}
	} else if (one) {
		FILE *f = is_directory(opt->csv_path) ? NULL : fopen(opt->csv_path, "we");

		if (is_directory(opt->csv_path)) {
			rc = write_table_file(opt->csv_path, one);
		} else if (!f) {
			grt_error("report: cannot create %s: %s", opt->csv_path, strerror(errno));
			rc = GRT_EXIT_FAILURE;
		} else if (csv_table_write(one, f)) {
			fclose(f);
			grt_error("out of memory");
			rc = GRT_EXIT_FAILURE;
		} else {
			if (fclose(f)) {
				grt_error("report: writing %s failed: %s", opt->csv_path, strerror(errno));
				rc = GRT_EXIT_FAILURE;
			}
		}
	}
	csv_tables_free(&set);
	json_value_free(v);
	return rc;
}

int report_run(const char *path, const struct report_options *opt, FILE *out)
{
	char err[256];
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));
	const char *named = opt->shown_path ? opt->shown_path : path;
	struct running_section *run = NULL;
	struct shown_strings shown = { 0 };
	struct grt_file_header file;
	struct report_header header;
	size_t nrun = 0;
	int rc;

	if (!r) {
		grt_error("%s: %s", named, err);
		return GRT_EXIT_FAILURE;
	}
	file = *grt_reader_header(r);
	if (!opt->json) {
		escape_header(&file);
		shown.escaped = grt_strings_new();
		if (!shown.escaped) {
			grt_reader_close(r);
			grt_error("out of memory");
			return GRT_EXIT_FAILURE;
		}
	}
	rc = create_sections(path, opt, &file, &run, &nrun);
	if (rc != GRT_EXIT_OK) {
		grt_strings_free(shown.escaped);
		grt_reader_close(r);
		return rc;
	}
	report_header_init(&header, named, &file);
	if (stream_records(r, &header, run, nrun, &shown, opt->show_own) == GRT_READ_ERROR)
		header.read_error = grt_reader_error(r)[0] ? grt_reader_error(r) : "out of memory";
	header.damage = grt_reader_damage(r);
	header.blocks_verified = grt_reader_blocks_verified(r);
	if (opt->csv)
		rc = print_csv(&header, run, nrun, opt, out);
	else if (opt->json)
		print_json(&header, run, nrun, out);
	else
		print_text(&header, run, nrun, out);
	fflush(out);
	for (size_t i = 0; i < nrun; i++) {
		const char *why = run[i].section->incomplete ? run[i].section->incomplete(run[i].state)
							     : NULL;

		if (why) {
			grt_error("report: the %s section is incomplete: %s", run[i].section->name, why);
			rc = GRT_EXIT_FAILURE;
		}
	}
	if (header.read_error) {
		grt_error("%s: %s", named, header.read_error);
		rc = GRT_EXIT_FAILURE;
	} else if (header.damage) {
		/* the report is still printed: what could be read is shown, the damage named */
		grt_error("%s: damaged trace: %s", named, header.damage);
		rc = GRT_EXIT_FAILURE;
	}
	report_header_destroy(&header);
	destroy_sections(run, nrun);
	grt_strings_free(shown.escaped);
	free(shown.buf);
	grt_reader_close(r);
	return rc;
}
