/* Batches of the model's calls, replayed on the encoder by a buffer worker. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/buffer_worker.h"
#include "export/perfetto_queue.h"

#define BATCH (256u << 10)

enum message_type {
	MSG_PROCESS = 1,
	MSG_CALL,
	MSG_MEMORY,
	MSG_OFFCPU,
	MSG_UVM,
	MSG_UVM_MIGRATED,
	MSG_XID,
	MSG_THROUGHPUT,
	MSG_STREAM,
	MSG_LANE,
	MSG_JOB,
};

/* One call, with what the call passes. */
struct message {
	uint32_t type;
	uint32_t size;		/* of the whole message, a multiple of 8 */
	union {
		struct pf_call call;
		struct {
			uint32_t pid;
			uint32_t tid;
			uint64_t ts;
			uint64_t end;
			uint64_t value;
			uint64_t bytes;
			const char *text;
			bool blocked;
		} host;
		struct {
			uint32_t code;
			uint32_t device;
			enum pf_link link;
			uint64_t ts;
			uint64_t tx;
			uint64_t rx;
			const char *text;
		} gpu;
		struct {
			struct pf_stream *s;
			struct pf_lane *lane;
			bool flow;
			struct job job;
		} work;
	} u;
};

/* A message that carries only the union's member: most are far smaller than a job's. */
#define MESSAGE_SIZE(member) (offsetof(struct message, u) + sizeof(((struct message *)0)->u.member))

struct pf_queue {
	const struct pf_sink_ops *ops;
	void *ctx;
	struct buffer_worker *worker;
	char *buf;		/* being filled */
	size_t len;
	char *spare;		/* the worker has or had it */
};

_Static_assert(sizeof(struct message) <= BATCH, "a message fits in a batch");

static int replay(void *ctx, const void *buf, size_t len)
{
	const struct pf_queue *q = ctx;
	const struct pf_sink_ops *ops = q->ops;
	const char *p = buf, *end = p + len;

	while (p < end) {
		const struct message *m = (const struct message *)p;

		switch (m->type) {
		case MSG_PROCESS:
			ops->process(q->ctx, m->u.host.pid, m->u.host.text);
			break;
		case MSG_CALL:
			ops->call(q->ctx, &m->u.call);
			break;
		case MSG_MEMORY:
			ops->memory(q->ctx, m->u.host.pid, m->u.host.ts, m->u.host.value);
			break;
		case MSG_OFFCPU:
			ops->offcpu(q->ctx, m->u.host.pid, m->u.host.tid, m->u.host.ts, m->u.host.end,
				    m->u.host.blocked);
			break;
		case MSG_UVM:
			ops->uvm(q->ctx, m->u.host.pid, m->u.host.ts, m->u.host.text, m->u.host.value,
				 m->u.host.bytes);
			break;
		case MSG_UVM_MIGRATED:
			ops->uvm_migrated(q->ctx, m->u.host.pid, m->u.host.ts, m->u.host.value);
			break;
		case MSG_XID:
			ops->xid(q->ctx, m->u.gpu.ts, m->u.gpu.code, m->u.gpu.device, m->u.gpu.text);
			break;
		case MSG_THROUGHPUT:
			ops->throughput(q->ctx, m->u.gpu.device, m->u.gpu.link, m->u.gpu.ts, m->u.gpu.tx,
					m->u.gpu.rx);
			break;
		case MSG_STREAM:
			ops->stream(q->ctx, m->u.work.s);
			break;
		case MSG_LANE:
			ops->lane(q->ctx, m->u.work.s, m->u.work.lane);
			break;
		case MSG_JOB:
			ops->job(q->ctx, m->u.work.s, m->u.work.lane, &m->u.work.job, m->u.work.flow);
			break;
		}
		p += m->size;
	}
	return 0;
}

struct pf_queue *pf_queue_start(const struct pf_sink_ops *ops, void *ctx)
{
	struct pf_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	*q = (struct pf_queue){ .ops = ops, .ctx = ctx };
	q->buf = malloc(BATCH);
	q->spare = malloc(BATCH);
	if (!q->buf || !q->spare || !(q->worker = buffer_worker_start(replay, q))) {
		free(q->buf);
		free(q->spare);
		free(q);
		return NULL;
	}
	return q;
}

/* A message of size bytes at the end of the batch, which goes to the thread when full. */
static struct message *message_new(struct pf_queue *q, uint32_t type, size_t size)
{
	struct message *m;
	char *full;

