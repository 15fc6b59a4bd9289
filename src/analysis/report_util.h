/* Small helpers every report section shares: cuda call fields, name tables, units, thresholds. */
#ifndef GRT_REPORT_UTIL_H
#define GRT_REPORT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analysis/stats.h"
#include "common/json_writer.h"
#include "common/u64_map.h"
#include "trace/grt_reader.h"
#include "trace/records_cuda.h"

/* Default of --top: rows per list in text output. */
#define REPORT_DEFAULT_TOP 20

/*
 * The call header of a cuda record (types 16..46 all start with one), or NULL
 * for other records and for cuda records too short to hold one.
 */
const struct grt_cuda_call *report_cuda_call(const struct grt_record *rec);
/*
 * The call's API time (return - entry); false when it never returned, its
 * return was not sampled, or the times are corrupt.
 */
bool report_call_ns(const struct grt_record *rec, const struct grt_cuda_call *call, uint64_t *ns);
/* A call that returned an error (calls without a recorded return are not errors). */
bool report_call_failed(const struct grt_cuda_call *call);

/* {"count","total","min","max","mean","p50","p90","p99"} of a statistics object. */
void report_json_stats(struct json_writer *w, struct grt_stats *s);
/* "812 B", "1.50 KiB", "3.00 MiB", ... into buf; returns buf. */
const char *report_format_bytes(uint64_t bytes, char *buf, size_t len);
static inline double report_ns_to_us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

/* Largest --threshold number: every section's cast to a 64-bit integer stays defined. */
#define REPORT_THRESHOLD_MAX 1e18

/*
 * Looks key up in a --threshold list ("key=value,key=value"). Returns 1 and
 * sets *value when present, 0 when absent, -EINVAL when the list is malformed
 * or key's value is not a number from 0 to REPORT_THRESHOLD_MAX (sections
 * document their keys' units).
 */
int report_threshold(const char *list, const char *key, double *value);
/* 0 when every item of the list has the KEY=NUMBER shape, else -EINVAL. */
int report_threshold_check(const char *list);

/* Strings interned to dense indices (kernel names and the like), with their text copied. */
struct name_table {
	struct u64_map by_hash;	/* fnv1a -> first index + 1 with that hash */
	char **names;
	uint32_t *next_same_hash; /* index + 1 of the next name with the same hash, 0 ends */
	size_t count, cap;
};

void name_table_init(struct name_table *t);
void name_table_destroy(struct name_table *t);
/* Index of name, adding it when new; -ENOMEM on failure. */
long name_table_intern(struct name_table *t, const char *name);
/* Index of name, -1 when absent. */
long name_table_find(const struct name_table *t, const char *name);

/* pid -> process name, from process records and cuda calls' comm. */
struct pid_comms {
	struct u64_map by_pid;	/* pid -> char * */
	bool out_of_memory;	/* a name could not be kept: some processes print as "?" */
};

void pid_comms_init(struct pid_comms *c);
void pid_comms_destroy(struct pid_comms *c);
/* Feeds a record: process records set the name, cuda calls set it when still unknown. */
void pid_comms_on_record(struct pid_comms *c, const struct grt_record *rec,
			 const struct grt_strings *strings);
/* The name of pid, "?" when unknown. */
const char *pid_comms_get(const struct pid_comms *c, uint32_t pid);

#endif
