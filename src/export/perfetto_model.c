/* The timeline's content, shared by the Perfetto encoders: one streaming pass over records and jobs. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/gpu_links.h"
#include "analysis/jobs/pipeline.h"
#include "analysis/own_work.h"
#include "common/u64_map.h"
#include "export/perfetto_model.h"
#include "export/perfetto_queue.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/records_kernel.h"
#include "trace/records_uvm.h"
#include "trace/trace_names.h"

struct model {
	const struct pf_sink_ops *ops;
	void *ctx;
	struct job_pipeline *pipeline;
	struct gpu_links *links;	/* the GPU-to-GPU topology, names the link of peer copies */
	const struct grt_strings *strings;
	struct perfetto_stats stats;
	struct u64_map streams;		/* (device, pid, stream_index) hash -> struct pf_stream * */
	uint32_t next_lane_id;
	struct u64_map alloc_bytes;	/* device address -> bytes */
	struct u64_map mem_in_use;	/* pid -> bytes */
	struct u64_map uvm_migrated;	/* pid -> bytes */
	bool show_own;			/* --own: grtrace's own calls drawn as the program's */
};

/* ---- host side ---- */

/*
 * A call that became a job starts the arrow to its execution (the graph's
 * for graph launches): only a call that returned without error, as arrows
 * bind to slices and a failed call ran nothing.
 */
static void on_call(struct model *m, const struct grt_record *rec, struct pf_call *c)
{
	const struct grt_cuda_call *call = rec->payload;
	uint64_t job = job_builder_opened_id(job_pipeline_builder(m->pipeline));

	c->pid = rec->hdr.pid;
	c->tid = rec->hdr.tid;
	c->comm = grt_strings_get(m->strings, call->comm_str);
	c->api = grt_cuda_api_name(call->api);
	c->start = rec->hdr.ts_ns;
	c->returned = grt_cuda_call_returned(call) && call->return_ns >= rec->hdr.ts_ns;
	c->end = c->returned ? call->return_ns : c->start;
	c->unsampled = call->flags & GRT_CUDA_F_RETURN_UNSAMPLED;
	c->ret = call->ret;
	c->flow = job && c->returned && !call->ret ? job : 0;
	m->ops->call(m->ctx, c);
}

static void memory_change(struct model *m, const struct grt_record *rec, uint64_t addr,
			  uint64_t bytes, bool alloc)
{
	uint64_t in_use = 0, old = 0;

	u64_map_get(&m->mem_in_use, rec->hdr.pid, &in_use);
	if (alloc) {
		if (!addr || u64_map_put(&m->alloc_bytes, addr, bytes))
			return;
		in_use += bytes;
	} else {
		if (!u64_map_remove(&m->alloc_bytes, addr, &old))
			return; /* allocated before the trace started: unknown size */
		in_use = in_use > old ? in_use - old : 0;
	}
	u64_map_put(&m->mem_in_use, rec->hdr.pid, in_use);
	m->ops->memory(m->ctx, rec->hdr.pid,
		       alloc ? rec->hdr.ts_ns : ((const struct grt_cuda_call *)rec->payload)->return_ns,
		       in_use);
}

