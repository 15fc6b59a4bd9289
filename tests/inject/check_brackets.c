/* Checks call identity in a trace: each device record's bracket holds exactly one cuda call. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/grt_reader.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"

/*
 * Usage: check_brackets TRACE. For every gpu_kernel, gpu_copy and gpu_launch
 * record that is not grtrace's own (GRT_GPU_F_OWN), the cuda records of the
 * same pid and thread (host_tid) whose entry lies in [api_enter_ns,
 * api_return_ns] must be exactly one launch, graph launch, memcpy or memset
 * (records_gpu.h). grtrace's own cuda calls are not counted; its own device
 * records (GRT_GPU_F_OWN) are counted apart, and a kernel named as grtrace's
 * without the flag is a failure. Prints each failure (at most 10), then one
 * line of counts;
 * exit 0 when nothing failed, 1 otherwise, 2 on a bad trace.
 */
struct call {
	uint64_t ts;
	uint32_t pid, tid;
	uint16_t type;
	uint8_t used;
};

struct bracket {
	uint64_t enter, ret;
	uint32_t pid, tid;
	uint16_t type;
	uint64_t seq;
};

static struct call *calls;
static size_t ncalls, calls_cap;
static struct bracket *brackets;
static size_t nbrackets, brackets_cap;

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 1024;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "check_brackets: out of memory\n");
		exit(2);
	}
	return p;
}

static bool is_call(uint16_t type)
{
	return type == GRT_REC_CUDA_LAUNCH || type == GRT_REC_CUDA_GRAPH_LAUNCH ||
	       type == GRT_REC_CUDA_MEMCPY || type == GRT_REC_CUDA_MEMSET;
}

static const char *type_name(uint16_t type)
{
	return type == GRT_REC_GPU_KERNEL ? "gpu_kernel"
	       : type == GRT_REC_GPU_COPY ? "gpu_copy"
					  : "gpu_launch";
}

struct counts {
	unsigned app[3];     /* the application's gpu_kernel, gpu_copy, gpu_launch records */
	unsigned own_kernels, own_copies, own_launches;
	unsigned unflagged;  /* kernels named as grtrace's (GRT_OWN_KERNEL_PREFIX) without the flag */
};

/* Notes a device record's bracket; grtrace's own are counted apart. */
static void device_record(struct grt_reader *r, const struct grt_record *rec, struct counts *n)
{
	uint64_t enter, ret;
	uint32_t tid, flags;
	unsigned kind;

	if (rec->hdr.type == GRT_REC_GPU_KERNEL) {
		const struct grt_gpu_kernel_rec *k = rec->payload;
		const char *name = grt_reader_string(r, k->kernel_str);

		enter = k->api_enter_ns, ret = k->api_return_ns, tid = k->host_tid, flags = k->flags;
		kind = 0;
		if (!(flags & GRT_GPU_F_OWN) && name && !strncmp(name, "__grt_", 6))
			n->unflagged++;
	} else if (rec->hdr.type == GRT_REC_GPU_COPY) {
		const struct grt_gpu_copy_rec *c = rec->payload;

		enter = c->api_enter_ns, ret = c->api_return_ns, tid = c->host_tid, flags = c->flags;
		kind = 1;
	} else {
		const struct grt_gpu_launch_rec *l = rec->payload;

		enter = l->api_enter_ns, ret = l->api_return_ns, tid = l->host_tid, flags = l->flags;
		kind = 2;
	}
	if (flags & GRT_GPU_F_OWN) {
		(*(kind == 0 ? &n->own_kernels : kind == 1 ? &n->own_copies : &n->own_launches))++;
		return;
	}
	n->app[kind]++;
	brackets = grow(brackets, &brackets_cap, nbrackets, sizeof(*brackets));
	brackets[nbrackets++] = (struct bracket){
	    .enter = enter, .ret = ret, .pid = rec->hdr.pid, .tid = tid,
	    .type = rec->hdr.type, .seq = rec->hdr.seq};
}

int main(int argc, char **argv)
{
	unsigned failures = 0, matched = 0, calls_used = 0;
	struct counts n = {0};
	struct grt_reader *r;
	struct grt_record rec;
	enum grt_read_status st;
	char err[256];

	if (argc != 2) {
		fprintf(stderr, "usage: check_brackets TRACE\n");
		return 2;
	}
	r = grt_reader_open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "check_brackets: %s\n", err);
		return 2;
	}
	while ((st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		uint16_t t = rec.hdr.type;

		if (is_call(t) && !(((const struct grt_cuda_call *)rec.payload)->flags &
				    GRT_CUDA_F_OWN)) {
			calls = grow(calls, &calls_cap, ncalls, sizeof(*calls));
			calls[ncalls++] = (struct call){
			    .ts = rec.hdr.ts_ns, .pid = rec.hdr.pid, .tid = rec.hdr.tid, .type = t};
		} else if (t == GRT_REC_GPU_KERNEL || t == GRT_REC_GPU_COPY ||
			   t == GRT_REC_GPU_LAUNCH) {
			device_record(r, &rec, &n);
		}
	}
	if (st == GRT_READ_ERROR) {
		fprintf(stderr, "check_brackets: %s\n", grt_reader_error(r));
		return 2;
	}
	for (size_t i = 0; i < nbrackets; i++) {
		const struct bracket *b = &brackets[i];
		size_t inside = 0, at = 0;

		for (size_t j = 0; j < ncalls && b->ret; j++)
			if (calls[j].pid == b->pid && calls[j].tid == b->tid &&
			    calls[j].ts >= b->enter && calls[j].ts <= b->ret) {
				inside++;
				at = j;
			}
		if (inside == 1) {
			matched++;
			calls_used += !calls[at].used;
			calls[at].used = 1;
			continue;
		}
		if (failures++ < 10)
			printf("FAIL - %s (seq %llu, pid %u, host_tid %u, [%llu, %llu]): %zu cuda "
			       "calls inside\n",
			       type_name(b->type), (unsigned long long)b->seq, b->pid, b->tid,
			       (unsigned long long)b->enter, (unsigned long long)b->ret, inside);
	}
	if (n.unflagged)
		failures++, printf("FAIL - %u kernels named __grt_* not flagged own\n", n.unflagged);
	printf("gpu_kernel=%u gpu_copy=%u gpu_launch=%u matched=%u failed=%u cuda_calls=%zu "
	       "cuda_calls_matched=%u own_kernels=%u own_copies=%u own_launches=%u\n",
	       n.app[0], n.app[1], n.app[2], matched, failures, ncalls, calls_used, n.own_kernels,
	       n.own_copies, n.own_launches);
	grt_reader_close(r);
	return failures ? 1 : 0;
}
