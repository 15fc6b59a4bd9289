/* What the job builder's files share: the open-job, stream, thread and process state. */
#ifndef GRT_JOB_BUILDER_INTERNAL_H
#define GRT_JOB_BUILDER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "analysis/jobs/builder.h"
#include "analysis/jobs/pid_key_map.h"
#include "common/u64_map.h"
#include "trace/records_cuda.h"

/*
 * The builder is split by concern, one file each: builder.c (entry points,
 * host calls opening jobs), streams.c (registries of processes, threads,
 * streams and names; the stream queues), syncs.c (what a sync covers:
 * COMPLETE), deps.c (cuStreamWaitEvent dependencies), match.c (device
 * records to the host calls they time), uvm_offcpu.c (UVM events and off-CPU
 * time inside a job) and finalize.c (when a job is done, its durations, the
 * frontier for idle gaps). Functions shared between them start with jb_.
 */

#define JOB_MAX_DEPS 4
#define OFFCPU_RING 32		/* recent off-CPU intervals kept per thread */
#define END_RING 64		/* recent finished jobs kept per stream, for event dependencies */
#define UVM_MAX_EVENTS (1u << 20)
#define ADVANCE_EVERY 1024	/* records between frontier updates */
#define POOL_CHUNK 1024

#define CU_STREAM_LEGACY 0x1ull
#define CU_STREAM_PER_THREAD 0x2ull
#define PER_THREAD_KEY (1ull << 63) /* stream key of a thread's per-thread default stream */
#define COPY_KEY (1ull << 62)	    /* kernel_key of copies: one pseudo-kernel per direction */
#define HANDLE_KEY (1ull << 61)	    /* kernel_key of kernels known only by handle */

struct jstream;
struct jthread;

struct graph_node {
	uint64_t start;
	uint64_t end;
	uint64_t kernel_key;
	const char *name;
	uint32_t device;
	uint32_t probe;
	uint32_t own;		/* grtrace's own work (GRT_GPU_F_OWN, or a __grt_ kernel) */
	uint32_t reserved;
};

/*
 * The host call a device record names: thread tid of its process entered
 * the driver at enter and returned at ret (the injected library stamps both
 * around the call it forwards). Unknown (older traces) when tid or ret is 0.
 */
struct call_bracket {
	uint64_t enter;
	uint64_t ret;
	uint32_t tid;
};

static inline bool bracket_known(const struct call_bracket *c)
{
	return c->tid && c->ret && c->ret >= c->enter;
}

struct bjob;

enum dep_state { DEP_NONE, DEP_READY, DEP_UNKNOWN, DEP_PENDING };

struct dep_ref {
	struct jstream *stream;	/* where the event was recorded */
	uint64_t cover;		/* jobs of that stream submitted up to here */
	struct bjob *producer;	/* while DEP_PENDING: the job whose END this waits for */
	uint64_t ready;		/* DEP_READY: that END */
	uint32_t state;		/* enum dep_state */
};

/* A job of another stream waiting for this one's END. */
struct dependent {
	struct bjob *job;
	uint32_t dep;		/* index in job->deps */
};

/* An open job and what the builder needs to finish it. */
struct bjob {
	struct job job;
	struct bjob *next;	/* stream queue, by cover */
	struct bjob *prev;
	uint64_t dev_enter;	/* the API entry time its device records carry */
	struct bjob *u_next;	/* the stream's untimed jobs, by API entry */
	struct bjob *u_prev;
	bool in_untimed;
	struct jstream *stream;
	struct jthread *thread;
	struct graph_node *nodes;
	uint32_t n_nodes;
	uint32_t cap_nodes;
	struct dep_ref deps[JOB_MAX_DEPS];
	uint32_t n_deps;
	struct dependent *dependents;
	uint32_t n_dependents;
	uint32_t cap_dependents;
	uint64_t cover;		/* SUBMIT, or API_ENTER when there is none: what syncs compare */
	struct bjob *t_next;	/* the thread's open jobs, by API entry: identity matching */
	struct bjob *t_prev;
	bool in_thread;
	bool has_device;
};

struct cover_mark {
	uint64_t cover;		/* a sync covered jobs submitted up to here */
	uint64_t complete;	/* ... and returned then */
};

struct end_entry {
	uint64_t cover;
	uint64_t end;		/* 0 when the job had no device timing */
};

#define TIMED_RING 16

struct timed_ref {
	uint64_t dev_enter;
	uint64_t id;		/* the job's id when remembered: a finished job's slot is reused */
	struct bjob *job;
};

