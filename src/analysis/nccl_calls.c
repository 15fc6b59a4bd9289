/* NCCL calls of a trace: ranks, each call's instance and kernel, and which rank waited for which. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/device_map.h"
#include "analysis/jobs/builder.h"
#include "analysis/nccl_calls.h"
#include "common/grow_array.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"

#define KERNEL_PREFIX "ncclDevKernel_"
#define OLD_KERNEL_PREFIX "ncclKernel_"

/* A launch of an NCCL kernel (by thread and API entry), or a timed NCCL kernel job. */
struct kernel_event {
	uint64_t ts;		/* API entry of the launch */
	uint32_t tid;
	uint32_t name;		/* launches: kernel name index */
	uint64_t start;		/* timed jobs: device START */
	int32_t device;		/* timed jobs: their device, -1 unknown */
};

struct nccl_calls {
	struct device_map *devices;
	struct job_builder *builder;	/* device STARTs of the NCCL kernels, with the gpu source */
	struct nccl_rank ranks[NCCL_MAX_RANKS];
	uint32_t n_ranks;
	struct u64_map p2p_seq;		/* (rank index, direction, peer) -> calls so far */
	struct nccl_call *calls;
	uint32_t n_calls, cap_calls;
	struct kernel_event *launches;
	uint32_t n_launches, cap_launches;
	struct kernel_event *timed;
	uint32_t n_timed, cap_timed;
	uint32_t *by_kernel;		/* call indices with a kernel, by (tid, kernel_enter) */
	uint32_t n_by_kernel;
	bool finished;
	uint64_t op_calls[GRT_NCCL_OPS];
	uint64_t op_bytes[GRT_NCCL_OPS];
	long kernel_of[GRT_NCCL_OPS];	/* the first kernel tied per op (in kernel_names), -1 none */
	struct name_table kernel_names;
	uint64_t unknown_comm;
	bool out_of_memory;
};

static bool grow(struct nccl_calls *c, void **array, uint32_t *cap, size_t size, uint32_t n)
{
	if (grt_grow_array(array, cap, size, n + 1)) {
		c->out_of_memory = true;
		return false;
	}
	return true;
}

static void on_timed_job(void *ctx, struct job *j)
{
	struct nccl_calls *c = ctx;
	char name[256];

	if (j->kind != JOB_KERNEL || !j->start || !nccl_kernel_name(j->name, name, sizeof(name)))
		return;
	if (grow(c, (void **)&c->timed, &c->cap_timed, sizeof(*c->timed), c->n_timed))
		c->timed[c->n_timed++] = (struct kernel_event){
			.ts = j->api_enter, .tid = j->tid, .start = j->start,
			.device = j->device == JOB_NO_DEVICE ? -1 : (int32_t)j->device,
		};
}

struct nccl_calls *nccl_calls_new(const struct grt_file_header *hdr)
{
	static const struct job_builder_ops ops = { .job = on_timed_job };
	struct nccl_calls *c = calloc(1, sizeof(*c));
	struct job_thresholds t;

	if (!c)
		return NULL;
	c->devices = device_map_new();
	if (hdr && (hdr->sources_mask & (1u << GRT_SRC_GPU))) {
		job_thresholds_default(&t);
		c->builder = job_builder_new(hdr, &t, &ops, c);
		if (!c->builder)
			c->out_of_memory = true;
	}
	if (!c->devices) {
		device_map_free(c->devices);
		job_builder_free(c->builder);
		free(c);
		return NULL;
	}
	u64_map_init(&c->p2p_seq);
	name_table_init(&c->kernel_names);
	for (int op = 0; op < GRT_NCCL_OPS; op++)
		c->kernel_of[op] = -1;
	return c;
}

void nccl_calls_free(struct nccl_calls *c)
{
	if (!c)
		return;
	job_builder_free(c->builder);
	device_map_free(c->devices);
	u64_map_destroy(&c->p2p_seq);
	name_table_destroy(&c->kernel_names);
	free(c->calls);
	free(c->launches);
	free(c->timed);
	free(c->by_kernel);
	free(c);
}

static struct nccl_rank *rank_of(struct nccl_calls *c, uint32_t pid, uint64_t comm)
{
	for (uint32_t i = 0; i < c->n_ranks; i++)
		if (c->ranks[i].pid == pid && c->ranks[i].comm == comm)
			return &c->ranks[i];
	return NULL;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	return (a ^ 0x6e63636c73706c74ull) * 0x9e3779b97f4a7c15ull ^ b;
}