static void on_cuda(struct model *m, const struct grt_record *rec)
{
	const struct grt_cuda_call *call = rec->payload;
	struct pf_call c = { .detail = PF_DETAIL_NONE };

	if (rec->hdr.payload_len < sizeof(*call))
		return;
	switch (rec->hdr.type) {
	case GRT_REC_CUDA_LAUNCH:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_launch_rec)) {
			const struct grt_cuda_launch_rec *l = rec->payload;

			c.detail = PF_DETAIL_KERNEL;
			c.kernel = grt_strings_get(m->strings, l->kernel_str);
		}
		break;
	case GRT_REC_CUDA_ALLOC:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_alloc_rec)) {
			const struct grt_cuda_alloc_rec *a = rec->payload;

			on_call(m, rec, &c);
			if (!call->ret && a->kind != GRT_ALLOC_HOST && a->kind != GRT_ALLOC_HOST_ALLOC)
				memory_change(m, rec, a->addr, a->bytes, true);
			return;
		}
		break;
	case GRT_REC_CUDA_FREE:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_free_rec)) {
			const struct grt_cuda_free_rec *f = rec->payload;

			on_call(m, rec, &c);
			if (!call->ret && grt_cuda_call_returned(call))
				memory_change(m, rec, f->addr, 0, false);
			return;
		}
		break;
	case GRT_REC_CUDA_MEMCPY:
		if (rec->hdr.payload_len >= GRT_CUDA_MEMCPY_REC_V1_2_LEN) {
			const struct grt_cuda_memcpy_rec *cp = rec->payload;

			const struct device_map *dm =
				job_builder_devices(job_pipeline_builder(m->pipeline));

			c.detail = PF_DETAIL_COPY;
			c.bytes = cp->bytes;
			c.kind = grt_copy_kind_name(cp->kind);
			c.peer = cp->kind == GRT_COPY_PEER;
			c.src_device = dm ? device_map_of_ctx(dm, rec->hdr.pid, cp->src_ctx) : -1;
			c.dst_device = dm ? device_map_of_ctx(dm, rec->hdr.pid, cp->dst_ctx) : -1;
			if (c.peer)
				c.link = peer_link_name(gpu_links_of_devices(m->links, dm, c.src_device,
									     c.dst_device));
		}
		break;
	case GRT_REC_CUDA_SYNC:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_sync_rec)) {
			const struct grt_cuda_sync_rec *s = rec->payload;

			c.detail = PF_DETAIL_SYNC;
			c.kind = grt_sync_kind_name(s->kind);
			c.sync = s->kind;
			c.stream = s->stream;
			c.event = s->event;
		}
		break;
	default:
		break;
	}
	on_call(m, rec, &c);
}

static void on_offcpu(struct model *m, const struct grt_record *rec)
{
	const struct grt_sched_offcpu_rec *o = rec->payload;

	if (o->on_cpu_ns < rec->hdr.ts_ns)
		return;
	m->ops->offcpu(m->ctx, rec->hdr.pid, rec->hdr.tid, rec->hdr.ts_ns, o->on_cpu_ns,
		       o->prev_state != 0);
}

static void on_uvm(struct model *m, const struct grt_record *rec)
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

	m->ops->uvm(m->ctx, rec->hdr.pid, rec->hdr.ts_ns, GRT_NAME_OF(kinds, u->kind), u->address,
		    u->bytes);
	if (u->kind != GRT_UVM_MIGRATION)
		return;
	u64_map_get(&m->uvm_migrated, rec->hdr.pid, &moved);
	moved += u->bytes;
	u64_map_put(&m->uvm_migrated, rec->hdr.pid, moved);
	m->ops->uvm_migrated(m->ctx, rec->hdr.pid, rec->hdr.ts_ns, moved);
}

/* PCIe / NVLink throughput samples: counters of the GPU. */
static void on_pcie(struct model *m, const struct grt_record *rec)
{
	const struct grt_pcie_sample_rec *p = rec->payload;

	if (p->flags & GRT_PCIE_F_PCIE)
		m->ops->throughput(m->ctx, p->device, PF_LINK_PCIE, rec->hdr.ts_ns, p->pcie_tx_bps,
				   p->pcie_rx_bps);
	if (p->flags & GRT_PCIE_F_NVLINK)
		m->ops->throughput(m->ctx, p->device, PF_LINK_NVLINK, rec->hdr.ts_ns,
				   p->nvlink_tx_bps, p->nvlink_rx_bps);
}

/* One NVLink link's sample: a counter pair of its own under the GPU. */
static void on_nvlink(struct model *m, const struct grt_record *rec)
{
	const struct grt_nvlink_sample_rec *n = rec->payload;

	m->ops->throughput(m->ctx, n->device, (enum pf_link)(PF_LINK_NVLINK_PORT + n->link),
			   rec->hdr.ts_ns, n->tx_bps, n->rx_bps);
}

