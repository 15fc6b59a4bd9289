/* Reshaping grtrace's JSON into CSV tables with real columns, for pandas, R and spreadsheets. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/csv_writer.h"
#include "common/json_writer.h"
#include "export/csv_tables.h"

static bool is_table(const struct json_value *v)
{
	if (v->type != JSON_ARRAY)
		return false;
	for (size_t i = 0; i < v->count; i++)
		if (v->items[i].type != JSON_OBJECT)
			return false;
	return true;
}

/* Whether an object has any scalar (or array of scalars) outside its tables. */
static bool has_summary_cells(const struct json_value *v)
{
	for (size_t i = 0; i < v->count; i++) {
		const struct json_value *item = &v->items[i];

		if (item->type == JSON_OBJECT ? has_summary_cells(item) : !is_table(item))
			return true;
	}
	return false;
}

/* Whether an object holds a table anywhere below it. */
static bool has_tables(const struct json_value *v)
{
	for (size_t i = 0; i < v->count; i++)
		if (is_table(&v->items[i]) ||
		    (v->items[i].type == JSON_OBJECT && has_tables(&v->items[i])))
			return true;
	return false;
}

static int add_table(struct csv_tables *set, const char *name, const struct json_value **rows,
		     size_t nrows, bool summary)
{
	struct csv_table *bigger = realloc(set->tables, (set->count + 1) * sizeof(*bigger));

	if (!bigger)
		return -ENOMEM;
	set->tables = bigger;
	bigger[set->count] = (struct csv_table){ .name = strdup(name), .rows = rows,
						 .nrows = nrows, .summary = summary };
	if (!bigger[set->count].name)
		return -ENOMEM;
	set->count++;
	return 0;
}

static char *join_name(const char *a, const char *b)
{
	size_t len = strlen(a) + strlen(b) + 2;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s_%s", a, b);
	return s;
}

static int collect_object_tables(struct csv_tables *set, const struct json_value *v,
				 const char *name)
{
	int err = 0;

	for (size_t i = 0; i < v->count && !err; i++) {
		const struct json_value *item = &v->items[i];
		char *sub;

		if (!is_table(item) && item->type != JSON_OBJECT)
			continue;
		/* the section's main list is named as the section: "jobs", not "jobs_jobs" */
		sub = strcmp(v->keys[i], name) ? join_name(name, v->keys[i]) : strdup(name);
		if (!sub)
			return -ENOMEM;
		if (is_table(item))
			err = csv_tables_collect(set, item, sub);
		else
			err = collect_object_tables(set, item, sub);
		free(sub);
	}
	return err;
}

