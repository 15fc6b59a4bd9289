/* Keyed count/time statistics and duration percentiles for the kernel-source report sections. */
#ifndef GRT_KERNEL_STATS_H
#define GRT_KERNEL_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "common/json_writer.h"
#include "common/u64_map.h"

struct kstat {
	uint64_t key;
	uint64_t count;
	uint64_t total_ns;
	uint64_t max_ns;
	uint64_t errors;
	uint64_t aux;		/* a second total, the section's own meaning */
};

/* Rows by 64-bit key; rows[] keeps insertion order until kstat_sort(). */
struct kstat_table {
	struct u64_map index;	/* key -> row */
	struct kstat *rows;
	size_t count, cap;
};

void kstat_init(struct kstat_table *t);
void kstat_free(struct kstat_table *t);
/* The row of key, created empty on first use; NULL when out of memory. */
struct kstat *kstat_get(struct kstat_table *t, uint64_t key);
void kstat_add(struct kstat *s, uint64_t ns, bool error);
/* Orders rows by total time, then count, then key (largest first); lookups stop working after. */
void kstat_sort(struct kstat_table *t);
/*
 * A row's "count", "total_ns", "max_ns", then errors and aux under the section's own names,
 * into the JSON object the caller has open.
 */
void kstat_json_times(struct json_writer *w, const struct kstat *s, const char *errors_key,
		      const char *aux_key);

/* A growing list of durations, for percentiles. */
struct duration_list {
	uint64_t *v;
	size_t n, cap;
};

int duration_list_push(struct duration_list *d, uint64_t ns);
/* The p-th percentile (0..100, nearest rank) after sorting in place; 0 when empty. */
uint64_t duration_list_percentile(struct duration_list *d, double p);
void duration_list_free(struct duration_list *d);

/* The row limit of text tables: --top N, where 0 means every row. */
static inline size_t kstat_text_rows(unsigned top_n)
{
	return top_n ? top_n : SIZE_MAX;
}
/* The closing "... N more" line of a text table that --top cut at rows of count. */
void kstat_text_more(FILE *out, size_t count, size_t rows);

/* Process names from the trace's process records (the last one seen per pid). */
struct grt_record;
struct grt_strings;

struct comm_table {
	struct u64_map index;	/* pid -> slot */
	char (*names)[32];
	size_t n, cap;
};

void comm_table_init(struct comm_table *c);
void comm_table_free(struct comm_table *c);
/* Takes the name from a process record; other records are ignored. */
void comm_table_note(struct comm_table *c, const struct grt_record *rec, const struct grt_strings *strings);
/* The name of pid, or "-" when the trace never named it. */
const char *comm_table_get(const struct comm_table *c, uint32_t pid);

#endif
