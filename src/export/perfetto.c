/* Perfetto export: one streaming pass writing trace events as records are read and jobs finish. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/pipeline.h"
#include "analysis/own_work.h"
#include "common/json_writer.h"
#include "common/u64_map.h"
#include "export/perfetto.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/records_kernel.h"
#include "trace/records_uvm.h"
#include "trace/trace_names.h"

/*
 * Layout in the UI: each traced process is a process with its threads (API
 * calls as slices) and, per thread, an "off-CPU" track. Each GPU is a
 * process of its own (pid GPU_PID_BASE + device) with one track per stream
 * that ran work on it; slices that overlap on a stream (graph nodes, clock
 * jitter) go to extra lanes of that stream so every track nests properly.
 * A 10^7-record trace makes gigabytes, so every event is kept short:
 * complete (X) slices, flows as fields of the slices they join, no field
 * that repeats what the track already says.
 */
#define GPU_PID_BASE 1000000000u
#define UNKNOWN_GPU_PID (GPU_PID_BASE - 1)
#define OFFCPU_TID_BASE (1u << 30)
#define MAX_LANES 8
#define OUT_BUFFER (1u << 20)
#define NAMED_CACHE 256

struct gpu_lane {
	uint64_t last_start;
	uint64_t last_end;
	uint32_t tid;
};

struct gpu_track {
	uint32_t gpu_pid;
	uint32_t pid;
	uint32_t stream_index;
	uint64_t stream;
	struct gpu_lane lanes[MAX_LANES];
	uint32_t n_lanes;
};

struct exporter {
	struct json_writer w;
	FILE *out;
	struct job_pipeline *pipeline;
	const struct grt_strings *strings;
	struct perfetto_stats stats;
	struct u64_map named_pids;	/* pid -> 1 once process_name was written */
	struct u64_map named_tids;	/* tid -> 1 once thread_name was written */
	uint64_t named_cache[NAMED_CACHE]; /* by tid: 1 << 32 | tid of threads surely named */
	struct u64_map named_gpus;
	struct u64_map tracks;		/* (gpu_pid, pid, stream_index) hash -> struct gpu_track * */
	uint32_t next_gpu_tid;
	struct u64_map alloc_bytes;	/* device address -> bytes */
	struct u64_map mem_in_use;	/* pid -> bytes */
	struct u64_map uvm_migrated;	/* pid -> bytes */
	bool show_own;			/* --own: grtrace's own calls drawn as the program's */
};

/* ---- event scaffolding ---- */

/* The format counts microseconds: ns with at most 3 decimals, trailing zeros dropped. */
static void us_field(struct exporter *e, const char *key, uint64_t ns)
{
	jw_key(&e->w, key);
	jw_decimal(&e->w, ns, 3);
}

static void begin_event(struct exporter *e, const char *ph, const char *name, uint32_t pid,
			uint32_t tid, uint64_t ts)
{
	jw_raw(&e->w, "\n");
	jw_begin_object(&e->w);
	jw_key(&e->w, "ph");
	jw_string(&e->w, ph);
	jw_key(&e->w, "name");
	jw_string(&e->w, name);
	jw_field_u64(&e->w, "pid", pid);
	jw_field_u64(&e->w, "tid", tid);
	us_field(e, "ts", ts);
	e->stats.events++;
}

static void end_event(struct exporter *e)
{
	jw_end_object(&e->w);
}

static void metadata(struct exporter *e, const char *what, uint32_t pid, uint32_t tid,
		     const char *name)
{
	begin_event(e, "M", what, pid, tid, 0);
	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_key(&e->w, "name");
	jw_string(&e->w, name);
	jw_end_object(&e->w);
	end_event(e);
}

static bool first_time(struct u64_map *m, uint64_t key)
{
	if (u64_map_get(m, key, NULL))
		return false;
	u64_map_put(m, key, 1);
	return true;
}

static void name_process(struct exporter *e, uint32_t pid, const char *comm)
{
	char buf[96];

	if (!first_time(&e->named_pids, pid))
		return;
	snprintf(buf, sizeof(buf), "%s %u", comm ? comm : "pid", pid);
	metadata(e, "process_name", pid, 0, buf);
}

