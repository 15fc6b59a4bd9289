/* Tagging a finished job with the blocking causes of docs/jobs.md, against configurable thresholds. */
#ifndef GRT_JOB_TAGS_H
#define GRT_JOB_TAGS_H

#include <stdbool.h>
#include <stdint.h>
#include "analysis/jobs/job.h"
#include "analysis/stats.h"
#include "common/u64_map.h"

/*
 * Shares are parts per million of t_total; every comparison is strict ("more
 * than 30% and more than 200 us"), so a job exactly at a threshold is not
 * tagged and one nanosecond over is.
 */
struct job_thresholds {
	uint32_t submit_share_ppm;	/* host-submit-slow: 30% */
	uint64_t submit_min_ns;		/*                   200 us */
	uint32_t queue_share_ppm;	/* queue-wait: 50% */
	uint64_t queue_min_ns;		/*             500 us */
	uint32_t tail_factor_milli;	/* exec-long-tail: 1.5 x P90 of the same kernel */
	uint32_t tail_min_jobs;		/*                 kernels with fewer jobs are not judged */
	uint32_t dep_share_ppm;		/* dependency-wait: 40% */
	uint64_t dep_min_ns;		/*                  0 */
	uint32_t fault_min_count;	/* vm-fault: at least this many UVM events in the window: 1 */
	uint64_t offcpu_min_ns;		/* preempted: off-CPU time in the submit window above this: 0 */
	uint64_t coll_wait_min_ns;	/* collective-wait: its rank entered before the last by more: 1 ms */
	/* not tags: how the job builder waits for late records, and groups batches */
	uint64_t late_window_ns;	/* JOB_LATE_WINDOW_AUTO: 100 ms with the uvm or gpu source, else 5 ms */
	uint64_t batch_gap_ns;		/* 20 us */
	uint32_t max_open_jobs;		/* 1M */
	uint32_t idle_share_ppm;	/* verdict: above this idle share, idle causes dominate: 50% */
	/* not a --threshold key: --own shows grtrace's own work as jobs (default: left out) */
	bool show_own;
};

/* UVM events reach the trace up to tens of ms late (the source drains its queue on a timer). */
#define JOB_LATE_WINDOW_AUTO UINT64_MAX
#define JOB_LATE_WINDOW_UVM_NS 100000000ull
#define JOB_LATE_WINDOW_NS 5000000ull

void job_thresholds_default(struct job_thresholds *t);

/* Per-kernel execution-time distributions (pass 1) and the P90 they give (pass 2). */
struct kernel_exec_table {
	struct u64_map index;	/* kernel_key -> slot + 1 */
	struct grt_stats *hists;
	uint64_t *keys;
	uint64_t *p90;		/* computed once, when first asked (the table no longer grows then) */
	uint32_t count;
	uint32_t cap;
};

void kernel_exec_table_init(struct kernel_exec_table *t);
void kernel_exec_table_destroy(struct kernel_exec_table *t);
/* Adds a finished kernel job's t_exec. Returns 0 or -ENOMEM. */
int kernel_exec_table_add(struct kernel_exec_table *t, const struct job *j);
/* Adds one execution time of the kernel known as kernel_key. Returns 0 or -ENOMEM. */
int kernel_exec_table_add_sample(struct kernel_exec_table *t, uint64_t kernel_key, uint64_t exec_ns);
/* P90 and job count of a kernel; 0 when unknown. */
uint64_t kernel_exec_table_p90(struct kernel_exec_table *t, uint64_t kernel_key,
			       uint64_t *jobs);

/* Sets j->tags (and tail_limit / TAIL_UNCHECKED); exec may be NULL (single pass). */
void job_tags_apply(const struct job_thresholds *t, struct kernel_exec_table *exec,
		    struct job *j);

/*
 * The part of a tagged job's time its tag stands for (t_queue for
 * queue-wait, t_exec above its limit for exec-long-tail, ...): what the verdict weighs.
 */
uint64_t job_tag_cost(const struct job *j, enum job_tag tag);

/*
 * Where a tagged job's tag time lies, [from, to) with to - from its cost: the
 * submit call for host-submit-slow, SUBMIT to START for queue-wait, the part
 * of the execution past the limit for exec-long-tail, the end of the queue
 * for dependency-wait, from START for vm-fault, from API_ENTER for
 * preempted (whose exact places inside the window are not kept), and for
 * collective-wait from the kernel's START (or the host entry into the
 * collective, without device timing) to the last rank's. Their union
 * over jobs is the wall time a tag covers. False when the cost is 0.
 */
bool job_tag_interval(const struct job *j, enum job_tag tag, uint64_t *from, uint64_t *to);

#endif
