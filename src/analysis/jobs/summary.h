/* Folding finished jobs into per-kernel, per-stream, per-process and per-tag summaries. */
#ifndef GRT_JOB_SUMMARY_H
#define GRT_JOB_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "analysis/jobs/interval_union.h"
#include "analysis/jobs/job.h"
#include "analysis/stats.h"
#include "common/json_writer.h"
#include "common/u64_map.h"

/* One row of a summary table: every job of one kernel, stream or process. */
struct job_group {
	uint64_t key;
	const char *name;	/* kernel name; NULL for streams and processes */
	uint32_t pid;
	uint64_t stream;
	uint32_t stream_index;
	uint64_t jobs;
	uint64_t incomplete;
	uint64_t exec_ns;	/* sum of t_exec */
	uint64_t tagged[JOB_TAG_COUNT];
	struct grt_stats exec;
	struct grt_stats total;
	struct grt_stats queue;
};

struct job_group_table {
	struct u64_map index;	/* key -> slot + 1 */
	struct job_group *rows;
	uint32_t count;
	uint32_t cap;
	bool sort_failed;	/* a printed table was left out for want of memory */
};

struct tag_summary {
	uint64_t jobs;
	uint64_t cost_ns;	/* job_tag_cost summed over jobs: overlapping jobs count twice */
	uint64_t total_ns;	/* t_total of the tagged jobs */
	struct interval_union wall; /* job_tag_interval of the tagged jobs, overlaps once */
	uint64_t wall_ns;	/* its length, once finished */
};

struct job_summary {
	unsigned top_n;
	uint64_t jobs;
	uint64_t incomplete;
	uint64_t missing[8];	/* per enum job_missing bit; a job may count under several */
	uint64_t first_missing[8]; /* per bit, each incomplete job under its first missing step */
	uint64_t failed;
	uint64_t forced;
	uint64_t tail_unchecked;
	uint64_t graph_nodes;
	uint64_t alloc_failures;	/* jobs left out of a table for want of memory */
	uint64_t exec_ns;
	uint64_t total_ns;
	uint64_t first_enter;	/* the jobs' span on the wall clock: first API_ENTER... */
	uint64_t last_finish;	/* ... to the last COMPLETE (or END) */
	bool finished;
	struct tag_summary tags[JOB_TAG_COUNT];
	struct job_group_table kernels;
	struct job_group_table streams;
	struct job_group_table procs;
	struct job *worst;	/* top_n by job_slow_ns, worst first */
	uint32_t n_worst;
};

int job_summary_init(struct job_summary *s, unsigned top_n);
void job_summary_destroy(struct job_summary *s);
void job_summary_add(struct job_summary *s, const struct job *j);
/* No job added from now on has its API_ENTER before point: tag time before it is merged. */
void job_summary_settle(struct job_summary *s, uint64_t point);
/* Every job is in: the tags' wall times are final. Once; later calls do nothing. */
void job_summary_finish(struct job_summary *s);
/* Whether every job made it into every table and tag time (false: memory ran out). */
bool job_summary_complete(const struct job_summary *s);
/* The jobs' span on the wall clock (first API_ENTER to last COMPLETE or END), 0 when none. */
uint64_t job_summary_span(const struct job_summary *s);
/*
 * What slowed a job down, as the worst-jobs list ranks it: submit + queue +
 * execution (its API_ENTER to END), not the time until the host noticed it
 * (t_complete, shown apart): a program that syncs once at the end makes every
 * job's t_total long.
 */
uint64_t job_slow_ns(const struct job *j);

/* Rows of a table sorted by exec_ns, most first (an array the caller frees). */
struct job_group **job_group_sorted(struct job_group_table *t);

/* "1.50 ms", "812 us", "95 ns" */
const char *job_format_ns(uint64_t ns, char *buf, size_t len);

void job_summary_print_text(struct job_summary *s, FILE *out, unsigned rows);
void job_summary_print_json(struct job_summary *s, struct json_writer *w);

#endif