/* Members of a split communicator numbered as NCCL does: by key, then by rank in the parent. */
static void number_split_members(struct nccl_calls *c, uint64_t comm_id)
{
	for (uint32_t i = 0; i < c->n_ranks; i++) {
		struct nccl_rank *m = &c->ranks[i];

		if (!m->split || m->comm_id != comm_id)
			continue;
		m->rank = m->nranks = 0;
		for (uint32_t j = 0; j < c->n_ranks; j++) {
			const struct nccl_rank *o = &c->ranks[j];

			if (!o->split || o->comm_id != comm_id)
				continue;
			m->nranks++;
			m->rank += o->key < m->key || (o->key == m->key && o->parent_rank < m->parent_rank);
		}
	}
}

static void on_comm(struct nccl_calls *c, const struct grt_record *rec)
{
	const struct grt_nccl_comm_rec *cr = rec->payload;
	bool split = (cr->flags & GRT_NCCL_F_SPLIT) && rec->hdr.payload_len >= sizeof(*cr);
	struct nccl_rank *s, *parent = NULL;
	uint64_t comm_id = cr->comm_id;

	if ((cr->flags & GRT_NCCL_F_NO_RETURN) || cr->ret || !cr->comm)
		return;
	if (split) {
		/* a split of a communicator made before the trace: its calls count as unknown */
		parent = rank_of(c, rec->hdr.pid, cr->parent);
		if (!parent)
			return;
		/* the parent's n-th split with this color is the same communicator in every rank */
		comm_id = mix(mix(parent->comm_id, parent->splits++), (uint32_t)cr->color);
	}
	s = rank_of(c, rec->hdr.pid, cr->comm);
	if (!s) {
		if (c->n_ranks == NCCL_MAX_RANKS) {
			c->out_of_memory = true;
			return;
		}
		s = &c->ranks[c->n_ranks++];
	}
	*s = (struct nccl_rank){
		.comm = cr->comm, .comm_id = comm_id, .pid = rec->hdr.pid, .tid = rec->hdr.tid,
		.rank = cr->rank, .nranks = cr->nranks,
		.device = device_map_of_thread(c->devices, rec->hdr.tid),
	};
	if (split) {
		s->split = true;
		s->key = cr->key;
		s->parent_rank = parent->rank;
		number_split_members(c, comm_id);
	}
}

static void on_coll(struct nccl_calls *c, const struct grt_record *rec)
{
	const struct grt_nccl_coll_rec *cr = rec->payload;
	struct nccl_rank *s = rank_of(c, rec->hdr.pid, cr->comm);
	uint32_t op = cr->op < GRT_NCCL_OPS ? cr->op : 0;
	struct nccl_call call = {
		.enter = rec->hdr.ts_ns, .bytes = cr->bytes, .pid = rec->hdr.pid, .tid = rec->hdr.tid,
		.op = op, .peer = -1, .kernel_name = NCCL_NONE, .waited_for = NCCL_NONE,
	};

	c->op_calls[op]++;
	c->op_bytes[op] += cr->bytes;
	if (!s) {
		c->unknown_comm++;
		return;
	}
	if (s->device < 0) /* its context record may come after its comm record */
		s->device = device_map_of_thread(c->devices, rec->hdr.tid);
	s->bytes += cr->bytes;
	call.rank_index = (uint32_t)(s - c->ranks);
	call.comm_id = s->comm_id;
	if (op == GRT_NCCL_SEND || op == GRT_NCCL_RECV) {
		uint32_t peer = (uint32_t)cr->root;
		uint32_t from = op == GRT_NCCL_SEND ? s->rank : peer;
		uint32_t to = op == GRT_NCCL_SEND ? peer : s->rank;
		uint64_t counter = (uint64_t)call.rank_index << 33 | (uint64_t)(op == GRT_NCCL_RECV) << 32 | peer;
		uint64_t seq = 0;

		s->p2p++;
		u64_map_get(&c->p2p_seq, counter, &seq);
		if (u64_map_put(&c->p2p_seq, counter, seq + 1)) {
			c->out_of_memory = true;
			return;
		}
		call.seq = (uint32_t)seq;
		call.peer = cr->root;
		call.inst_key = mix(s->comm_id, (uint64_t)from << 32 | to);
		call.inst_nranks = 2;
	} else {
		/*
		 * A split communicator has as many ranks as members seen so far: ncclCommSplit is
		 * collective and blocking, so every member's split returned before anyone's first call.
		 */
		call.seq = s->seq++;
		call.inst_key = s->comm_id;
		call.inst_nranks = s->nranks;
	}
	if (grow(c, (void **)&c->calls, &c->cap_calls, sizeof(*c->calls), c->n_calls))
		c->calls[c->n_calls++] = call;
}

