/* JSON reshaped into CSV tables: every array of objects a table, every scalar a column. */
#ifndef GRT_CSV_TABLES_H
#define GRT_CSV_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "common/json_value.h"

struct csv_table {
	char *name;
	const struct json_value **rows;	/* objects, one per row */
	size_t nrows;
	bool summary;	/* the one row of an object's own scalars (its arrays are tables of their own) */
};

struct csv_tables {
	struct csv_table *tables;
	size_t count;
};

/*
 * Adds the tables of v under name: an array of objects (or an empty array)
 * is the table `name`; an object's scalars are the one-row table `name`
 * and each of its arrays of objects the table `name_KEY`, recursively.
 * Within a row, nested objects become columns `KEY_SUBKEY` and arrays one
 * cell holding their JSON text. Returns 0 or -ENOMEM.
 */
int csv_tables_collect(struct csv_tables *set, const struct json_value *v, const char *name);
/*
 * Writes one table: the header (every key any row has, in order of first
 * appearance), then the rows. Returns 0 or -ENOMEM (the output is then cut).
 */
int csv_table_write(const struct csv_table *t, FILE *out);
const struct csv_table *csv_tables_find(const struct csv_tables *set, const char *name);
void csv_tables_free(struct csv_tables *set);

#endif