/* Every API call asks: a small cache in front of the maps answers most of them. */
static void name_thread(struct exporter *e, uint32_t pid, uint32_t tid, const char *comm)
{
	uint64_t *cached = &e->named_cache[tid % NAMED_CACHE];
	char buf[96];

	if (*cached == ((1ull << 32) | tid))
		return;
	name_process(e, pid, tid == pid ? comm : NULL);
	*cached = (1ull << 32) | tid;
	if (!first_time(&e->named_tids, tid))
		return;
	snprintf(buf, sizeof(buf), "%s %u", comm ? comm : "thread", tid);
	metadata(e, "thread_name", pid, tid, buf);
}

/* ---- host side ---- */

/*
 * A CUDA call on its thread's track (the track says what it is: no category).
 * A call that became a job starts the flow to its execution: a v2 flow bound
 * to this slice by the job's id (the graph's for graph nodes), so the arrow
 * costs two fields instead of two events of its own.
 */
static void api_slice(struct exporter *e, const struct grt_record *rec,
		      const struct grt_cuda_call *call, const char *detail_key, const char *detail)
{
	const char *api = grt_cuda_api_name(call->api);
	bool returned = grt_cuda_call_returned(call) && call->return_ns >= rec->hdr.ts_ns;
	bool unsampled = call->flags & GRT_CUDA_F_RETURN_UNSAMPLED;
	uint64_t job = job_builder_opened_id(job_pipeline_builder(e->pipeline));

	name_thread(e, rec->hdr.pid, rec->hdr.tid, grt_strings_get(e->strings, call->comm_str));
	begin_event(e, returned ? "X" : "i", api, rec->hdr.pid, rec->hdr.tid, rec->hdr.ts_ns);
	if (returned) {
		us_field(e, "dur", call->return_ns - rec->hdr.ts_ns);
	} else {
		jw_key(&e->w, "s");
		jw_string(&e->w, "t");
	}
	/* v2 flows bind to slices only: a launch whose return was not sampled (an instant) has none */
	if (job && returned && !call->ret) {
		jw_field_u64(&e->w, "bind_id", job);
		jw_key(&e->w, "flow_out");
		jw_bool(&e->w, true);
	}
	if (call->ret || !returned || (detail_key && detail)) {
		jw_key(&e->w, "args");
		jw_begin_object(&e->w);
		if (call->ret) {
			jw_key(&e->w, "ret");
			jw_i64(&e->w, call->ret);
		}
		if (!returned) {
			jw_key(&e->w, "note");
			jw_string(&e->w, unsampled ? "return not sampled" : "never returned");
		}
		if (detail_key && detail) {
			jw_key(&e->w, detail_key);
			jw_string(&e->w, detail);
		}
		jw_end_object(&e->w);
	}
	end_event(e);
}

static void counter(struct exporter *e, const char *name, uint32_t pid, uint64_t ts, const char *key,
		    uint64_t value)
{
	begin_event(e, "C", name, pid, 0, ts);
	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_key(&e->w, key);
	jw_u64(&e->w, value);
	jw_end_object(&e->w);
	end_event(e);
}

static void memory_change(struct exporter *e, const struct grt_record *rec, uint64_t addr,
			  uint64_t bytes, bool alloc)
{
	uint64_t in_use = 0, old = 0;

	u64_map_get(&e->mem_in_use, rec->hdr.pid, &in_use);
	if (alloc) {
		if (!addr || u64_map_put(&e->alloc_bytes, addr, bytes))
			return;
		in_use += bytes;
	} else {
		if (!u64_map_remove(&e->alloc_bytes, addr, &old))
			return; /* allocated before the trace started: unknown size */
		in_use = in_use > old ? in_use - old : 0;
	}
	u64_map_put(&e->mem_in_use, rec->hdr.pid, in_use);
	name_process(e, rec->hdr.pid, NULL);
	counter(e, "device memory in use", rec->hdr.pid,
		alloc ? rec->hdr.ts_ns : ((const struct grt_cuda_call *)rec->payload)->return_ns, "bytes",
		in_use);
}