bool nccl_kernel_name(const char *name, char *out, size_t len)
{
	size_t n = 0;

	if (!name)
		return false;
	/* NCCL 2.28 launches "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernel...", older the plain name */
	if (name[0] == '_' && name[1] == 'Z') {
		const char *p = name + 2;

		while (*p >= '0' && *p <= '9' && n < 4096)
			n = n * 10 + (size_t)(*p++ - '0');
		if (!n || strnlen(p, n) < n)
			return false;
		name = p;
	} else {
		n = strlen(name);
	}
	if (strncmp(name, KERNEL_PREFIX, strlen(KERNEL_PREFIX)) &&
	    strncmp(name, OLD_KERNEL_PREFIX, strlen(OLD_KERNEL_PREFIX)))
		return false;
	snprintf(out, len, "%.*s", (int)n, name);
	return true;
}

static void on_launch(struct nccl_calls *c, const struct grt_record *rec,
		      const struct grt_strings *strings)
{
	const struct grt_cuda_launch_rec *l = rec->payload;
	char name[256];
	long index;

	if (!nccl_kernel_name(grt_strings_get(strings, l->kernel_str), name, sizeof(name)))
		return;
	index = name_table_intern(&c->kernel_names, name);
	if (index < 0) {
		c->out_of_memory = true;
		return;
	}
	if (grow(c, (void **)&c->launches, &c->cap_launches, sizeof(*c->launches), c->n_launches))
		c->launches[c->n_launches++] = (struct kernel_event){
			.ts = rec->hdr.ts_ns, .tid = rec->hdr.tid, .name = (uint32_t)index,
		};
}

void nccl_calls_record(struct nccl_calls *c, const struct grt_record *rec,
		       const struct grt_strings *strings)
{
	if (c->finished)
		return;
	if (c->builder)
		job_builder_record(c->builder, rec, strings);
	switch (rec->hdr.type) {
	case GRT_REC_CUDA_CONTEXT:
	case GRT_REC_CUDA_DEVICE:
		device_map_record(c->devices, rec, strings);
		break;
	case GRT_REC_NCCL_COMM:
		if (rec->hdr.payload_len >= GRT_NCCL_COMM_MIN_LEN)
			on_comm(c, rec);
		break;
	case GRT_REC_NCCL_COLL:
		if (rec->hdr.payload_len >= sizeof(struct grt_nccl_coll_rec))
			on_coll(c, rec);
		break;
	case GRT_REC_CUDA_LAUNCH:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_launch_rec))
			on_launch(c, rec, strings);
		break;
	}
}

static int by_thread_time(uint32_t tid_a, uint64_t ts_a, uint32_t tid_b, uint64_t ts_b)
{
	if (tid_a != tid_b)
		return tid_a < tid_b ? -1 : 1;
	return ts_a < ts_b ? -1 : ts_a > ts_b;
}

static int events_by_thread_time(const void *a, const void *b)
{
	const struct kernel_event *x = a, *y = b;

	return by_thread_time(x->tid, x->ts, y->tid, y->ts);
}

