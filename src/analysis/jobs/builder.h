/* Turning the event stream into jobs: host calls matched to device timing, syncs, waits, faults. */
#ifndef GRT_JOB_BUILDER_H
#define GRT_JOB_BUILDER_H

#include <stdint.h>
#include "analysis/jobs/job.h"
#include "analysis/jobs/tags.h"
#include "trace/grt_reader.h"
#include "trace/records_uvm.h"

/*
 * What the builder hands out. Jobs come out once they can no longer change:
 * their COMPLETE is known (or a later sync passed them), their device record
 * is in (or a later job of the stream got one), any event they waited on is
 * resolved, and late_window of trace time has passed since, so late device
 * or UVM records still find them. Jobs of one stream come out in order.
 */
struct job_builder_ops {
	/* A finished job; the callee may tag it, it is gone after the call. */
	void (*job)(void *ctx, struct job *j);
	/* A host thread was blocked waiting for the GPU (sync call, synchronous copy). */
	void (*host_wait)(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end);
	/* No job handed out from now on can START before frontier. */
	void (*advance)(void *ctx, uint64_t frontier);
	/*
	 * Optional: no job handed out from now on was entered (API_ENTER)
	 * before point, up to the reordering of concurrent calls on one stream.
	 */
	void (*settled)(void *ctx, uint64_t point);
	/*
	 * Optional: the device executed something that is no user job
	 * (grtrace's own work, a device record no host call claimed). It
	 * keeps the device busy; no gap is blamed on it.
	 */
	void (*busy)(void *ctx, uint32_t device, uint64_t start, uint64_t end);
	/* Optional: every UVM event of a traced process (CPU faults included), as recorded. */
	void (*uvm)(void *ctx, uint32_t pid, uint64_t ts, const struct grt_uvm_event_rec *u);
};

struct job_builder_stats {
	uint64_t jobs;			/* handed out, graph nodes counted one by one */
	uint64_t graph_launches;
	uint64_t failed_calls;		/* launches/copies that returned an error */
	uint64_t device_records;	/* the application's: the notes below add up to it */
	uint64_t own_device_records;	/* grtrace's own (calibration, collection): not in the notes */
	uint64_t device_by_identity;	/* matched to the host call they name (thread, bracket) */
	uint64_t device_by_order;	/* matched by stream order (no identity, no API entry time) */
	uint64_t device_near;		/* no identity: matched by the nearest API entry time */
	uint64_t device_unmatched;	/* matched no host call: no job, busy time only */
	uint64_t device_late;		/* came after their call's job was finished without them */
	uint64_t device_duplicates;	/* a second record of a call already timed (CUPTI and probes) */
	uint64_t own_jobs;		/* grtrace's own work, left out (thresholds show_own shows it) */
	uint64_t own_device_unmatched;	/* own device records without their host call */
	uint64_t cuda_drops;		/* cuda events lost while recording (drop records) */
	uint64_t syncs;
	uint64_t unknown_event_syncs;	/* synced on an event never recorded in the trace */
	uint64_t deps_dropped;		/* more than JOB_MAX_DEPS waits before one job */
	uint64_t forced;		/* finalized early at the open-job limit */
	uint64_t uvm_events;
	uint64_t uvm_dropped;		/* fell out of the bounded fault window */
	uint64_t offcpu_records;
	uint64_t max_open;		/* high-water mark of open jobs */
	uint64_t alloc_failures;	/* memory ran out: some jobs or their events are missing */
};

struct job_builder;

struct job_builder *job_builder_new(const struct grt_file_header *hdr,
				    const struct job_thresholds *t,
				    const struct job_builder_ops *ops, void *ctx);
void job_builder_record(struct job_builder *b, const struct grt_record *rec,
			const struct grt_strings *strings);
/* End of trace: hands out every open job, marked with what it misses. */
void job_builder_finish(struct job_builder *b);
void job_builder_free(struct job_builder *b);

const struct job_builder_stats *job_builder_stats(const struct job_builder *b);
/*
 * The id of the job the last record opened (a graph launch: the id its nodes
 * get as group_id), 0 when it opened none: lets an exporter tie a host call
 * to the job it becomes.
 */
uint64_t job_builder_opened_id(const struct job_builder *b);
/* Last comm seen for a thread / process, or NULL. Valid for the builder's life. */
const char *job_builder_thread_name(const struct job_builder *b, uint32_t tid);
const char *job_builder_process_name(const struct job_builder *b, uint32_t pid);
/*
 * The derived durations of a job built elsewhere (the DRM feeder), whose dependencies are not
 * known: t_gpu_wait stays unknown.
 */
void job_derive_nodeps(struct job *j);

/* Whether the trace was recorded with device timing (the gpu source ran). */
int job_builder_expects_device(const struct job_builder *b);
/* Why the gpu source did not run (its status message), or NULL. */
const char *job_builder_gpu_not_running(const struct job_builder *b);
/* Device records seen for a process: 0 means its jobs have no device timing at all. */
uint64_t job_builder_process_device_records(const struct job_builder *b, uint32_t pid);

#endif
