/* GPU idle gaps: intervals with no job executing on a device, and why the host left it idle. */
#ifndef GRT_IDLE_GAPS_H
#define GRT_IDLE_GAPS_H

#include <stdint.h>
#include "analysis/jobs/job.h"
#include "analysis/jobs/uvm_activity.h"
#include "trace/records_uvm.h"

/*
 * A gap [a, b) on a device ends when job J starts at b. It is split by what
 * held J back:
 *  - other:      [max(a, SUBMIT_J), b) -- J was already submitted but did not
 *                run yet (launch latency, a dependency on another device);
 *  - sync-bound: [a, min(b, SUBMIT_J)) when a thread of J's process was inside
 *                a blocking wait (sync call, synchronous copy) at a: the host
 *                sat waiting for the GPU when the GPU ran dry, so it had
 *                nothing queued behind it;
 *  - host-bound: the same interval when no thread was waiting: the host was
 *                busy elsewhere and submitted J late;
 *  - uvm-bound:  of that interval, the part from the first to the last
 *                unified-memory activity of J's process inside it (CPU
 *                faults, migrations): the host was moving managed memory
 *                back and forth while the GPU waited (taken before the two
 *                above, which share what is left).
 * Time before a device's first job and after its last is not a gap.
 */
enum gap_class {
	GAP_HOST_BOUND,
	GAP_SYNC_BOUND,
	GAP_OTHER,
	GAP_UVM_BOUND,
	GAP_CLASSES,
};

struct idle_gap {
	uint64_t start;
	uint64_t end;
	uint64_t split[GAP_CLASSES];	/* ns of each class in this gap */
	uint32_t device;
	uint32_t pid;			/* the process and thread of the job that ended it */
	uint32_t tid;
	uint64_t job_id;
};

struct device_idle {
	uint32_t device;		/* JOB_NO_DEVICE: jobs timed by block probes only */
	uint64_t first_start;
	uint64_t last_end;
	uint64_t busy;			/* union of job executions */
	uint64_t idle[GAP_CLASSES];
	uint64_t gaps;
	uint64_t late_jobs;		/* jobs that came after their time was already judged */
	struct idle_gap *longest;	/* top_n longest, longest first */
	uint32_t n_longest;
};

struct idle_gaps;

struct idle_gaps *idle_gaps_new(unsigned top_n);
void idle_gaps_free(struct idle_gaps *g);
void idle_gaps_host_wait(struct idle_gaps *g, uint32_t pid, uint32_t tid, uint64_t start,
			 uint64_t end);
/* A finished job; only jobs with START and END count. */
void idle_gaps_job(struct idle_gaps *g, const struct job *j);
/*
 * Execution that is no user job (grtrace's own work, a device record no host
 * call claimed): busy time inside the span of the jobs (it does not stretch
 * it); inside a gap between two jobs it is left out of the gap's idle time,
 * and the gap is judged whole by the job that ends it.
 */
void idle_gaps_busy(struct idle_gaps *g, uint32_t device, uint64_t start, uint64_t end);
/* A UVM event of pid's unified memory (any kind; CPU faults and migrations fill gaps). */
void idle_gaps_uvm(struct idle_gaps *g, uint32_t pid, uint64_t ts, const struct grt_uvm_event_rec *u);
/* pid's migrated bytes and faults over the trace, NULL without UVM events. */
const struct uvm_totals *idle_gaps_uvm_totals(const struct idle_gaps *g, uint32_t pid);
/* No job from now on starts before frontier: gaps before it can be judged. */
void idle_gaps_advance(struct idle_gaps *g, uint64_t frontier);

uint32_t idle_gaps_devices(const struct idle_gaps *g);
/* Allocations that failed: some busy time, host waits or gaps are missing. */
uint64_t idle_gaps_alloc_failures(const struct idle_gaps *g);
const struct device_idle *idle_gaps_device(const struct idle_gaps *g, uint32_t i);
/* Host-bound + sync-bound ns per thread, for naming the thread that starves the GPU. */
uint64_t idle_gaps_top_thread(const struct idle_gaps *g, enum gap_class cls, uint32_t *tid,
			      uint32_t *pid);
uint64_t idle_gaps_total(const struct idle_gaps *g, enum gap_class cls);

const char *gap_class_name(enum gap_class c);

#endif