static void on_cuda(struct exporter *e, const struct grt_record *rec)
{
	const struct grt_cuda_call *call = rec->payload;
	char detail[64];

	if (rec->hdr.payload_len < sizeof(*call))
		return;
	switch (rec->hdr.type) {
	case GRT_REC_CUDA_LAUNCH:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_launch_rec)) {
			const struct grt_cuda_launch_rec *l = rec->payload;

			api_slice(e, rec, call, "kernel", grt_strings_get(e->strings, l->kernel_str));
			return;
		}
		break;
	case GRT_REC_CUDA_ALLOC:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_alloc_rec)) {
			const struct grt_cuda_alloc_rec *a = rec->payload;

			api_slice(e, rec, call, NULL, NULL);
			if (!call->ret && a->kind != GRT_ALLOC_HOST && a->kind != GRT_ALLOC_HOST_ALLOC)
				memory_change(e, rec, a->addr, a->bytes, true);
			return;
		}
		break;
	case GRT_REC_CUDA_FREE:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_free_rec)) {
			const struct grt_cuda_free_rec *f = rec->payload;

			api_slice(e, rec, call, NULL, NULL);
			if (!call->ret && grt_cuda_call_returned(call))
				memory_change(e, rec, f->addr, 0, false);
			return;
		}
		break;
	case GRT_REC_CUDA_MEMCPY:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_memcpy_rec)) {
			const struct grt_cuda_memcpy_rec *m = rec->payload;

			snprintf(detail, sizeof(detail), "%llu bytes %s", (unsigned long long)m->bytes,
				 grt_copy_kind_name(m->kind));
			api_slice(e, rec, call, "copy", detail);
			return;
		}
		break;
	case GRT_REC_CUDA_SYNC:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_sync_rec)) {
			const struct grt_cuda_sync_rec *s = rec->payload;

			snprintf(detail, sizeof(detail), "%s stream 0x%llx event 0x%llx",
				 grt_sync_kind_name(s->kind), (unsigned long long)s->stream,
				 (unsigned long long)s->event);
			api_slice(e, rec, call, "sync", detail);
			return;
		}
		break;
	default:
		break;
	}
	api_slice(e, rec, call, NULL, NULL);
}

static void on_offcpu(struct exporter *e, const struct grt_record *rec)
{
	const struct grt_sched_offcpu_rec *o = rec->payload;
	uint32_t track = OFFCPU_TID_BASE + rec->hdr.tid;
	char name[48];

	if (o->on_cpu_ns < rec->hdr.ts_ns)
		return;
	if (first_time(&e->named_tids, track)) {
		name_process(e, rec->hdr.pid, NULL);
		snprintf(name, sizeof(name), "off-CPU %u", rec->hdr.tid);
		metadata(e, "thread_name", rec->hdr.pid, track, name);
	}
	begin_event(e, "X", o->prev_state ? "off-CPU (blocked)" : "off-CPU (preempted)", rec->hdr.pid,
		    track, rec->hdr.ts_ns);
	us_field(e, "dur", o->on_cpu_ns - rec->hdr.ts_ns);
	end_event(e);
}

static void on_uvm(struct exporter *e, const struct grt_record *rec)
{
	static const char *const kinds[] = {
		[GRT_UVM_CPU_FAULT] = "UVM CPU fault", [GRT_UVM_GPU_FAULT] = "UVM GPU fault",
		[GRT_UVM_GPU_FAULT_REPLAY] = "UVM fault replay", [GRT_UVM_MIGRATION] = "UVM migration",
		[GRT_UVM_EVICTION] = "UVM eviction", [GRT_UVM_THRASHING] = "UVM thrashing",
		[GRT_UVM_THROTTLING_START] = "UVM throttling start",
		[GRT_UVM_THROTTLING_END] = "UVM throttling end", [GRT_UVM_MAP_REMOTE] = "UVM map remote",
		[GRT_UVM_READ_DUPLICATE] = "UVM read duplicate",
		[GRT_UVM_READ_DUPLICATE_INVALIDATE] = "UVM read duplicate invalidate",
		[GRT_UVM_FATAL_FAULT] = "UVM fatal fault", [GRT_UVM_QUEUE_OVERFLOW] = "UVM queue overflow",
		[GRT_UVM_FAULT_BUFFER_OVERFLOW] = "UVM fault buffer overflow",
		[GRT_UVM_PAGE_SIZE_CHANGE] = "UVM page size change",
	};
	const struct grt_uvm_event_rec *u = rec->payload;
	uint64_t moved = 0;

	name_process(e, rec->hdr.pid, NULL);
	begin_event(e, "i", GRT_NAME_OF(kinds, u->kind), rec->hdr.pid, 0, rec->hdr.ts_ns);
	jw_key(&e->w, "s");
	jw_string(&e->w, "p");
	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_key(&e->w, "address");
	jw_u64(&e->w, u->address);
	jw_key(&e->w, "bytes");
	jw_u64(&e->w, u->bytes);
	jw_end_object(&e->w);
	end_event(e);
	if (u->kind != GRT_UVM_MIGRATION)
		return;
	u64_map_get(&e->uvm_migrated, rec->hdr.pid, &moved);
	moved += u->bytes;
	u64_map_put(&e->uvm_migrated, rec->hdr.pid, moved);
	counter(e, "UVM migrated", rec->hdr.pid, rec->hdr.ts_ns, "bytes", moved);
}

