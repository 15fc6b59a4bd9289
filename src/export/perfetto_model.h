/* What a Perfetto timeline of a trace shows, as calls an encoder (JSON, protobuf) turns into bytes. */
#ifndef GRT_PERFETTO_MODEL_H
#define GRT_PERFETTO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analysis/jobs/job.h"
#include "analysis/jobs/tags.h"
#include "export/perfetto.h"

/*
 * The layout both encoders draw: each traced process with its threads (CUDA
 * API calls as slices) and, per thread, an off-CPU track; per process the
 * device memory in use, the UVM bytes migrated and the UVM events; each GPU
 * with one track per stream that ran work, split into lanes where slices
 * overlap (graph nodes, clock jitter) so every track nests properly; PCIe
 * and NVLink throughput per GPU; Xid errors. The model walks the trace once
 * (after the job pipeline's pass over the device records), keeps what spans
 * records (allocation sizes, lanes) and hands out each thing as it becomes
 * final: memory follows the open jobs, not the trace.
 */

#define PF_MAX_LANES 8

enum pf_detail {
	PF_DETAIL_NONE,
	PF_DETAIL_KERNEL,	/* launches: the kernel's name */
	PF_DETAIL_COPY,		/* copies: bytes and direction */
	PF_DETAIL_SYNC,		/* syncs, events, waits: kind, stream, event */
};

/* A CUDA driver API call on its thread. */
struct pf_call {
	uint32_t pid;
	uint32_t tid;
	const char *comm;	/* the thread's command name, NULL when unknown */
	const char *api;	/* the entry point's name (static) */
	uint64_t start;
	uint64_t end;		/* valid when returned */
	bool returned;		/* else an instant: never returned, or its return not sampled */
	bool unsampled;		/* record --launch-returns: returned, but not timed */
	int32_t ret;		/* CUresult, 0 when unknown */
	uint64_t flow;		/* the job this call starts an arrow to (its id), 0 for none */
	enum pf_detail detail;
	const char *kernel;	/* PF_DETAIL_KERNEL, may be NULL */
	uint64_t bytes;		/* PF_DETAIL_COPY */
	bool peer;		/* PF_DETAIL_COPY: a peer copy, between src_device and dst_device */
	int32_t src_device;	/* -1 when its context's device is unknown */
	int32_t dst_device;
	const char *link;	/* peer copies: "nvlink", "pcie", "none", "?" (static) */
	const char *kind;	/* PF_DETAIL_COPY / PF_DETAIL_SYNC: "HtoD", "stream"... (static) */
	uint32_t sync;		/* PF_DETAIL_SYNC: enum grt_sync_kind */
	uint64_t stream;	/* PF_DETAIL_SYNC */
	uint64_t event;		/* PF_DETAIL_SYNC */
};

enum pf_link {
	PF_LINK_PCIE,
	PF_LINK_NVLINK,		/* all NVLink links of the GPU */
	PF_LINK_NVLINK_PORT,	/* + n: NVLink link n of the GPU alone */
};

struct pf_lane {
	uint64_t last_start;
	uint64_t last_end;
	uint32_t id;		/* trace-wide, from 1, in order of creation */
	uint32_t index;		/* within its stream: 0, then the overlap lanes */
	void *sink;		/* the encoder's own state for this lane */
};

/* A stream of one process on one GPU (device JOB_NO_DEVICE: the device was not recorded). */
struct pf_stream {
	uint32_t device;
	uint32_t pid;
	uint32_t stream_index;	/* per process, in order of first use */
	uint64_t stream;	/* CUstream as the host passed it */
	struct pf_lane lanes[PF_MAX_LANES];
	uint32_t n_lanes;
};

/*
 * The encoder's side, called in trace order. Each thing comes once; the
 * encoder declares the tracks it needs on first sight (a thread's first
 * call, a stream's first lane).
 */
struct pf_sink_ops {
	/* A process record: its command name. */
	void (*process)(void *ctx, uint32_t pid, const char *comm);
	void (*call)(void *ctx, const struct pf_call *c);
	/* Device memory the process holds after an allocation or a free, at ts. */
	void (*memory)(void *ctx, uint32_t pid, uint64_t ts, uint64_t in_use);
	void (*offcpu)(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end,
		       bool blocked);
	/* A UVM event (kind: its name), and after a migration the process's bytes migrated so far. */
	void (*uvm)(void *ctx, uint32_t pid, uint64_t ts, const char *kind, uint64_t address,
		    uint64_t bytes);
	void (*uvm_migrated)(void *ctx, uint32_t pid, uint64_t ts, uint64_t total);
	void (*xid)(void *ctx, uint64_t ts, uint32_t code, uint32_t device, const char *message);
	void (*throughput)(void *ctx, uint32_t device, enum pf_link link, uint64_t ts, uint64_t tx,
			   uint64_t rx);
	/* A stream first seen, then each lane it opens. */
	void (*stream)(void *ctx, struct pf_stream *s);
	void (*lane)(void *ctx, struct pf_stream *s, struct pf_lane *lane);
	/*
	 * A job's execution on its lane, from START to END. flow: the arrow its
	 * launch call started ends here (j->group_id names it for graph nodes,
	 * whose launch fans out to every node; else j->id).
	 */
	void (*job)(void *ctx, struct pf_stream *s, struct pf_lane *lane, const struct job *j,
		    bool flow);
};

/* "GPU 0", "GPU (device not recorded)": the names both encoders give a GPU and a stream's lanes. */
const char *pf_gpu_name(uint32_t device, char *buf, size_t len);
const char *pf_lane_name(const struct pf_stream *s, const struct pf_lane *lane, char *buf,
			 size_t len);

/*
 * Reads trace_path (twice: the first pass learns per-kernel P90s so job
 * slices carry their exec-long-tail tag) and calls ops. stats gets the
 * model's counts (jobs, flows, overlap lanes); events are the encoder's.
 * Returns 0, or a negative errno with one line in err.
 */
int perfetto_model_run(const char *trace_path, const struct job_thresholds *t,
		       const struct pf_sink_ops *ops, void *ctx, struct perfetto_stats *stats,
		       char *err, size_t err_len);

#endif
