/* One GPU job (docs/jobs.md, "The job model"): its events, the durations derived from them, its tags. */
#ifndef GRT_JOB_H
#define GRT_JOB_H

#include <stdint.h>

enum job_kind {
	JOB_KERNEL = 1,
	JOB_GRAPH = 2,		/* a graph launch whose nodes were not seen on the device */
	JOB_MEMCPY = 3,
	JOB_MEMSET = 4,
	JOB_DRM = 5,		/* a job on a DRM driver's ring (the drm source) */
};

enum job_tag {
	JOB_TAG_HOST_SUBMIT_SLOW,
	JOB_TAG_QUEUE_WAIT,
	JOB_TAG_EXEC_LONG_TAIL,
	JOB_TAG_DEPENDENCY_WAIT,
	JOB_TAG_VM_FAULT,
	JOB_TAG_PREEMPTED,
	JOB_TAG_COLLECTIVE_WAIT,
	JOB_TAG_COUNT,
};

/* Events never seen; any of them makes the job incomplete. */
enum job_missing {
	/*
	 * Not produced any more: a device record no host call claims is no job
	 * (builder stats device_unmatched). Kept so the other bits keep their values.
	 */
	JOB_MISS_HOST = 1,
	JOB_MISS_SUBMIT = 2,	/* the launch call never returned (thread exited, trace stopped) */
	JOB_MISS_DEVICE = 4,	/* no START/END: no device record matched it */
	JOB_MISS_COMPLETE = 8,	/* no sync or successful query covered it */
	JOB_MISS_DEPENDENCY = 16, /* waited on an event whose job is unknown: t_gpu_wait unknown */
};

enum job_flags {
	JOB_F_SYNC_CALL = 1,	/* synchronous copy: SUBMIT not observable, t_queue from API_ENTER */
	JOB_F_CLAMPED = 2,	/* a span came out negative (e.g. START before the call returned) and is 0 */
	JOB_F_BY_ORDER = 4,	/* device record matched by order on the stream, not by API entry time */
	JOB_F_PROBE = 8,	/* START/END from the block probes (else CUPTI) */
	JOB_F_FORCED = 16,	/* finalized before its events were in: open-job limit reached */
	JOB_F_FAILED = 32,	/* the launch call returned an error: nothing ran */
	JOB_F_TAIL_UNCHECKED = 64, /* exec-long-tail not evaluated (no per-kernel P90 for it) */
	JOB_F_NEAR = 128,	/* device record matched by the nearest API entry time (within 20 us) */
	/*
	 * The launch's return was not sampled (record --launch-returns): no
	 * SUBMIT, t_submit_host unknown, t_queue from API_ENTER; not incomplete.
	 */
	JOB_F_RETURN_UNSAMPLED = 256,
	/* grtrace's own work in the target (calibration, probe collection); shown only when asked */
	JOB_F_OWN = 512,
	/* DRM: START is when the ring's previous job ended (or SUBMIT, if later); no event says */
	JOB_F_RING_ORDER = 1024,
};

/* Bits of job.known: which derived durations could be computed. */
enum job_known {
	JOB_K_SUBMIT_HOST = 1,
	JOB_K_QUEUE = 2,
	JOB_K_EXEC = 4,
	JOB_K_COMPLETE = 8,
	JOB_K_GPU_WAIT = 16,
	JOB_K_TOTAL = 32,
};

#define JOB_NO_DEVICE UINT32_MAX

struct nccl_call;

struct job {
	uint64_t id;		/* trace-wide, in order of the host call (stable across passes) */
	uint64_t group_id;	/* graph nodes: the graph launch's id; 0 otherwise */
	uint64_t batch_id;	/* id of the first job of its back-to-back submission run */
	uint32_t pid;
	uint32_t tid;
	uint32_t device;	/* JOB_NO_DEVICE without device record */
	uint16_t kind;		/* enum job_kind */
	uint16_t api;		/* enum grt_cuda_api of the host call */
	uint64_t stream;	/* CUstream as the host passed it */
	uint32_t stream_index;	/* per process, in order of first use, for display */
	uint32_t copy_kind;	/* enum grt_copy_kind, copies only */
	uint64_t bytes;		/* copies and memsets */
	uint64_t kernel_key;	/* what "same kernel" means (name id, or function handle) */
	const char *name;	/* kernel name or "[memcpy HtoD]"; owned by the builder */
	/* NCCL kernels: the collective (or send, recv) it runs; owned by the job pipeline */
	const struct nccl_call *collective;
	/* events, CLOCK_MONOTONIC ns; 0 = not seen */
	uint64_t api_enter;
	uint64_t submit;
	uint64_t start;
	uint64_t end;
	uint64_t complete;
	uint64_t dep_ready;	/* when the event this job's stream waited on was reached */
	/* derived */
	uint64_t t_submit_host;
	uint64_t t_queue;
	uint64_t t_exec;
	uint64_t t_complete;
	uint64_t t_gpu_wait;
	uint64_t t_vm_fault;
	uint64_t t_total;
	uint64_t t_offcpu;	/* off-CPU time of the submitting thread inside [API_ENTER, SUBMIT] */
	uint64_t tail_limit;	/* exec-long-tail limit used (1.5 x P90), 0 when unchecked */
	uint32_t vm_faults;	/* UVM events inside the job's window */
	uint32_t offcpu_count;
	uint32_t known;		/* enum job_known */
	uint32_t missing;	/* enum job_missing */
	uint32_t flags;		/* enum job_flags */
	uint32_t tags;		/* 1 << enum job_tag */
	uint32_t graph_nodes;	/* graph nodes: node count of the launch */
	int32_t ret;		/* CUresult of the host call */
};

static inline int job_incomplete(const struct job *j)
{
	return j->missing != 0;
}

#define JOB_MISSING_NAMES 5	/* bits of enum job_missing with a name */
#define JOB_FLAG_NAMES 11	/* bits of enum job_flags with a name */

/*
 * The steps of a job's life that can be missing, in order, as bit numbers of
 * enum job_missing. A job may miss several; the counts by first missing step
 * add up to the incomplete jobs.
 */
#define JOB_MISSING_STEPS 4
extern const uint32_t job_missing_steps[JOB_MISSING_STEPS];
/* Bit number of the first step j misses, JOB_MISSING_NAMES when it misses none. */
uint32_t job_first_missing(const struct job *j);
/* "no submit", "no device timing", "no completion", "unknown dependency" */
const char *job_missing_label(uint32_t bit);

const char *job_kind_name(uint32_t kind);
const char *job_tag_name(uint32_t tag);
/* The name of bit number bit of job.missing / job.flags. */
const char *job_missing_name(uint32_t bit);
const char *job_flag_name(uint32_t bit);
/* Comma-joined names of the set bits of j->tags / j->missing into buf; "" when none. */
const char *job_tags_text(const struct job *j, char *buf, unsigned len);
const char *job_missing_text(const struct job *j, char *buf, unsigned len);
const char *job_flags_text(const struct job *j, char *buf, unsigned len);

#endif