struct jstream {
	struct jproc *proc;
	uint32_t pid;
	uint32_t index;
	uint64_t key;
	uint64_t handle;
	struct bjob *head;
	struct bjob *tail;
	struct bjob *untimed_head; /* jobs still without device timing (graphs: until finished) */
	struct bjob *untimed_tail;
	struct cover_mark *marks;
	uint32_t n_marks;
	uint32_t cap_marks;
	uint64_t max_device_cover; /* cover of the latest job that got device timing */
	uint64_t last_end;	   /* END of the last finished job */
	struct end_entry ends[END_RING];
	uint64_t n_ends;
	struct dep_ref pending[JOB_MAX_DEPS]; /* waits for the next job */
	uint32_t n_pending;
	struct timed_ref timed[TIMED_RING]; /* recently timed calls, by their device API entry time */
	uint32_t n_timed;
	struct jstream *proc_next;
	struct jstream *all_next;
	bool in_heap;
	bool in_checks;
	bool waits_device;	/* its head waits for its process's device records to catch up */
};

struct offcpu {
	uint64_t off;
	uint64_t on;
};

#define DONE_RING 32	/* recently finished jobs kept per thread, for late and twin device records */

struct done_ref {
	uint64_t api_enter;
	uint16_t kind;
	bool had_device;
};

struct orphan;

struct jthread {
	uint32_t tid;
	uint32_t pid;
	char *comm;
	struct offcpu ring[OFFCPU_RING];
	uint32_t n_ring;
	struct bjob *last_job;
	struct jstream *last_stream;
	uint64_t last_submit;
	uint64_t batch_id;
	struct bjob *open_head;	/* open jobs (failed calls left out), by API entry */
	struct bjob *open_tail;
	struct bjob *cursor;	/* the last job matched by identity: the next one is near it */
	struct orphan *orphans;	/* device records naming a call of this thread not seen yet */
	struct done_ref done[DONE_RING];
	uint32_t n_done;
	/* device records naming its calls: each thread's come in their own bursts */
	uint64_t device_records;
	uint64_t device_seen;	/* latest API entry time they named */
	struct jstream **device_waiters; /* streams whose head waits until device_seen passes */
	uint32_t n_device_waiters;
	uint32_t cap_device_waiters;
};

struct uvm_ev {
	uint64_t ts;
	uint64_t end;
};

struct jproc {
	uint32_t pid;
	uint32_t n_streams;
	struct cover_mark *marks; /* context syncs: they cover every stream of the process */
	uint32_t n_marks;
	uint32_t cap_marks;
	char *comm;
	struct jstream *streams;
	struct uvm_ev *uvm;	/* ring, sorted by ts */
	uint32_t uvm_head;
	uint32_t uvm_len;
	uint32_t uvm_cap;
	uint64_t uvm_max_span;
	uint64_t device_records;	/* device records seen for it: it has device timing */
	uint32_t device;		/* the device its CUPTI records name, JOB_NO_DEVICE before one */
	bool several_devices;
	bool device_brackets;	/* its device records name their calls (format 1.1) */
};

struct jevent {
	struct jstream *stream;
	uint64_t cover;
};

/* A device record waiting for the host call it times (the call's record comes later). */
struct orphan {
	struct graph_node dev;	/* the device record */
	struct call_bracket call; /* known: waits on its thread; unknown: matched by time */
	uint64_t stream;
	uint64_t graph_id;
	uint64_t arrived;	/* builder's clock when it came */
	uint32_t pid;
	uint32_t tid;		/* the record's thread (the bracket's when known) */
	uint32_t kind;		/* JOB_KERNEL, JOB_MEMCPY, JOB_MEMSET */
	struct orphan *next;	/* arrival order */
	struct orphan *prev;
	struct orphan *t_next;	/* its thread's, when the bracket is known */
	struct orphan *t_prev;
	struct jthread *thread;
};

struct heap_entry {
	uint64_t deadline;
	struct jstream *stream;
};

struct job_builder {
	struct job_thresholds t;
	struct job_builder_ops ops;
	void *ctx;
	bool expect_device;
	char gpu_not_running[200]; /* why the gpu source did not run, from its status record */
	uint64_t now;		/* latest host timestamp seen */
	uint64_t next_id;
	uint64_t opened_id;	/* the job the current record opened, 0 when none */
	uint64_t records;
	uint64_t open;
	struct job_builder_stats stats;
	struct pid_key_map streams;
	struct pid_key_map events;
	struct orphan *orphans_head;
	struct orphan *orphans_tail;
	uint32_t n_orphans;
	uint32_t n_orphans_by_time; /* orphans without a bracket: new calls scan for them */
	struct u64_map threads;	/* tid -> struct jthread * */
	struct u64_map procs;	/* pid -> struct jproc * */
	struct u64_map names;	/* kernel_key -> char * */
	/*
	 * Device API entry times of calls that got device timing, the last
	 * RECENT_TIMED of them: a twin record (CUPTI and block probe of one
	 * launch) drained after its job finished is recognised, not orphaned.
	 */
	struct u64_map recent_timed;	/* key of (pid, dev_enter) -> 1 */
	uint64_t *recent_ring;
	uint64_t n_recent;
	struct jstream *all_streams;
	struct heap_entry *heap;
	uint32_t heap_len;
	uint32_t heap_cap;
	struct jstream **checks;
	uint32_t n_checks;
	uint32_t cap_checks;
	struct bjob *pool;	/* free jobs */
	void **chunks;
	uint32_t n_chunks;
	uint32_t cap_chunks;
	bool ptsz_api[GRT_CUDA_API_COUNT];
	const struct grt_strings *strings;
};

