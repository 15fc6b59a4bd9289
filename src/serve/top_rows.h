/* grtrace top's rows: per-process rates between two agent snapshots, sorting, plain-text lines. */
#ifndef GRT_SERVE_TOP_ROWS_H
#define GRT_SERVE_TOP_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "serve/agent.h"

struct top_row {
	uint32_t pid;
	char comm[AGG_COMM_LEN + 1];
	double launches_per_s;
	double api_p50_us, api_p99_us; /* every API call that returned in the interval; -1: none */
	uint64_t device_bytes;	       /* CUDA memory in use, pinned host memory left out */
	double copy_gbps;	       /* GB/s copied in the interval, every direction */
	double sync_share;	       /* seconds waited in synchronize calls per second */
	double uvm_faults_per_s;       /* CPU and GPU UVM faults; -1: no UVM tracker on it */
	char busiest[64];	       /* the kernel with the most launches in the interval */
};

enum top_sort {
	TOP_SORT_LAUNCHES, /* 'l' */
	TOP_SORT_P99,	   /* 'p' */
	TOP_SORT_MEMORY,   /* 'm' */
	TOP_SORT_COPY,	   /* 'c' */
	TOP_SORT_SYNC,	   /* 's' */
	TOP_SORT_UVM,	   /* 'u' */
	TOP_SORT_PID,	   /* 'n' */
};

/* The sort a key selects, or -1 for other keys. */
int top_sort_for_key(int key);
const char *top_sort_name(enum top_sort sort);

/*
 * One row per running process of cur, rates over cur - prev (prev may be
 * NULL: the first screen has no rates yet, only memory). Returns how many
 * rows were written to *rows (allocated; free() it), or -ENOMEM.
 */
long top_rows_compute(const struct serve_snapshot *prev, const struct serve_snapshot *cur,
		      struct top_row **rows);
void top_rows_sort(struct top_row *rows, size_t n, enum top_sort sort);

/* Quantile q (0..1) of the log2 histogram (AGG_HIST_BUCKETS) in microseconds; -1 when empty. */
double top_hist_quantile_us(const uint64_t *hist, double q);

/* The column titles and one row, formatted to the same widths. */
void top_format_header(char *buf, size_t len);
void top_format_row(const struct top_row *row, char *buf, size_t len);

#endif