static void on_record(struct model *m, const struct grt_record *rec)
{
	uint16_t type = rec->hdr.type;

	if (type >= GRT_REC_CUDA_LAUNCH && type <= GRT_REC_CUDA_GRAPH_LAUNCH) {
		on_cuda(m, rec);
	} else if (type == GRT_REC_SCHED_OFFCPU &&
		   rec->hdr.payload_len >= sizeof(struct grt_sched_offcpu_rec)) {
		on_offcpu(m, rec);
	} else if (type == GRT_REC_UVM_EVENT &&
		   rec->hdr.payload_len >= sizeof(struct grt_uvm_event_rec)) {
		on_uvm(m, rec);
	} else if (type == GRT_REC_XID && rec->hdr.payload_len >= sizeof(struct grt_xid_rec)) {
		const struct grt_xid_rec *x = rec->payload;

		m->ops->xid(m->ctx, rec->hdr.ts_ns, x->code, x->device,
			    grt_strings_get(m->strings, x->msg_str));
	} else if (type == GRT_REC_PCIE_SAMPLE &&
		   rec->hdr.payload_len >= sizeof(struct grt_pcie_sample_rec)) {
		on_pcie(m, rec);
	} else if (type == GRT_REC_NVLINK_SAMPLE &&
		   rec->hdr.payload_len >= sizeof(struct grt_nvlink_sample_rec)) {
		on_nvlink(m, rec);
	} else if (type == GRT_REC_GPU_LINK) {
		gpu_links_record(m->links, rec);
	} else if (type == GRT_REC_PROCESS && rec->hdr.payload_len >= sizeof(struct grt_process_rec)) {
		const struct grt_process_rec *p = rec->payload;

		m->ops->process(m->ctx, rec->hdr.pid, grt_strings_get(m->strings, p->comm_str));
	}
}

/* ---- GPU side ---- */

const char *pf_gpu_name(uint32_t device, char *buf, size_t len)
{
	if (device == JOB_NO_DEVICE)
		snprintf(buf, len, "GPU (device not recorded)");
	else
		snprintf(buf, len, "GPU %u", device);
	return buf;
}

const char *pf_lane_name(const struct pf_stream *s, const struct pf_lane *lane, char *buf,
			 size_t len)
{
	if (lane->index)
		snprintf(buf, len, "pid %u stream 0x%llx (overlap %u)", s->pid,
			 (unsigned long long)s->stream, lane->index);
	else
		snprintf(buf, len, "pid %u stream 0x%llx", s->pid, (unsigned long long)s->stream);
	return buf;
}

static uint64_t stream_key(uint32_t device, uint32_t pid, uint32_t stream_index)
{
	return ((uint64_t)device * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)pid << 20) ^ stream_index;
}

static struct pf_stream *stream_of(struct model *m, const struct job *j)
{
	uint64_t key = stream_key(j->device, j->pid, j->stream_index), v;
	struct pf_stream *s;

	if (u64_map_get(&m->streams, key, &v)) {
		s = (struct pf_stream *)(uintptr_t)v;
		if (s->device == j->device && s->pid == j->pid && s->stream_index == j->stream_index)
			return s;
		return NULL; /* a hash collision: such a job is left out rather than misplaced */
	}
	s = calloc(1, sizeof(*s));
	if (!s || u64_map_put(&m->streams, key, (uintptr_t)s)) {
		free(s);
		return NULL;
	}
	*s = (struct pf_stream){ .device = j->device, .pid = j->pid, .stream_index = j->stream_index,
				 .stream = j->stream };
	m->ops->stream(m->ctx, s);
	return s;
}

/* The first lane of a stream where the slice neither overlaps nor goes back in time. */
static struct pf_lane *lane_for(struct model *m, struct pf_stream *s, uint64_t start, uint64_t end)
{
	struct pf_lane *lane;

	for (uint32_t i = 0; i < s->n_lanes; i++)
		if (start >= s->lanes[i].last_end && start >= s->lanes[i].last_start) {
			if (i)
				m->stats.overlap_lanes++;
			s->lanes[i].last_start = start;
			s->lanes[i].last_end = end;
			return &s->lanes[i];
		}
	if (s->n_lanes == PF_MAX_LANES)
		return NULL;
	lane = &s->lanes[s->n_lanes];
	*lane = (struct pf_lane){ start, end, ++m->next_lane_id, s->n_lanes, NULL };
	m->ops->lane(m->ctx, s, lane);
	if (s->n_lanes)
		m->stats.overlap_lanes++;
	s->n_lanes++;
	return lane;
}

