/* One CSV table per record type: columns learnt in a first pass, rows written in a second. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common/csv_writer.h"
#include "common/text_escape.h"
#include "export/event_csv.h"
#include "trace/record_desc.h"

/* The record header's columns, before the fields of each type. */
static const char *const fixed_columns[] = { "ts_ns", "type", "cpu", "pid", "tid", "seq" };
#define NFIXED (sizeof(fixed_columns) / sizeof(fixed_columns[0]))

struct type_table {
	uint16_t type;
	char **columns;		/* the fields' columns, after the fixed ones */
	size_t ncolumns;
	char **cells;		/* while writing a row: each column's text, or NULL */
	FILE *file;		/* with a directory: this type's file */
	bool header_done;
};

struct event_csv {
	struct grt_fields fields;	/* first: describe() gets &c->fields */
	FILE *out;
	const char *dir;
	struct type_table *tables;
	size_t ntables;
	struct type_table *current;	/* the record being learnt or written */
	int error;
	char failed_path[4096];
};

static struct event_csv *csv_of(struct grt_fields *f)
{
	return (struct event_csv *)f;
}

static long column_of(const struct type_table *t, const char *key)
{
	for (size_t i = 0; i < t->ncolumns; i++)
		if (!strcmp(t->columns[i], key))
			return (long)i;
	return -1;
}

/* Learning: a column per key (dim3 fields are three). */
static void learn_key(struct grt_fields *f, const char *key)
{
	struct event_csv *c = csv_of(f);
	struct type_table *t = c->current;
	char **bigger;

	if (column_of(t, key) >= 0)
		return;
	bigger = realloc(t->columns, (t->ncolumns + 1) * sizeof(*bigger));
	if (!bigger || !(bigger[t->ncolumns] = strdup(key))) {
		if (bigger)
			t->columns = bigger;
		c->error = -ENOMEM;
		return;
	}
	t->columns = bigger;
	t->ncolumns++;
}

/* Writing: the cell of a key, its text formatted here. */
static void set_cell(struct grt_fields *f, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_cell(struct grt_fields *f, const char *key, const char *fmt, ...)
{
	struct event_csv *c = csv_of(f);
	long i = column_of(c->current, key);
	va_list ap;

	if (i < 0)
		return;
	free(c->current->cells[i]);
	va_start(ap, fmt);
	if (vasprintf(&c->current->cells[i], fmt, ap) < 0) {
		c->current->cells[i] = NULL;
		c->error = -ENOMEM;
	}
	va_end(ap);
}

static bool learning(struct grt_fields *f)
{
	return !csv_of(f)->current->cells;
}

static void f_u64(struct grt_fields *f, const char *k, uint64_t v)
{
	if (learning(f))
		learn_key(f, k);
	else
		set_cell(f, k, "%" PRIu64, v);
}

static void f_i64(struct grt_fields *f, const char *k, int64_t v)
{
	if (learning(f))
		learn_key(f, k);
	else
		set_cell(f, k, "%" PRId64, v);
}

static void f_f64(struct grt_fields *f, const char *k, double v)
{
	char text[32];

	if (learning(f)) {
		learn_key(f, k);
		return;
	}
	csv_format_f64(text, sizeof(text), v);
	set_cell(f, k, "%s", text);
}

/* Text the traced program chose is escaped as everywhere else: a CSV may reach a terminal. */
static void f_str(struct grt_fields *f, const char *k, const char *s)
{
	char *escaped;
	size_t need;

	if (learning(f)) {
		learn_key(f, k);
		return;
	}
	if (!s)
		return;
	need = text_escape(NULL, 0, s, false) + 1;
	escaped = malloc(need);
	if (!escaped) {
		csv_of(f)->error = -ENOMEM;
		return;
	}
	text_escape(escaped, need, s, false);
	set_cell(f, k, "%s", escaped);
	free(escaped);
}

/* grid=(4,2,1) is three columns, grid_x, grid_y and grid_z. */
static void f_dim3(struct grt_fields *f, const char *k, const uint32_t v[3])
{
	static const char axis[3] = { 'x', 'y', 'z' };
	char key[64];

	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "%s_%c", k, axis[i]);
		if (learning(f))
			learn_key(f, key);
		else
			set_cell(f, key, "%u", v[i]);
	}
}

