/* The timeline as Chrome trace-event JSON: one event per thing, written as the model hands it out. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common/json_writer.h"
#include "common/u64_map.h"
#include "export/perfetto.h"
#include "export/perfetto_model.h"

/*
 * The JSON format knows processes and threads only: each GPU is a process of
 * its own (pid GPU_PID_BASE + device) whose threads are the stream lanes, and
 * a thread's off-CPU track is a thread of its process (tid OFFCPU_TID_BASE +
 * tid). A 10^7-record trace makes gigabytes, so every event is kept short:
 * complete (X) slices, flows as fields of the slices they join, no field that
 * repeats what the track already says.
 */
#define GPU_PID_BASE 1000000000u
#define UNKNOWN_GPU_PID (GPU_PID_BASE - 1)
#define OFFCPU_TID_BASE (1u << 30)
#define OUT_BUFFER (1u << 20)
#define NAMED_CACHE 256

struct json_sink {
	struct json_writer w;
	struct perfetto_stats stats;
	struct u64_map named_pids;	/* pid -> 1 once process_name was written */
	struct u64_map named_tids;	/* tid -> 1 once thread_name was written */
	uint64_t named_cache[NAMED_CACHE]; /* by tid: 1 << 32 | tid of threads surely named */
	struct u64_map named_gpus;
};

/* ---- event scaffolding ---- */

/* The format counts microseconds: ns with at most 3 decimals, trailing zeros dropped. */
static void us_field(struct json_sink *e, const char *key, uint64_t ns)
{
	jw_key(&e->w, key);
	jw_decimal(&e->w, ns, 3);
}