/* Legacy and per-thread default streams have several spellings; one key each. */
static inline uint64_t stream_key(uint64_t handle, bool per_thread_api, uint32_t tid)
{
	if (handle == CU_STREAM_LEGACY)
		return 0;
	if (handle == CU_STREAM_PER_THREAD || (handle == 0 && per_thread_api))
		return PER_THREAD_KEY | tid;
	return handle;
}

/* A job's END; a graph launch's is its last node's. */
static inline uint64_t job_end(const struct bjob *j)
{
	uint64_t end = j->job.end;

	for (uint32_t i = 0; i < j->n_nodes; i++)
		if (j->nodes[i].end > end)
			end = j->nodes[i].end;
	return end;
}

/* streams.c */
struct bjob *jb_job_alloc(struct job_builder *b);
void jb_job_release(struct job_builder *b, struct bjob *j);
void jb_set_name(struct job_builder *b, char **slot, const char *name);
struct jproc *jb_proc_get(struct job_builder *b, uint32_t pid);
struct jthread *jb_thread_get(struct job_builder *b, uint32_t tid, uint32_t pid);
struct jstream *jb_stream_find(struct job_builder *b, uint32_t pid, uint64_t key);
struct jstream *jb_stream_get(struct job_builder *b, uint32_t pid, uint64_t key, uint64_t handle);
const char *jb_name_of(struct job_builder *b, uint64_t key, const char *fallback);
void jb_kernel_identity(struct job_builder *b, uint32_t name_str, uint64_t function,
			uint64_t *key, const char **name);
void jb_copy_identity(struct job_builder *b, uint32_t kind, uint32_t copy_kind, uint64_t *key,
		      const char **name);
void jb_queue_insert(struct jstream *s, struct bjob *j);
void jb_queue_unlink(struct jstream *s, struct bjob *j);
void jb_untimed_insert(struct jstream *s, struct bjob *j);
void jb_untimed_remove(struct jstream *s, struct bjob *j);
void jb_thread_open_insert(struct jthread *t, struct bjob *j);
/* Takes j off its thread's open jobs, remembering it among the recently finished. */
void jb_thread_open_remove(struct bjob *j);

/* syncs.c */
uint64_t jb_mark_lookup(const struct jstream *s, uint64_t cover);
void jb_prune_marks(struct jstream *s);
void jb_on_sync(struct job_builder *b, const struct grt_record *rec);

/* deps.c */
bool jb_device_given_up(const struct job_builder *b, const struct bjob *j);
void jb_resolve_dep(struct job_builder *b, struct bjob *owner, uint32_t idx);
void jb_settle_deps(struct job_builder *b, struct bjob *producer);
void jb_drop_pending_deps(struct bjob *j);
int jb_dep_state_of(struct bjob *j);

/* match.c */
void jb_on_gpu_kernel(struct job_builder *b, const struct grt_record *rec);
void jb_on_gpu_launch(struct job_builder *b, const struct grt_record *rec);
void jb_on_gpu_copy(struct job_builder *b, const struct grt_record *rec);
void jb_claim_orphans(struct job_builder *b, struct bjob *j);
void jb_expire_orphans(struct job_builder *b, bool all);

/* uvm_offcpu.c */
void jb_uvm_window(struct jproc *p, struct job *j);
void jb_add_offcpu(struct bjob *j, const struct offcpu *o);
void jb_on_offcpu(struct job_builder *b, const struct grt_record *rec);
void jb_on_uvm(struct job_builder *b, const struct grt_record *rec);

/* finalize.c */
void jb_want_check(struct job_builder *b, struct jstream *s);
/* Device records of t named a later call: the streams waiting on them are checked again. */
void jb_device_progress(struct job_builder *b, struct jthread *t);
void jb_derive(struct job *j, uint64_t prev_end, int dep_state);
void jb_emit(struct job_builder *b, struct job *j);
/* Execution that is no user job (grtrace's own, unmatched device records): busy time only. */
void jb_busy(struct job_builder *b, uint32_t pid, uint32_t device, uint64_t start, uint64_t end);
/* The device a job timed without one (block probes only) ran on: its process's, if only one. */
uint32_t jb_device_of(struct job_builder *b, uint32_t pid, uint32_t device);
void jb_finalize(struct job_builder *b, struct bjob *j, bool forced);
void jb_run_checks(struct job_builder *b);
void jb_enforce_open_limit(struct job_builder *b, struct jstream *s);
void jb_advance(struct job_builder *b);

#endif