/* A list in one cell, as JSON: [1,2,3]. */
static void f_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	if (learning(f)) {
		learn_key(f, k);
		return;
	}
	mem = open_memstream(&text, &len);
	if (!mem) {
		csv_of(f)->error = -ENOMEM;
		return;
	}
	fputc('[', mem);
	for (uint32_t i = 0; i < n; i++)
		fprintf(mem, "%s%" PRIu64, i ? "," : "", v[i]);
	fputc(']', mem);
	fclose(mem);
	set_cell(f, k, "%s", text ? text : "");
	free(text);
}

static const struct grt_fields_ops csv_ops = {
	.u64 = f_u64, .i64 = f_i64, .hex = f_u64, .f64 = f_f64,
	.str = f_str, .dim3 = f_dim3, .hex_list = f_list,
};

struct event_csv *event_csv_new(FILE *out, const char *dir)
{
	struct event_csv *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fields.ops = &csv_ops;
	c->out = out;
	c->dir = dir;
	return c;
}

static struct type_table *table_of(struct event_csv *c, uint16_t type)
{
	struct type_table *bigger;

	for (size_t i = 0; i < c->ntables; i++)
		if (c->tables[i].type == type)
			return &c->tables[i];
	bigger = realloc(c->tables, (c->ntables + 1) * sizeof(*bigger));
	if (!bigger)
		return NULL;
	c->tables = bigger;
	bigger[c->ntables] = (struct type_table){ .type = type };
	return &bigger[c->ntables++];
}

int event_csv_learn(struct event_csv *c, const struct grt_record *rec)
{
	const struct grt_record_desc *desc = grt_record_desc_find(rec->hdr.type);

	c->current = table_of(c, rec->hdr.type);
	if (!c->current)
		return -ENOMEM;
	/* the strings are not needed to learn keys: every string field names its key anyway */
	if (desc)
		desc->describe(rec, NULL, &c->fields);
	return c->error;
}

static const char *type_name(uint16_t type, char *buf, size_t len)
{
	const struct grt_record_desc *desc = grt_record_desc_find(type);

	if (desc)
		return desc->name;
	snprintf(buf, len, "type%u", type);
	return buf;
}

static FILE *table_file(struct event_csv *c, struct type_table *t)
{
	char name[16];

	if (!c->dir)
		return c->out;
	if (t->file)
		return t->file;
	snprintf(c->failed_path, sizeof(c->failed_path), "%s/%s.csv", c->dir,
		 type_name(t->type, name, sizeof(name)));
	t->file = fopen(c->failed_path, "we");
	return t->file;
}

int event_csv_write(struct event_csv *c, const struct grt_record *rec,
		    const struct grt_strings *strings)
{
	const struct grt_record_desc *desc = grt_record_desc_find(rec->hdr.type);
	struct type_table *t = table_of(c, rec->hdr.type);
	struct csv_writer w;
	char name[16];
	FILE *out;

	if (!t)
		return -ENOMEM;
	out = table_file(c, t);
	if (!out)
		return -errno;
	csv_init(&w, out);
	if (!t->header_done) {
		for (size_t i = 0; i < NFIXED; i++)
			csv_string(&w, fixed_columns[i]);
		for (size_t i = 0; i < t->ncolumns; i++)
			csv_string(&w, t->columns[i]);
		csv_end_row(&w);
		t->header_done = true;
	}
	t->cells = calloc(t->ncolumns + 1, sizeof(*t->cells));
	if (!t->cells)
		return -ENOMEM;
	c->current = t;
	if (desc)
		desc->describe(rec, strings, &c->fields);
	csv_u64(&w, rec->hdr.ts_ns);
	csv_string(&w, type_name(rec->hdr.type, name, sizeof(name)));
	csv_u64(&w, rec->hdr.cpu);
	csv_u64(&w, rec->hdr.pid);
	csv_u64(&w, rec->hdr.tid);
	csv_u64(&w, rec->hdr.seq);
	for (size_t i = 0; i < t->ncolumns; i++) {
		csv_string(&w, t->cells[i]);
		free(t->cells[i]);
	}
	csv_end_row(&w);
	free(t->cells);
	t->cells = NULL;
	return c->error;
}

const char *event_csv_failed_path(const struct event_csv *c)
{
	return c->failed_path;
}

int event_csv_free(struct event_csv *c)
{
	int err = 0;

	if (!c)
		return 0;
	for (size_t i = 0; i < c->ntables; i++) {
		struct type_table *t = &c->tables[i];

		if (t->file && fclose(t->file) && !err)
			err = -errno;
		for (size_t k = 0; k < t->ncolumns; k++)
			free(t->columns[k]);
		free(t->columns);
	}
	free(c->tables);
	free(c);
	return err;
}