static void on_xid(struct exporter *e, const struct grt_record *rec)
{
	const struct grt_xid_rec *x = rec->payload;
	char name[32];

	snprintf(name, sizeof(name), "Xid %u", x->code);
	begin_event(e, "i", name, 0, 0, rec->hdr.ts_ns);
	jw_key(&e->w, "s");
	jw_string(&e->w, "g");
	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_key(&e->w, "code");
	jw_u64(&e->w, x->code);
	jw_key(&e->w, "device");
	jw_u64(&e->w, x->device);
	jw_key(&e->w, "message");
	jw_string(&e->w, grt_strings_get(e->strings, x->msg_str));
	jw_end_object(&e->w);
	end_event(e);
}

static void name_gpu(struct exporter *e, uint32_t device)
{
	char name[32];

	if (!first_time(&e->named_gpus, GPU_PID_BASE + device))
		return;
	snprintf(name, sizeof(name), "GPU %u", device);
	metadata(e, "process_name", GPU_PID_BASE + device, 0, name);
}

static void throughput(struct exporter *e, const char *name, uint32_t device, uint64_t ts,
		       uint64_t tx, uint64_t rx)
{
	begin_event(e, "C", name, GPU_PID_BASE + device, 0, ts);
	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_key(&e->w, "tx_bytes_per_s");
	jw_u64(&e->w, tx);
	jw_key(&e->w, "rx_bytes_per_s");
	jw_u64(&e->w, rx);
	jw_end_object(&e->w);
	end_event(e);
}

/* PCIe / NVLink throughput samples: counters on the GPU's own process. */
static void on_pcie(struct exporter *e, const struct grt_record *rec)
{
	const struct grt_pcie_sample_rec *p = rec->payload;

	name_gpu(e, p->device);
	if (p->flags & GRT_PCIE_F_PCIE)
		throughput(e, "PCIe throughput", p->device, rec->hdr.ts_ns, p->pcie_tx_bps, p->pcie_rx_bps);
	if (p->flags & GRT_PCIE_F_NVLINK)
		throughput(e, "NVLink throughput", p->device, rec->hdr.ts_ns, p->nvlink_tx_bps,
			   p->nvlink_rx_bps);
}

static void on_record(struct exporter *e, const struct grt_record *rec)
{
	uint16_t type = rec->hdr.type;

	if (type >= GRT_REC_CUDA_LAUNCH && type <= GRT_REC_CUDA_GRAPH_LAUNCH)
		on_cuda(e, rec);
	else if (type == GRT_REC_SCHED_OFFCPU &&
		 rec->hdr.payload_len >= sizeof(struct grt_sched_offcpu_rec))
		on_offcpu(e, rec);
	else if (type == GRT_REC_UVM_EVENT && rec->hdr.payload_len >= sizeof(struct grt_uvm_event_rec))
		on_uvm(e, rec);
	else if (type == GRT_REC_XID && rec->hdr.payload_len >= sizeof(struct grt_xid_rec))
		on_xid(e, rec);
	else if (type == GRT_REC_PCIE_SAMPLE && rec->hdr.payload_len >= sizeof(struct grt_pcie_sample_rec))
		on_pcie(e, rec);
	else if (type == GRT_REC_PROCESS && rec->hdr.payload_len >= sizeof(struct grt_process_rec))
		name_process(e, rec->hdr.pid,
			     grt_strings_get(e->strings,
					     ((const struct grt_process_rec *)rec->payload)->comm_str));
}

/* ---- GPU side ---- */

static uint64_t track_key(uint32_t gpu_pid, uint32_t pid, uint32_t stream_index)
{
	return ((uint64_t)gpu_pid * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)pid << 20) ^ stream_index;
}