/*
 * Whether the job's slice ends the arrow its launch call started (on_call):
 * the call returned without error, and it began before the execution, so the
 * importers, which go in time order, see the start first.
 */
static bool has_flow(const struct job *j)
{
	/* a DRM job's submitting ioctl is no call slice here: no arrow starts */
	return j->kind != JOB_DRM && !(j->missing & (JOB_MISS_HOST | JOB_MISS_SUBMIT)) && !(j->flags & JOB_F_FAILED) &&
	       j->tid && j->api_enter && j->submit >= j->api_enter && j->start > j->api_enter;
}

static void on_job(void *ctx, struct job *j)
{
	struct model *m = ctx;
	struct pf_stream *s;
	struct pf_lane *lane;
	bool flow;

	m->stats.jobs++;
	if (!(j->known & JOB_K_EXEC))
		return; /* never seen on the GPU: its host call is on the thread's track */
	s = stream_of(m, j);
	lane = s ? lane_for(m, s, j->start, j->end) : NULL;
	if (!lane)
		return;
	flow = has_flow(j);
	if (flow)
		m->stats.flows++;
	m->ops->job(m->ctx, s, lane, j, flow);
}

static void model_destroy(struct model *m)
{
	uint64_t k, v;

	for (size_t i = 0; u64_map_iter(&m->streams, &i, &k, &v);)
		free((void *)(uintptr_t)v);
	u64_map_destroy(&m->streams);
	u64_map_destroy(&m->alloc_bytes);
	u64_map_destroy(&m->mem_in_use);
	u64_map_destroy(&m->uvm_migrated);
	job_pipeline_free(m->pipeline);
	gpu_links_free(m->links);
}

static int stream_trace(struct model *m, struct grt_reader *r, char *err, size_t err_len)
{
	struct grt_record rec;
	enum grt_read_status st;
	struct own_work own;

	m->strings = grt_reader_strings(r);
	own_work_init(&own);
	/* the builder first: a launch's slice names the job the builder opened for it */
	while ((st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		job_pipeline_record(m->pipeline, &rec, m->strings);
		if (!own_work_record(&own, &rec, m->strings) || m->show_own)
			on_record(m, &rec);
	}
	own_work_destroy(&own);
	job_pipeline_finish(m->pipeline);
	if (st == GRT_READ_ERROR) {
		snprintf(err, err_len, "%s", grt_reader_error(r));
		return -EIO;
	}
	return 0;
}

int perfetto_model_run(const char *trace_path, const struct job_thresholds *t,
		       const struct pf_sink_ops *ops, void *ctx, struct perfetto_stats *stats,
		       char *err, size_t err_len)
{
	static const struct job_builder_ops job_ops = { .job = on_job };
	struct grt_reader *r = grt_reader_open(trace_path, err, err_len);
	struct model m = { .ops = ops, .ctx = ctx, .show_own = t->show_own };
	struct pf_queue *queue;
	int rc, queue_rc;

	if (!r)
		return -EIO;
	/* the encoder on a core of its own when there is a thread for it */
	queue = pf_queue_start(ops, ctx);
	if (queue) {
		m.ops = &pf_queue_ops;
		m.ctx = queue;
	}
	u64_map_init(&m.streams);
	u64_map_init(&m.alloc_bytes);
	u64_map_init(&m.mem_in_use);
	u64_map_init(&m.uvm_migrated);
	m.pipeline = job_pipeline_new(grt_reader_header(r), t, &job_ops, &m);
	m.links = gpu_links_new();
	rc = m.pipeline && m.links ? job_pipeline_prepass(m.pipeline, trace_path, err, err_len) : -ENOMEM;
	if (!rc)
		rc = stream_trace(&m, r, err, err_len);
	/* before the streams, lanes and job names it points at go */
	queue_rc = queue ? pf_queue_finish(queue) : 0;
	if (!rc && queue_rc)
		rc = queue_rc;
	if (rc == -ENOMEM)
		snprintf(err, err_len, "out of memory");
	stats->jobs = m.stats.jobs;
	stats->flows = m.stats.flows;
	stats->overlap_lanes = m.stats.overlap_lanes;
	model_destroy(&m);
	grt_reader_close(r);
	return rc;
}