	size = (size + 7) & ~(size_t)7;
	if (BATCH - q->len < size) {
		buffer_worker_hand(q->worker, q->buf, q->len);
		full = q->buf;
		q->buf = q->spare;
		q->spare = full;
		q->len = 0;
	}
	m = (struct message *)(q->buf + q->len);
	m->type = type;
	m->size = (uint32_t)size;
	q->len += size;
	return m;
}

static void q_process(void *ctx, uint32_t pid, const char *comm)
{
	struct message *m = message_new(ctx, MSG_PROCESS, MESSAGE_SIZE(host));

	m->u.host.pid = pid;
	m->u.host.text = comm;
}

static void q_call(void *ctx, const struct pf_call *c)
{
	struct message *m = message_new(ctx, MSG_CALL, MESSAGE_SIZE(call));

	m->u.call = *c;
}

static void q_memory(void *ctx, uint32_t pid, uint64_t ts, uint64_t in_use)
{
	struct message *m = message_new(ctx, MSG_MEMORY, MESSAGE_SIZE(host));

	m->u.host.pid = pid;
	m->u.host.ts = ts;
	m->u.host.value = in_use;
}

static void q_offcpu(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end,
		     bool blocked)
{
	struct message *m = message_new(ctx, MSG_OFFCPU, MESSAGE_SIZE(host));

	m->u.host.pid = pid;
	m->u.host.tid = tid;
	m->u.host.ts = start;
	m->u.host.end = end;
	m->u.host.blocked = blocked;
}

static void q_uvm(void *ctx, uint32_t pid, uint64_t ts, const char *kind, uint64_t address,
		  uint64_t bytes)
{
	struct message *m = message_new(ctx, MSG_UVM, MESSAGE_SIZE(host));

	m->u.host.pid = pid;
	m->u.host.ts = ts;
	m->u.host.text = kind;
	m->u.host.value = address;
	m->u.host.bytes = bytes;
}

static void q_uvm_migrated(void *ctx, uint32_t pid, uint64_t ts, uint64_t total)
{
	struct message *m = message_new(ctx, MSG_UVM_MIGRATED, MESSAGE_SIZE(host));

	m->u.host.pid = pid;
	m->u.host.ts = ts;
	m->u.host.value = total;
}

static void q_xid(void *ctx, uint64_t ts, uint32_t code, uint32_t device, const char *message)
{
	struct message *m = message_new(ctx, MSG_XID, MESSAGE_SIZE(gpu));

	m->u.gpu.text = message;
	m->u.gpu.ts = ts;
	m->u.gpu.code = code;
	m->u.gpu.device = device;
}

static void q_throughput(void *ctx, uint32_t device, enum pf_link link, uint64_t ts, uint64_t tx,
			 uint64_t rx)
{
	struct message *m = message_new(ctx, MSG_THROUGHPUT, MESSAGE_SIZE(gpu));

	m->u.gpu.device = device;
	m->u.gpu.link = link;
	m->u.gpu.ts = ts;
	m->u.gpu.tx = tx;
	m->u.gpu.rx = rx;
}

static void q_stream(void *ctx, struct pf_stream *s)
{
	struct message *m = message_new(ctx, MSG_STREAM, MESSAGE_SIZE(work));

	m->u.work.s = s;
}

static void q_lane(void *ctx, struct pf_stream *s, struct pf_lane *lane)
{
	struct message *m = message_new(ctx, MSG_LANE, MESSAGE_SIZE(work));

	m->u.work.s = s;
	m->u.work.lane = lane;
}

static void q_job(void *ctx, struct pf_stream *s, struct pf_lane *lane, const struct job *j,
		  bool flow)
{
	struct message *m = message_new(ctx, MSG_JOB, MESSAGE_SIZE(work));

	m->u.work.s = s;
	m->u.work.lane = lane;
	m->u.work.flow = flow;
	m->u.work.job = *j;
}

const struct pf_sink_ops pf_queue_ops = {
	.process = q_process, .call = q_call, .memory = q_memory, .offcpu = q_offcpu,
	.uvm = q_uvm, .uvm_migrated = q_uvm_migrated, .xid = q_xid, .throughput = q_throughput,
	.stream = q_stream, .lane = q_lane, .job = q_job,
};

int pf_queue_finish(struct pf_queue *q)
{
	int err;

	buffer_worker_hand(q->worker, q->buf, q->len);
	err = buffer_worker_finish(q->worker);
	free(q->buf);
	free(q->spare);
	free(q);
	return err;
}