static struct gpu_track *track_of(struct exporter *e, const struct job *j)
{
	uint32_t gpu_pid = j->device == JOB_NO_DEVICE ? UNKNOWN_GPU_PID : GPU_PID_BASE + j->device;
	uint64_t key = track_key(gpu_pid, j->pid, j->stream_index), v;
	struct gpu_track *t;
	char name[64];

	if (u64_map_get(&e->tracks, key, &v)) {
		t = (struct gpu_track *)(uintptr_t)v;
		if (t->gpu_pid == gpu_pid && t->pid == j->pid && t->stream_index == j->stream_index)
			return t;
		return NULL; /* a hash collision: such a job is left out rather than misplaced */
	}
	t = calloc(1, sizeof(*t));
	if (!t || u64_map_put(&e->tracks, key, (uintptr_t)t)) {
		free(t);
		return NULL;
	}
	*t = (struct gpu_track){ .gpu_pid = gpu_pid, .pid = j->pid, .stream_index = j->stream_index,
				 .stream = j->stream };
	if (j->device != JOB_NO_DEVICE) {
		name_gpu(e, j->device);
	} else if (first_time(&e->named_gpus, gpu_pid)) {
		snprintf(name, sizeof(name), "GPU (device not recorded)");
		metadata(e, "process_name", gpu_pid, 0, name);
	}
	return t;
}

/* The first lane of a stream where the slice neither overlaps nor goes back in time. */
static struct gpu_lane *lane_for(struct exporter *e, struct gpu_track *t, uint64_t start,
				 uint64_t end)
{
	char name[96];

	for (uint32_t i = 0; i < t->n_lanes; i++)
		if (start >= t->lanes[i].last_end && start >= t->lanes[i].last_start) {
			if (i)
				e->stats.overlap_lanes++;
			t->lanes[i].last_start = start;
			t->lanes[i].last_end = end;
			return &t->lanes[i];
		}
	if (t->n_lanes == MAX_LANES)
		return NULL;
	t->lanes[t->n_lanes] = (struct gpu_lane){ start, end, ++e->next_gpu_tid };
	if (t->n_lanes)
		snprintf(name, sizeof(name), "pid %u stream 0x%llx (overlap %u)", t->pid,
			 (unsigned long long)t->stream, t->n_lanes);
	else
		snprintf(name, sizeof(name), "pid %u stream 0x%llx", t->pid, (unsigned long long)t->stream);
	metadata(e, "thread_name", t->gpu_pid, t->lanes[t->n_lanes].tid, name);
	if (t->n_lanes)
		e->stats.overlap_lanes++;
	return &t->lanes[t->n_lanes++];
}

static void job_args(struct exporter *e, const struct job *j)
{
	char buf[160];

	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_field_u64(&e->w, "job", j->id);
	if (j->group_id)
		jw_field_u64(&e->w, "group", j->group_id);
	if (j->tags) {
		jw_key(&e->w, "tags");
		jw_string(&e->w, job_tags_text(j, buf, sizeof(buf)));
	}
	if (j->known & JOB_K_SUBMIT_HOST) {
		us_field(e, "t_submit_host_us", j->t_submit_host);
	}
	if (j->known & JOB_K_QUEUE) {
		us_field(e, "t_queue_us", j->t_queue);
	}
	if (j->known & JOB_K_COMPLETE) {
		us_field(e, "t_complete_us", j->t_complete);
	}
	if ((j->known & JOB_K_GPU_WAIT) && j->t_gpu_wait) {
		us_field(e, "t_gpu_wait_us", j->t_gpu_wait);
	}
	if (j->t_vm_fault || j->vm_faults) {
		us_field(e, "t_vm_fault_us", j->t_vm_fault);
	}
	if (j->known & JOB_K_TOTAL) {
		us_field(e, "t_total_us", j->t_total);
	}
	if (j->missing) {
		jw_key(&e->w, "incomplete");
		jw_string(&e->w, job_missing_text(j, buf, sizeof(buf)));
	}
	jw_end_object(&e->w);
}

/*
 * Whether the job's slice ends the flow its launch call started (api_slice):
 * the call returned without error, and it began before the execution, so the
 * importer, which goes in time order, has seen the start first.
 */
static bool has_flow(const struct job *j)
{
	return !(j->missing & (JOB_MISS_HOST | JOB_MISS_SUBMIT)) && !(j->flags & JOB_F_FAILED) &&
	       j->tid && j->api_enter && j->submit >= j->api_enter && j->start > j->api_enter;
}