int csv_tables_collect(struct csv_tables *set, const struct json_value *v, const char *name)
{
	const struct json_value **rows;
	int err;

	if (is_table(v)) {
		rows = calloc(v->count ? v->count : 1, sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		for (size_t i = 0; i < v->count; i++)
			rows[i] = &v->items[i];
		err = add_table(set, name, rows, v->count, false);
		if (err)
			free(rows);
		return err;
	}
	if (v->type != JSON_OBJECT)
		return 0;
	if (has_summary_cells(v)) {
		char *summary = has_tables(v) ? join_name(name, "summary") : strdup(name);

		rows = calloc(1, sizeof(*rows));
		err = rows && summary ? add_table(set, summary, rows, 1, true) : -ENOMEM;
		if (!err)
			rows[0] = v;
		free(summary);
		if (err) {
			free(rows);
			return err;
		}
	}
	return collect_object_tables(set, v, name);
}

/* The cells of one row: called with each (column, value) in order. */
typedef int (*cell_fn)(void *ctx, const char *column, const struct json_value *value);

static int flatten(const struct json_value *v, const char *prefix, bool summary, cell_fn fn,
		   void *ctx)
{
	int err = 0;

	for (size_t i = 0; i < v->count && !err; i++) {
		const struct json_value *item = &v->items[i];
		char *column = prefix ? join_name(prefix, v->keys[i]) : strdup(v->keys[i]);

		if (!column)
			return -ENOMEM;
		if (item->type == JSON_OBJECT)
			err = flatten(item, column, summary, fn, ctx);
		else if (!summary || !is_table(item))
			err = fn(ctx, column, item);
		free(column);
	}
	return err;
}

struct columns {
	char **names;
	size_t count;
	const struct json_value **cells;	/* while writing a row: the value of each column */
};

static long column_index(const struct columns *c, const char *name)
{
	for (size_t i = 0; i < c->count; i++)
		if (!strcmp(c->names[i], name))
			return (long)i;
	return -1;
}

static int add_column(void *ctx, const char *column, const struct json_value *value)
{
	struct columns *c = ctx;
	char **bigger;

	if (column_index(c, column) >= 0)
		return 0;
	bigger = realloc(c->names, (c->count + 1) * sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	c->names = bigger;
	if (!(c->names[c->count] = strdup(column)))
		return -ENOMEM;
	c->count++;
	return 0;
}

static int set_cell(void *ctx, const char *column, const struct json_value *value)
{
	struct columns *c = ctx;
	long i = column_index(c, column);

	if (i >= 0)
		c->cells[i] = value;
	return 0;
}

/* A number back into JSON as it was written (integers exactly, others through a double). */
static void write_json_number(struct json_writer *jw, const char *text)
{
	if (strpbrk(text, ".eE"))
		jw_f64(jw, strtod(text, NULL));
	else if (text[0] == '-')
		jw_i64(jw, strtoll(text, NULL, 10));
	else
		jw_u64(jw, strtoull(text, NULL, 10));
}

static void write_json_text(struct json_writer *jw, const struct json_value *v)
{
	switch (v->type) {
	case JSON_NULL: jw_null(jw); break;
	case JSON_BOOL: jw_bool(jw, v->text[0] == 't'); break;
	case JSON_NUMBER: write_json_number(jw, v->text); break;
	case JSON_STRING: jw_string(jw, v->text); break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		if (v->type == JSON_ARRAY)
			jw_begin_array(jw);
		else
			jw_begin_object(jw);
		for (size_t i = 0; i < v->count; i++) {
			if (v->type == JSON_OBJECT)
				jw_key(jw, v->keys[i]);
			write_json_text(jw, &v->items[i]);
		}
		if (v->type == JSON_ARRAY)
			jw_end_array(jw);
		else
			jw_end_object(jw);
		break;
	}
}

static int write_cell(struct csv_writer *w, const struct json_value *v)
{
	struct json_writer jw;
	size_t len = 0;
	char *text = NULL;
	FILE *mem;

	if (!v || v->type == JSON_NULL) {
		csv_empty(w);
	} else if (v->type == JSON_NUMBER || v->type == JSON_BOOL) {
		csv_raw(w, v->text);
	} else if (v->type == JSON_STRING) {
		csv_string(w, v->text);
	} else {
		mem = open_memstream(&text, &len);
		if (!mem)
			return -ENOMEM;
		jw_init(&jw, mem);
		write_json_text(&jw, v);
		if (fclose(mem) || !text) {
			free(text);
			return -ENOMEM;
		}
		csv_string(w, text);
		free(text);
	}
	return 0;
}

int csv_table_write(const struct csv_table *t, FILE *out)
{
	struct columns c = { 0 };
	struct csv_writer w;
	int err = 0;

	for (size_t r = 0; r < t->nrows && !err; r++)
		err = flatten(t->rows[r], NULL, t->summary, add_column, &c);
	c.cells = err ? NULL : calloc(c.count ? c.count : 1, sizeof(*c.cells));
	if (!err && !c.cells)
		err = -ENOMEM;
	csv_init(&w, out);
	for (size_t i = 0; i < c.count && !err; i++)
		csv_string(&w, c.names[i]);
	if (c.count && !err)
		csv_end_row(&w);
	for (size_t r = 0; r < t->nrows && !err; r++) {
		memset(c.cells, 0, (c.count ? c.count : 1) * sizeof(*c.cells));
		err = flatten(t->rows[r], NULL, t->summary, set_cell, &c);
		for (size_t i = 0; i < c.count && !err; i++)
			err = write_cell(&w, c.cells[i]);
		csv_end_row(&w);
	}
	free(c.cells);
	for (size_t i = 0; i < c.count; i++)
		free(c.names[i]);
	free(c.names);
	return err;
}

const struct csv_table *csv_tables_find(const struct csv_tables *set, const char *name)
{
	for (size_t i = 0; i < set->count; i++)
		if (!strcmp(set->tables[i].name, name))
			return &set->tables[i];
	return NULL;
}

void csv_tables_free(struct csv_tables *set)
{
	for (size_t i = 0; i < set->count; i++) {
		free(set->tables[i].name);
		free((void *)set->tables[i].rows);
	}
	free(set->tables);
	set->tables = NULL;
	set->count = 0;
}
