/* The Perfetto model's calls through the encoder thread's queue: the same calls, in the same order. */
#include <stdlib.h>
#include "export/perfetto_queue.h"
#include "test_util.h"

/* A sink that writes every call it gets as a line. */
struct log {
	char *text;
	size_t len;
	FILE *out;
};

static void log_process(void *ctx, uint32_t pid, const char *comm)
{
	fprintf(((struct log *)ctx)->out, "process %u %s\n", pid, comm ? comm : "(null)");
}

static void log_call(void *ctx, const struct pf_call *c)
{
	fprintf(((struct log *)ctx)->out,
		"call %u %u %s %s %llu %llu %d %d %d %llu %d %s %llu %s %u %llx %llx\n", c->pid, c->tid,
		c->comm ? c->comm : "(null)", c->api, (unsigned long long)c->start,
		(unsigned long long)c->end, c->returned, c->unsampled, c->ret,
		(unsigned long long)c->flow, c->detail, c->kernel ? c->kernel : "(null)",
		(unsigned long long)c->bytes, c->kind ? c->kind : "(null)", c->sync,
		(unsigned long long)c->stream, (unsigned long long)c->event);
}

static void log_memory(void *ctx, uint32_t pid, uint64_t ts, uint64_t in_use)
{
	fprintf(((struct log *)ctx)->out, "memory %u %llu %llu\n", pid, (unsigned long long)ts,
		(unsigned long long)in_use);
}

static void log_offcpu(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end,
		       bool blocked)
{
	fprintf(((struct log *)ctx)->out, "offcpu %u %u %llu %llu %d\n", pid, tid,
		(unsigned long long)start, (unsigned long long)end, blocked);
}

static void log_uvm(void *ctx, uint32_t pid, uint64_t ts, const char *kind, uint64_t address,
		    uint64_t bytes)
{
	fprintf(((struct log *)ctx)->out, "uvm %u %llu %s %llx %llu\n", pid, (unsigned long long)ts,
		kind, (unsigned long long)address, (unsigned long long)bytes);
}

static void log_uvm_migrated(void *ctx, uint32_t pid, uint64_t ts, uint64_t total)
{
	fprintf(((struct log *)ctx)->out, "migrated %u %llu %llu\n", pid, (unsigned long long)ts,
		(unsigned long long)total);
}

static void log_xid(void *ctx, uint64_t ts, uint32_t code, uint32_t device, const char *message)
{
	fprintf(((struct log *)ctx)->out, "xid %llu %u %u %s\n", (unsigned long long)ts, code, device,
		message ? message : "(null)");
}

static void log_throughput(void *ctx, uint32_t device, enum pf_link link, uint64_t ts, uint64_t tx,
			   uint64_t rx)
{
	fprintf(((struct log *)ctx)->out, "link %u %d %llu %llu %llu\n", device, link,
		(unsigned long long)ts, (unsigned long long)tx, (unsigned long long)rx);
}

static void log_stream(void *ctx, struct pf_stream *s)
{
	fprintf(((struct log *)ctx)->out, "stream %p %u %u\n", (void *)s, s->device, s->pid);
}

static void log_lane(void *ctx, struct pf_stream *s, struct pf_lane *lane)
{
	fprintf(((struct log *)ctx)->out, "lane %p %p %u %u\n", (void *)s, (void *)lane, lane->id,
		lane->index);
}

static void log_job(void *ctx, struct pf_stream *s, struct pf_lane *lane, const struct job *j,
		    bool flow)
{
	fprintf(((struct log *)ctx)->out, "job %p %p %llu %llu %s %llu %llu %u %d\n", (void *)s,
		(void *)lane, (unsigned long long)j->id, (unsigned long long)j->group_id, j->name,
		(unsigned long long)j->start, (unsigned long long)j->t_exec, j->tags, flow);
}

static const struct pf_sink_ops log_ops = {
	.process = log_process, .call = log_call, .memory = log_memory, .offcpu = log_offcpu,
	.uvm = log_uvm, .uvm_migrated = log_uvm_migrated, .xid = log_xid,
	.throughput = log_throughput, .stream = log_stream, .lane = log_lane, .job = log_job,
};

static const char *const texts[] = { "python", "trainer", "void gemm<float>(float*)", "HtoD" };

/* Every kind of call, many times over (batches fill and change hands): the sink gets what was passed. */
static void make_calls(const struct pf_sink_ops *ops, void *ctx)
{
	static struct pf_stream stream = { .device = 1, .pid = 42, .stream = 0x10 };
	static struct pf_lane lane = { .id = 3, .index = 1 };
	struct job j = { .id = 9, .group_id = 7, .name = "gemm", .t_exec = 5, .tags = 2 };

	ops->stream(ctx, &stream);
	ops->lane(ctx, &stream, &lane);
	for (uint32_t i = 0; i < 20000; i++) {
		struct pf_call c = { .pid = 42, .tid = 43 + i % 3, .api = "cuLaunchKernel",
				     .start = i * 10ull, .end = i * 10ull + 5, .returned = i % 5 != 0,
				     .unsampled = i % 7 == 0, .ret = (int32_t)(i % 11), .flow = i,
				     .detail = (enum pf_detail)(i % 4), .bytes = i * 3ull, .kind = "HtoD",
				     .sync = i % 8, .stream = 0x100 + i, .event = 0x200 + i };
		c.comm = i % 9 ? texts[i % 4] : NULL;
		c.kernel = i % 4 == PF_DETAIL_KERNEL ? texts[(i / 4) % 4] : NULL;
		ops->call(ctx, &c);
		if (i % 13 == 0)
			ops->process(ctx, 42, i % 2 ? "trainer" : NULL);
		if (i % 17 == 0)
			ops->memory(ctx, 42, i, i * 4096ull);
		if (i % 19 == 0)
			ops->offcpu(ctx, 42, 43, i, i + 3ull, i % 2);
		if (i % 23 == 0) {
			ops->uvm(ctx, 42, i, "UVM migration", 0x7000 + i, 4096);
			ops->uvm_migrated(ctx, 42, i, i * 4096ull);
		}
		if (i % 29 == 0)
			ops->throughput(ctx, 1, (enum pf_link)(i % 2), i, i * 2ull, i * 3ull);
		if (i % 31 == 0) {
			j.start = i;
			j.id = i;
			ops->job(ctx, &stream, &lane, &j, i % 2);
		}
	}
	ops->xid(ctx, 5, 79, 0, "fell off the bus");
	ops->xid(ctx, 6, 48, 1, NULL);
}

static void test_queue_replays_every_call(void)
{
	struct log direct = { 0 }, queued = { 0 };
	struct pf_queue *q;

	direct.out = open_memstream(&direct.text, &direct.len);
	make_calls(&log_ops, &direct);
	fclose(direct.out);

	queued.out = open_memstream(&queued.text, &queued.len);
	q = pf_queue_start(&log_ops, &queued);
	CHECK(q != NULL);
	if (q) {
		make_calls(&pf_queue_ops, q);
		CHECK_EQ_U64(pf_queue_finish(q), 0);
	}
	fclose(queued.out);
	CHECK(direct.len > 2000000);
	CHECK_EQ_U64(queued.len, direct.len);
	CHECK(queued.len == direct.len && !memcmp(queued.text, direct.text, direct.len));
	free(direct.text);
	free(queued.text);
}

int main(void)
{
	RUN_TEST(test_queue_replays_every_call);
	return TEST_EXIT_STATUS();
}