/* Orders of call indices; calls is the array they index. */
static int calls_by_thread_entry(const void *a, const void *b, void *calls)
{
	const struct nccl_call *sorting = calls;
	const struct nccl_call *x = &sorting[*(const uint32_t *)a], *y = &sorting[*(const uint32_t *)b];
	int d = by_thread_time(x->tid, x->enter, y->tid, y->enter);

	return d ? d : (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static int calls_by_kernel(const void *a, const void *b, void *calls)
{
	const struct nccl_call *sorting = calls;
	const struct nccl_call *x = &sorting[*(const uint32_t *)a], *y = &sorting[*(const uint32_t *)b];

	return by_thread_time(x->tid, x->kernel_enter, y->tid, y->kernel_enter);
}

/* Calls of one instance together, in the order they were recorded. */
static int calls_by_instance(const void *a, const void *b, void *calls)
{
	const struct nccl_call *sorting = calls;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct nccl_call *x = &sorting[i], *y = &sorting[j];

	if (x->inst_key != y->inst_key)
		return x->inst_key < y->inst_key ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (i > j) - (i < j);
}

static const struct kernel_event *find_event(const struct kernel_event *ev, uint32_t n, uint32_t tid,
					     uint64_t ts)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int d = by_thread_time(ev[mid].tid, ev[mid].ts, tid, ts);

		if (!d)
			return &ev[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * A call's kernel is the first NCCL kernel its thread launches from its
 * entry on, before that thread's next call (inside the call, or at the
 * ncclGroupEnd that closes a group).
 */
static void tie_kernels(struct nccl_calls *c, uint32_t *order)
{
	uint32_t k = 0;

	/* none of a kind: the array is NULL, which qsort must not be given */
	if (c->n_launches)
		qsort(c->launches, c->n_launches, sizeof(*c->launches), events_by_thread_time);
	if (c->n_timed)
		qsort(c->timed, c->n_timed, sizeof(*c->timed), events_by_thread_time);
	for (uint32_t i = 0; i < c->n_calls; i++)
		order[i] = i;
	if (c->n_calls)
		qsort_r(order, c->n_calls, sizeof(*order), calls_by_thread_entry, c->calls);
	for (uint32_t i = 0; i < c->n_calls; i++) {
		struct nccl_call *call = &c->calls[order[i]];
		const struct nccl_call *next = i + 1 < c->n_calls ? &c->calls[order[i + 1]] : NULL;
		const struct kernel_event *timed;

		while (k < c->n_launches &&
		       by_thread_time(c->launches[k].tid, c->launches[k].ts, call->tid, call->enter) < 0)
			k++;
		if (k == c->n_launches || c->launches[k].tid != call->tid)
			continue;
		if (next && next->tid == call->tid && c->launches[k].ts >= next->enter)
			continue;
		call->kernel_enter = c->launches[k].ts;
		call->kernel_name = c->launches[k].name;
		c->ranks[call->rank_index].kernels++;
		if (c->kernel_of[call->op] < 0)
			c->kernel_of[call->op] = c->launches[k].name;
		timed = find_event(c->timed, c->n_timed, call->tid, call->kernel_enter);
		if (timed) {
			call->kernel_start = timed->start;
			if (timed->device >= 0)
				call->device = timed->device;
		}
		c->by_kernel[c->n_by_kernel++] = order[i];
		k++;
	}
	if (c->n_by_kernel)
		qsort_r(c->by_kernel, c->n_by_kernel, sizeof(*c->by_kernel), calls_by_kernel, c->calls);
}

/* The calls of one instance, n of them at idx: every one but the last in waited for it. */
static void judge(struct nccl_calls *c, const uint32_t *idx, uint32_t n)
{
	uint8_t basis = NCCL_BASIS_DEVICE;
	uint32_t last = 0;

	for (uint32_t i = 0; i < n; i++)
		if (!c->calls[idx[i]].kernel_start)
			basis = NCCL_BASIS_HOST;
#define WHEN(i) (basis == NCCL_BASIS_DEVICE ? c->calls[idx[i]].kernel_start : c->calls[idx[i]].enter)
	for (uint32_t i = 1; i < n; i++)
		if (WHEN(i) > WHEN(last))
			last = i;
	c->calls[idx[last]].last_in = n > 1;
	c->ranks[c->calls[idx[last]].rank_index].last_in += n > 1;
	for (uint32_t i = 0; i < n; i++) {
		struct nccl_call *call = &c->calls[idx[i]];

		call->basis = basis;
		call->wait_from = WHEN(i);
		if (i == last)
			continue;
		call->wait_ns = WHEN(last) - WHEN(i);
		call->waited_for = idx[last];
		c->ranks[call->rank_index].waited_ns += call->wait_ns;
	}
#undef WHEN
}

/* Instances: the calls of one (key, seq), in groups of the ranks each expected. */
static void judge_all(struct nccl_calls *c, uint32_t *order)
{
	for (uint32_t i = 0; i < c->n_calls; i++)
		order[i] = i;
	if (c->n_calls)
		qsort_r(order, c->n_calls, sizeof(*order), calls_by_instance, c->calls);
	for (uint32_t i = 0; i < c->n_calls;) {
		const struct nccl_call *first = &c->calls[order[i]];
		uint32_t want = first->inst_nranks && first->inst_nranks < NCCL_INSTANCE_RANKS
					? first->inst_nranks : NCCL_INSTANCE_RANKS;
		uint32_t n = 0;

		while (i + n < c->n_calls && n < want && c->calls[order[i + n]].inst_key == first->inst_key &&
		       c->calls[order[i + n]].seq == first->seq)
			n++;
		judge(c, order + i, n);
		i += n;
	}
}

void nccl_calls_finish(struct nccl_calls *c)
{
	uint32_t *order;

	if (c->finished)
		return;
	c->finished = true;
	if (c->builder)
		job_builder_finish(c->builder);
	for (uint32_t i = 0; i < c->n_calls; i++) {
		struct nccl_call *call = &c->calls[i];
		const struct nccl_rank *s = &c->ranks[call->rank_index];

		call->rank = s->rank;
		call->nranks = s->nranks;
		call->device = s->device;
	}
	order = calloc(c->n_calls ? c->n_calls : 1, sizeof(*order));
	c->by_kernel = calloc(c->n_calls ? c->n_calls : 1, sizeof(*c->by_kernel));
	if (!order || !c->by_kernel) {
		c->out_of_memory = true;
		free(order);
		return;
	}
	tie_kernels(c, order);
	judge_all(c, order);
	for (uint32_t i = 0; i < c->n_calls; i++) {
		struct nccl_call *call = &c->calls[i];

		if (call->waited_for != NCCL_NONE) {
			call->for_rank = c->calls[call->waited_for].rank;
			call->for_device = c->calls[call->waited_for].device;
		}
	}
	free(order);
}

uint32_t nccl_calls_count(const struct nccl_calls *c)
{
	return c->n_calls;
}

const struct nccl_call *nccl_calls_at(const struct nccl_calls *c, uint32_t i)
{
	return &c->calls[i];
}

uint32_t nccl_calls_ranks(const struct nccl_calls *c)
{
	return c->n_ranks;
}

const struct nccl_rank *nccl_calls_rank(const struct nccl_calls *c, uint32_t i)
{
	return &c->ranks[i];
}

uint64_t nccl_calls_op_calls(const struct nccl_calls *c, uint32_t op)
{
	return op < GRT_NCCL_OPS ? c->op_calls[op] : 0;
}

uint64_t nccl_calls_op_bytes(const struct nccl_calls *c, uint32_t op)
{
	return op < GRT_NCCL_OPS ? c->op_bytes[op] : 0;
}

const char *nccl_calls_kernel_name(const struct nccl_calls *c, uint32_t index)
{
	return index < c->kernel_names.count ? c->kernel_names.names[index] : NULL;
}

const char *nccl_calls_op_kernel(const struct nccl_calls *c, uint32_t op)
{
	return op < GRT_NCCL_OPS && c->kernel_of[op] >= 0 ? c->kernel_names.names[c->kernel_of[op]]
							  : NULL;
}

uint64_t nccl_calls_unknown_comm(const struct nccl_calls *c)
{
	return c->unknown_comm;
}

bool nccl_calls_incomplete(const struct nccl_calls *c)
{
	return c->out_of_memory || (c->builder && job_builder_stats(c->builder)->alloc_failures);
}

const struct nccl_call *nccl_calls_of_kernel(const struct nccl_calls *c, uint32_t tid,
					     uint64_t api_enter)
{
	uint32_t lo = 0, hi = c->n_by_kernel;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct nccl_call *call = &c->calls[c->by_kernel[mid]];
		int d = by_thread_time(call->tid, call->kernel_enter, tid, api_enter);

		if (!d)
			return call;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *nccl_call_name(const struct nccl_call *call, char *buf, unsigned len)
{
	snprintf(buf, len, "%s #%u rank %u/%u", grt_nccl_op_name(call->op), call->seq + 1, call->rank,
		 call->nranks);
	return buf;
}

const char *nccl_basis_name(uint32_t basis)
{
	return basis == NCCL_BASIS_DEVICE ? "device" : "host";
}
