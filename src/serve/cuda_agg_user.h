/* The aggregation BPF object from user space: load, probe libcuda files, read and drop counters. */
#ifndef GRT_CUDA_AGG_USER_H
#define GRT_CUDA_AGG_USER_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "serve/cuda_agg.h"

struct cuda_agg;

/* Called for each rare event (struct agg_event) the probes send. */
typedef void (*cuda_agg_event_fn)(void *ctx, const struct agg_event *ev);

/*
 * Loads the programs. pid_map_fd: the shared pid filter (a BPF hash tgid ->
 * u8) when only some processes are counted, -1 for all. Returns 0 or a
 * negative errno with one line in why.
 */
int cuda_agg_open(struct cuda_agg **out, int pid_map_fd, cuda_agg_event_fn on_event, void *ctx,
		  char *why, size_t why_len);
void cuda_agg_close(struct cuda_agg *a);

/*
 * Probes every listed entry point of the libcuda file at open_path (one
 * attach covers every process mapping that file). A file already probed is
 * a no-op. Returns 0 or a negative errno with one line in why.
 */
int cuda_agg_probe_library(struct cuda_agg *a, const char *open_path, const char *shown_path,
			   char *why, size_t why_len);
unsigned cuda_agg_libraries(const struct cuda_agg *a);

/* The ring buffer's fd for epoll, and handing its pending events to on_event. */
int cuda_agg_events_fd(const struct cuda_agg *a);
void cuda_agg_consume(struct cuda_agg *a);

/* One map read in full: n entries of key_size + value_size bytes, keys and values apart. */
struct agg_table {
	void *keys;
	void *values;
	size_t n, cap;
	size_t key_size, value_size;
};

void agg_table_free(struct agg_table *t);

enum cuda_agg_map {
	CUDA_AGG_PROCS,	   /* __u32 tgid -> struct agg_proc_stats */
	CUDA_AGG_APIS,	   /* struct agg_api_key -> struct agg_api_stats */
	CUDA_AGG_LAUNCHES, /* struct agg_launch_key -> __u64 */
	CUDA_AGG_ALLOCS,   /* struct agg_alloc_key -> struct agg_alloc */
	CUDA_AGG_MAPS,
};

/* Reads a whole map into t (reusing its memory). Returns 0 or a negative errno. */
int cuda_agg_read(struct cuda_agg *a, enum cuda_agg_map which, struct agg_table *t);
/* Deletes the entries of t (as read) whose tgid (the key's first u32) is_gone says. */
void cuda_agg_delete(struct cuda_agg *a, enum cuda_agg_map which, const struct agg_table *t,
		     bool (*is_gone)(void *ctx, uint32_t tgid), void *ctx);

struct cuda_agg_health {
	uint64_t lost_counts;	  /* calls not counted: a counter map was full */
	uint64_t lost_events;	  /* rare events lost: ring buffer full */
	uint64_t lost_allocs;	  /* allocations not tracked: the allocation table was full */
	uint64_t bpf_run_ns;	  /* time spent in the programs (0 without BPF run-time stats) */
	uint64_t bpf_runs;
	unsigned refused;	  /* entry points the kernel would not probe */
};
void cuda_agg_health(struct cuda_agg *a, struct cuda_agg_health *out);

#endif