static void begin_event(struct json_sink *e, const char *ph, const char *name, uint32_t pid,
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

static void end_event(struct json_sink *e)
{
	jw_end_object(&e->w);
}

static void metadata(struct json_sink *e, const char *what, uint32_t pid, uint32_t tid,
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

static void name_process(struct json_sink *e, uint32_t pid, const char *comm)
{
	char buf[96];

	if (!first_time(&e->named_pids, pid))
		return;
	snprintf(buf, sizeof(buf), "%s %u", comm ? comm : "pid", pid);
	metadata(e, "process_name", pid, 0, buf);
}

/* Every API call asks: a small cache in front of the maps answers most of them. */
static void name_thread(struct json_sink *e, uint32_t pid, uint32_t tid, const char *comm)
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

static uint32_t gpu_pid(uint32_t device)
{
	return device == JOB_NO_DEVICE ? UNKNOWN_GPU_PID : GPU_PID_BASE + device;
}

static void name_gpu(struct json_sink *e, uint32_t device)
{
	char name[32];

	if (first_time(&e->named_gpus, gpu_pid(device)))
		metadata(e, "process_name", gpu_pid(device), 0, pf_gpu_name(device, name, sizeof(name)));
}


/* ---- host side ---- */

/*
 * A CUDA call on its thread's track (the track says what it is: no
 * category). The arrow to its execution is a v2 flow bound to this slice by
 * the job's id, so it costs two fields instead of two events of its own.
 */
static void on_call(void *ctx, const struct pf_call *c)
{
	struct json_sink *e = ctx;
	char detail[64];
	const char *detail_key = NULL;

	name_thread(e, c->pid, c->tid, c->comm);
	begin_event(e, c->returned ? "X" : "i", c->api, c->pid, c->tid, c->start);
	if (c->returned) {
		us_field(e, "dur", c->end - c->start);
	} else {
		jw_key(&e->w, "s");
		jw_string(&e->w, "t");
	}
	if (c->flow) {
		jw_field_u64(&e->w, "bind_id", c->flow);
		jw_key(&e->w, "flow_out");
		jw_bool(&e->w, true);
	}
	if (c->detail == PF_DETAIL_KERNEL && c->kernel) {
		detail_key = "kernel";
	} else if (c->detail == PF_DETAIL_COPY) {
		detail_key = "copy";
		snprintf(detail, sizeof(detail), "%llu bytes %s", (unsigned long long)c->bytes,
			 c->kind);
		if (c->peer) /* device -1: its context was not seen */
			snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
				 " device %d -> %d", c->src_device, c->dst_device);
	} else if (c->detail == PF_DETAIL_SYNC) {
		detail_key = "sync";
		snprintf(detail, sizeof(detail), "%s stream 0x%llx event 0x%llx", c->kind,
			 (unsigned long long)c->stream, (unsigned long long)c->event);
	}
	if (c->ret || !c->returned || detail_key) {
		jw_key(&e->w, "args");
		jw_begin_object(&e->w);
		if (c->ret) {
			jw_key(&e->w, "ret");
			jw_i64(&e->w, c->ret);
		}
		if (!c->returned) {
			jw_key(&e->w, "note");
			jw_string(&e->w, c->unsampled ? "return not sampled" : "never returned");
		}
		if (detail_key) {
			jw_key(&e->w, detail_key);
			jw_string(&e->w, c->detail == PF_DETAIL_KERNEL ? c->kernel : detail);
		}
		if (c->detail == PF_DETAIL_COPY && c->link) {
			jw_key(&e->w, "link");
			jw_string(&e->w, c->link);
		}
		jw_end_object(&e->w);
	}
	end_event(e);
}

static void counter(struct json_sink *e, const char *name, uint32_t pid, uint64_t ts,
		    const char *key, uint64_t value)
{
	begin_event(e, "C", name, pid, 0, ts);
	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_key(&e->w, key);
	jw_u64(&e->w, value);
	jw_end_object(&e->w);
	end_event(e);
}

static void on_memory(void *ctx, uint32_t pid, uint64_t ts, uint64_t in_use)
{
	struct json_sink *e = ctx;

	name_process(e, pid, NULL);
	counter(e, "device memory in use", pid, ts, "bytes", in_use);
}

static void on_offcpu(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end,
		      bool blocked)
{
	struct json_sink *e = ctx;
	uint32_t track = OFFCPU_TID_BASE + tid;
	char name[48];

	if (first_time(&e->named_tids, track)) {
		name_process(e, pid, NULL);
		snprintf(name, sizeof(name), "off-CPU %u", tid);
		metadata(e, "thread_name", pid, track, name);
	}
	begin_event(e, "X", blocked ? "off-CPU (blocked)" : "off-CPU (preempted)", pid, track, start);
	us_field(e, "dur", end - start);
	end_event(e);
}

static void on_uvm(void *ctx, uint32_t pid, uint64_t ts, const char *kind, uint64_t address,
		   uint64_t bytes)
{
	struct json_sink *e = ctx;

	name_process(e, pid, NULL);
	begin_event(e, "i", kind, pid, 0, ts);
	jw_key(&e->w, "s");
	jw_string(&e->w, "p");
	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_key(&e->w, "address");
	jw_u64(&e->w, address);
	jw_key(&e->w, "bytes");
	jw_u64(&e->w, bytes);
	jw_end_object(&e->w);
	end_event(e);
}

static void on_uvm_migrated(void *ctx, uint32_t pid, uint64_t ts, uint64_t total)
{
	counter(ctx, "UVM migrated", pid, ts, "bytes", total);
}

static void on_xid(void *ctx, uint64_t ts, uint32_t code, uint32_t device, const char *message)
{
	struct json_sink *e = ctx;
	char name[32];

	snprintf(name, sizeof(name), "Xid %u", code);
	begin_event(e, "i", name, 0, 0, ts);
	jw_key(&e->w, "s");
	jw_string(&e->w, "g");
	jw_key(&e->w, "args");
	jw_begin_object(&e->w);
	jw_key(&e->w, "code");
	jw_u64(&e->w, code);
	jw_key(&e->w, "device");
	jw_u64(&e->w, device);
	jw_key(&e->w, "message");
	jw_string(&e->w, message);
	jw_end_object(&e->w);
	end_event(e);
}

/* PCIe / NVLink throughput samples: counters on the GPU's own process. */
static void on_throughput(void *ctx, uint32_t device, enum pf_link link, uint64_t ts, uint64_t tx,
			  uint64_t rx)
{
	struct json_sink *e = ctx;
	char name[40] = "NVLink throughput";

	if (link == PF_LINK_PCIE)
		snprintf(name, sizeof(name), "PCIe throughput");
	else if (link >= PF_LINK_NVLINK_PORT)
		snprintf(name, sizeof(name), "NVLink %u throughput", link - PF_LINK_NVLINK_PORT);
	name_gpu(e, device);
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

/* ---- GPU side ---- */

static void on_stream(void *ctx, struct pf_stream *s)
{
	name_gpu(ctx, s->device);
}

static void on_lane(void *ctx, struct pf_stream *s, struct pf_lane *lane)
{
	char name[96];

	metadata(ctx, "thread_name", gpu_pid(s->device), lane->id,
		 pf_lane_name(s, lane, name, sizeof(name)));
}

static void job_args(struct json_sink *e, const struct job *j)
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
	if (j->known & JOB_K_SUBMIT_HOST)
		us_field(e, "t_submit_host_us", j->t_submit_host);
	if (j->known & JOB_K_QUEUE)
		us_field(e, "t_queue_us", j->t_queue);
	if (j->known & JOB_K_COMPLETE)
		us_field(e, "t_complete_us", j->t_complete);
	if ((j->known & JOB_K_GPU_WAIT) && j->t_gpu_wait)
		us_field(e, "t_gpu_wait_us", j->t_gpu_wait);
	if (j->t_vm_fault || j->vm_faults)
		us_field(e, "t_vm_fault_us", j->t_vm_fault);
	if (j->known & JOB_K_TOTAL)
		us_field(e, "t_total_us", j->t_total);
	if (j->missing) {
		jw_key(&e->w, "incomplete");
		jw_string(&e->w, job_missing_text(j, buf, sizeof(buf)));
	}
	jw_end_object(&e->w);
}

/* A kernel or copy from START to END; a flow enters it bound by its launch's job id. */
static void on_job(void *ctx, struct pf_stream *s, struct pf_lane *lane, const struct job *j,
		   bool flow)
{
	struct json_sink *e = ctx;

	begin_event(e, "X", j->name ? j->name : "?", gpu_pid(s->device), lane->id, j->start);
	us_field(e, "dur", j->t_exec);
	jw_key(&e->w, "cat");
	jw_string(&e->w, j->kind == JOB_KERNEL ? "kernel" : "copy");
	if (flow) {
		jw_field_u64(&e->w, "bind_id", j->group_id ? j->group_id : j->id);
		jw_key(&e->w, "flow_in");
		jw_bool(&e->w, true);
	}
	job_args(e, j);
	end_event(e);
}

static void on_process(void *ctx, uint32_t pid, const char *comm)
{
	name_process(ctx, pid, comm);
}

int perfetto_json_export(const char *trace_path, FILE *out, const struct job_thresholds *t,
			 struct perfetto_stats *stats, char *err, size_t err_len)
{
	static const struct pf_sink_ops ops = {
		.process = on_process, .call = on_call, .memory = on_memory, .offcpu = on_offcpu,
		.uvm = on_uvm, .uvm_migrated = on_uvm_migrated, .xid = on_xid,
		.throughput = on_throughput, .stream = on_stream, .lane = on_lane, .job = on_job,
	};
	struct json_sink e = { 0 };
	int rc, write_rc;

	u64_map_init(&e.named_pids);
	u64_map_init(&e.named_tids);
	u64_map_init(&e.named_gpus);
	jw_init(&e.w, out);
	/* gigabytes: written by a thread while the next buffer fills (straight on without one) */
	jw_begin_async(&e.w, OUT_BUFFER);
	jw_begin_object(&e.w);
	jw_key(&e.w, "displayTimeUnit");
	jw_string(&e.w, "ns");
	jw_key(&e.w, "traceEvents");
	jw_begin_array(&e.w);
	rc = perfetto_model_run(trace_path, t, &ops, &e, &e.stats, err, err_len);
	jw_end_array(&e.w);
	jw_end_object(&e.w);
	jw_newline(&e.w);
	write_rc = jw_end_async(&e.w);
	if (!rc && (write_rc || fflush(out) || ferror(out))) {
		snprintf(err, err_len, "writing the output failed: %s",
			 strerror(write_rc ? -write_rc : errno));
		rc = -EIO;
	}
	*stats = e.stats;
	u64_map_destroy(&e.named_pids);
	u64_map_destroy(&e.named_tids);
	u64_map_destroy(&e.named_gpus);
	return rc;
}