static void on_job(void *ctx, struct job *j)
{
	struct exporter *e = ctx;
	struct gpu_track *t;
	struct gpu_lane *lane;
	bool flow;

	e->stats.jobs++;
	if (!(j->known & JOB_K_EXEC))
		return; /* never seen on the GPU: its host call is on the thread's track */
	t = track_of(e, j);
	lane = t ? lane_for(e, t, j->start, j->end) : NULL;
	if (!lane)
		return;
	flow = has_flow(j);
	begin_event(e, "X", j->name ? j->name : "?", t->gpu_pid, lane->tid, j->start);
	us_field(e, "dur", j->t_exec);
	jw_key(&e->w, "cat");
	jw_string(&e->w, j->kind == JOB_KERNEL ? "kernel" : "copy");
	if (flow) {
		jw_field_u64(&e->w, "bind_id", j->group_id ? j->group_id : j->id);
		jw_key(&e->w, "flow_in");
		jw_bool(&e->w, true);
		e->stats.flows++;
	}
	job_args(e, j);
	end_event(e);
}

static void exporter_destroy(struct exporter *e)
{
	uint64_t k, v;

	for (size_t i = 0; u64_map_iter(&e->tracks, &i, &k, &v);)
		free((void *)(uintptr_t)v);
	u64_map_destroy(&e->tracks);
	u64_map_destroy(&e->named_pids);
	u64_map_destroy(&e->named_tids);
	u64_map_destroy(&e->named_gpus);
	u64_map_destroy(&e->alloc_bytes);
	u64_map_destroy(&e->mem_in_use);
	u64_map_destroy(&e->uvm_migrated);
	job_pipeline_free(e->pipeline);
}

static int stream_trace(struct exporter *e, struct grt_reader *r, char *err, size_t err_len)
{
	struct grt_record rec;
	enum grt_read_status st;
	struct own_work own;

	e->strings = grt_reader_strings(r);
	own_work_init(&own);
	/* the builder first: a launch's slice names the job the builder opened for it */
	while ((st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		job_pipeline_record(e->pipeline, &rec, e->strings);
		if (!own_work_record(&own, &rec, e->strings) || e->show_own)
			on_record(e, &rec);
	}
	own_work_destroy(&own);
	job_pipeline_finish(e->pipeline);
	if (st == GRT_READ_ERROR) {
		snprintf(err, err_len, "%s", grt_reader_error(r));
		return -EIO;
	}
	return 0;
}

int perfetto_export(const char *trace_path, FILE *out, const struct job_thresholds *t,
		    struct perfetto_stats *stats, char *err, size_t err_len)
{
	static const struct job_builder_ops ops = { .job = on_job };
	struct grt_reader *r = grt_reader_open(trace_path, err, err_len);
	struct exporter e = { .out = out, .show_own = t->show_own };
	int rc, write_rc = 0;

	if (!r)
		return -EIO;
	u64_map_init(&e.tracks);
	u64_map_init(&e.named_pids);
	u64_map_init(&e.named_tids);
	u64_map_init(&e.named_gpus);
	u64_map_init(&e.alloc_bytes);
	u64_map_init(&e.mem_in_use);
	u64_map_init(&e.uvm_migrated);
	e.pipeline = job_pipeline_new(grt_reader_header(r), t, &ops, &e);
	if (!e.pipeline) {
		grt_reader_close(r);
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	rc = job_pipeline_prepass(e.pipeline, trace_path, err, err_len);
	if (!rc) {
		jw_init(&e.w, out);
		/* gigabytes: written by a thread while the next buffer fills (straight on without one) */
		jw_begin_async(&e.w, OUT_BUFFER);
		jw_begin_object(&e.w);
		jw_key(&e.w, "displayTimeUnit");
		jw_string(&e.w, "ns");
		jw_key(&e.w, "traceEvents");
		jw_begin_array(&e.w);
		rc = stream_trace(&e, r, err, err_len);
		jw_end_array(&e.w);
		jw_end_object(&e.w);
		jw_newline(&e.w);
		write_rc = jw_end_async(&e.w);
	}
	if (!rc && (write_rc || fflush(out) || ferror(out))) {
		snprintf(err, err_len, "writing the output failed: %s",
			 strerror(write_rc ? -write_rc : errno));
		rc = -EIO;
	}
	if (stats)
		*stats = e.stats;
	exporter_destroy(&e);
	grt_reader_close(r);
	return rc;
}
