/* Report section `nccl`: collectives per rank, their kernels, and which rank waited for which. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/device_map.h"
#include "analysis/jobs/pid_key_map.h"
#include "analysis/jobs/summary.h"
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "common/grow_array.h"
#include "common/u64_map.h"
#include "trace/records_cuda.h"
#include "trace/records_nccl.h"

#define NCCL_INCOMPLETE "out of memory while matching collectives; some waits are missing"
#define MAX_RANKS 256		/* (communicator, rank) pairs followed */
#define INSTANCE_RANKS 16	/* ranks of one collective compared; a host rarely has more */
#define KERNEL_PREFIX "ncclDevKernel_"
#define OLD_KERNEL_PREFIX "ncclKernel_"

/*
 * NCCL requires every rank of a communicator to call its collectives in the
 * same order, so the k-th collective of each rank is one collective: the
 * rank that entered it last held the others, which entered earlier and
 * waited (on the device) for it. The wait is measured between the host
 * entries of the ranks, which is when each rank queued the collective.
 * Point to point the same holds per direction: the k-th send from rank a to b
 * is the k-th receive on b from a. A communicator made by ncclCommSplit has
 * as members the ranks of its parent that passed the same color, in the order
 * of their keys (then of their ranks in the parent), as NCCL numbers them.
 */
struct rank_state {
	uint64_t comm;		/* ncclComm_t in its process */
	uint64_t comm_id;
	uint32_t pid;
	uint32_t tid;		/* the thread that created it */
	uint32_t rank;
	uint32_t nranks;
	int32_t device;
	uint32_t seq;		/* collectives called so far */
	uint64_t p2p;		/* sends and receives */
	uint32_t splits;	/* ncclCommSplit calls on it so far */
	bool split;		/* made by ncclCommSplit: rank and nranks follow its members */
	int32_t key;
	uint32_t parent_rank;
	uint64_t bytes;
	uint64_t kernels;	/* ncclDevKernel_* launches matched to its collectives */
	uint64_t waited_ns;	/* summed over its collectives */
	uint64_t last_in;	/* collectives it entered last (the others waited for it) */
};

struct instance {
	uint64_t comm_id;
	uint32_t seq;
	uint64_t bytes;
	uint32_t nranks;
	uint32_t n;
	struct {
		uint64_t enter;
		struct rank_state *rank;
		uint32_t op;
	} entries[INSTANCE_RANKS];
};

struct wait_row {
	uint64_t ns;
	uint64_t entered_ns;	/* when the waiting rank entered (its trace time) */
	uint64_t comm_id;
	uint64_t bytes;
	uint32_t seq;
	uint32_t op;
	uint32_t rank;		/* who waited */
	uint32_t for_rank;	/* for whom */
};

/*
 * Collectives and NCCL kernel launches by thread and time, matched at the
 * end: the two come from different sources, whose records are not in time
 * order with each other in the file.
 */
struct timed_call {
	uint64_t ts;
	uint32_t tid;
	uint32_t what;		/* collectives: rank index << 8 | op; launches: kernel name id */
};

struct nccl_report {
	struct device_map *devices;
	struct rank_state ranks[MAX_RANKS];
	uint32_t n_ranks;
	struct pid_key_map instances;	/* (seq, instance key) -> struct instance * */
	struct u64_map p2p_seq;		/* (rank index, direction, peer) -> calls so far */
	struct timed_call *colls;
	uint32_t n_colls, cap_colls;
	struct timed_call *launches;
	uint32_t n_launches, cap_launches;
	bool matched;
	uint64_t calls[GRT_NCCL_OPS];
	uint64_t bytes[GRT_NCCL_OPS];
	long kernel_of[GRT_NCCL_OPS];	/* the first kernel seen per op (in kernel_names), -1 none */
	struct name_table kernel_names;	/* NCCL kernels launched */
	uint64_t unknown_comm;		/* collectives on a communicator never seen created */
	struct wait_row *top;
	uint32_t n_top;
	uint32_t top_n;
	bool out_of_memory;
};

static void *nccl_create(const struct report_input *in)
{
	struct nccl_report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->top_n = in->top_n ? in->top_n : REPORT_DEFAULT_TOP;
	r->top = calloc(r->top_n, sizeof(*r->top));
	r->devices = device_map_new();
	if (!r->top || !r->devices) {
		free(r->top);
		device_map_free(r->devices);
		free(r);
		return NULL;
	}
	pid_key_map_init(&r->instances);
	u64_map_init(&r->p2p_seq);
	name_table_init(&r->kernel_names);
	for (int op = 0; op < GRT_NCCL_OPS; op++)
		r->kernel_of[op] = -1;
	return r;
}

static void nccl_destroy(void *state)
{
	struct nccl_report *r = state;
	void *v;

	for (size_t i = 0; (v = pid_key_map_iter(&r->instances, &i));)
		free(v);
	pid_key_map_destroy(&r->instances);
	u64_map_destroy(&r->p2p_seq);
	free(r->colls);
	free(r->launches);
	name_table_destroy(&r->kernel_names);
	device_map_free(r->devices);
	free(r->top);
	free(r);
}

static struct rank_state *rank_of(struct nccl_report *r, uint32_t pid, uint64_t comm)
{
	for (uint32_t i = 0; i < r->n_ranks; i++)
		if (r->ranks[i].pid == pid && r->ranks[i].comm == comm)
			return &r->ranks[i];
	return NULL;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	return (a ^ 0x6e63636c73706c74ull) * 0x9e3779b97f4a7c15ull ^ b;
}

/* Members of a split communicator numbered as NCCL does: by key, then by rank in the parent. */
static void number_split_members(struct nccl_report *r, uint64_t comm_id)
{
	for (uint32_t i = 0; i < r->n_ranks; i++) {
		struct rank_state *m = &r->ranks[i];

		if (!m->split || m->comm_id != comm_id)
			continue;
		m->rank = m->nranks = 0;
		for (uint32_t j = 0; j < r->n_ranks; j++) {
			const struct rank_state *o = &r->ranks[j];

			if (!o->split || o->comm_id != comm_id)
				continue;
			m->nranks++;
			m->rank += o->key < m->key || (o->key == m->key && o->parent_rank < m->parent_rank);
		}
	}
}

static void on_comm(struct nccl_report *r, const struct grt_record *rec)
{
	const struct grt_nccl_comm_rec *c = rec->payload;
	bool split = (c->flags & GRT_NCCL_F_SPLIT) && rec->hdr.payload_len >= sizeof(*c);
	struct rank_state *s, *parent = NULL;
	uint64_t comm_id = c->comm_id;

	if ((c->flags & GRT_NCCL_F_NO_RETURN) || c->ret || !c->comm)
		return;
	if (split) {
		/* a split of a communicator made before the trace: its calls count as unknown */
		parent = rank_of(r, rec->hdr.pid, c->parent);
		if (!parent)
			return;
		/* the parent's n-th split with this color is the same communicator in every rank */
		comm_id = mix(mix(parent->comm_id, parent->splits++), (uint32_t)c->color);
	}
	s = rank_of(r, rec->hdr.pid, c->comm);
	if (!s) {
		if (r->n_ranks == MAX_RANKS) {
			r->out_of_memory = true;
			return;
		}
		s = &r->ranks[r->n_ranks++];
	}
	*s = (struct rank_state){
		.comm = c->comm, .comm_id = comm_id, .pid = rec->hdr.pid, .tid = rec->hdr.tid,
		.rank = c->rank, .nranks = c->nranks,
		.device = device_map_of_thread(r->devices, rec->hdr.tid),
	};
	if (split) {
		s->split = true;
		s->key = c->key;
		s->parent_rank = parent->rank;
		number_split_members(r, comm_id);
	}
}

static void keep_wait(struct nccl_report *r, const struct wait_row *w)
{
	uint32_t at = r->n_top;

	if (at == r->top_n) {
		if (r->top[at - 1].ns >= w->ns)
			return;
		at--;
	} else {
		r->n_top++;
	}
	while (at && r->top[at - 1].ns < w->ns) {
		r->top[at] = r->top[at - 1];
		at--;
	}
	r->top[at] = *w;
}

/* Every rank in waited from its entry to the last rank's entry. */
static void judge(struct nccl_report *r, struct instance *in)
{
	uint32_t last = 0;

	for (uint32_t i = 1; i < in->n; i++)
		if (in->entries[i].enter > in->entries[last].enter)
			last = i;
	in->entries[last].rank->last_in += in->n > 1;
	for (uint32_t i = 0; i < in->n; i++) {
		struct wait_row w = {
			.ns = in->entries[last].enter - in->entries[i].enter,
			.entered_ns = in->entries[i].enter,
			.comm_id = in->comm_id, .bytes = in->bytes, .seq = in->seq,
			.op = in->entries[i].op,
			.rank = in->entries[i].rank->rank, .for_rank = in->entries[last].rank->rank,
		};

		if (i == last)
			continue;
		in->entries[i].rank->waited_ns += w.ns;
		keep_wait(r, &w);
	}
}

static void remember(struct nccl_report *r, struct timed_call **calls, uint32_t *n, uint32_t *cap,
		     struct timed_call call)
{
	if (grt_grow_array((void **)calls, cap, sizeof(**calls), *n + 1)) {
		r->out_of_memory = true;
		return;
	}
	(*calls)[(*n)++] = call;
}

/* A rank's entry into one collective (or one direction of a send and receive). */
static void enter(struct nccl_report *r, uint32_t seq, uint64_t key, uint32_t nranks,
		  const struct grt_record *rec, struct rank_state *s, uint32_t op)
{
	const struct grt_nccl_coll_rec *c = rec->payload;
	struct instance *in = pid_key_map_get(&r->instances, seq, key);

	if (!in) {
		in = calloc(1, sizeof(*in));
		if (!in || pid_key_map_put(&r->instances, seq, key, in)) {
			free(in);
			r->out_of_memory = true;
			return;
		}
		*in = (struct instance){ .comm_id = s->comm_id, .seq = seq, .bytes = c->bytes,
					 .nranks = nranks };
	}
	if (in->n < INSTANCE_RANKS)
		in->entries[in->n++] = (typeof(in->entries[0])){ rec->hdr.ts_ns, s, op };
	if (in->n == in->nranks || in->n == INSTANCE_RANKS) {
		judge(r, in);
		pid_key_map_remove(&r->instances, seq, key);
		free(in);
	}
}

/* ncclSend and ncclRecv: the k-th of one direction between two ranks meet. */
static void on_p2p(struct nccl_report *r, const struct grt_record *rec, struct rank_state *s,
		   uint32_t op)
{
	const struct grt_nccl_coll_rec *c = rec->payload;
	uint32_t peer = (uint32_t)c->root;
	uint32_t from = op == GRT_NCCL_SEND ? s->rank : peer, to = op == GRT_NCCL_SEND ? peer : s->rank;
	uint64_t counter = (uint64_t)(s - r->ranks) << 33 | (uint64_t)(op == GRT_NCCL_RECV) << 32 | peer;
	uint64_t seq = 0;

	s->p2p++;
	u64_map_get(&r->p2p_seq, counter, &seq);
	if (u64_map_put(&r->p2p_seq, counter, seq + 1)) {
		r->out_of_memory = true;
		return;
	}
	enter(r, (uint32_t)seq, mix(s->comm_id, (uint64_t)from << 32 | to), 2, rec, s, op);
}

static void on_coll(struct nccl_report *r, const struct grt_record *rec)
{
	const struct grt_nccl_coll_rec *c = rec->payload;
	struct rank_state *s = rank_of(r, rec->hdr.pid, c->comm);
	uint32_t op = c->op < GRT_NCCL_OPS ? c->op : 0;

	r->calls[op]++;
	r->bytes[op] += c->bytes;
	if (!s) {
		r->unknown_comm++;
		return;
	}
	if (s->device < 0) /* its context record may come after its comm record */
		s->device = device_map_of_thread(r->devices, rec->hdr.tid);
	remember(r, &r->colls, &r->n_colls, &r->cap_colls,
		 (struct timed_call){ rec->hdr.ts_ns, rec->hdr.tid, (uint32_t)(s - r->ranks) << 8 | op });
	s->bytes += c->bytes;
	if (op == GRT_NCCL_SEND || op == GRT_NCCL_RECV) {
		on_p2p(r, rec, s, op);
		return;
	}
	/*
	 * A split communicator has as many ranks as members seen so far: ncclCommSplit is
	 * collective and blocking, so every member's split returned before anyone's first call.
	 */
	enter(r, s->seq++, s->comm_id, s->nranks, rec, s, op);
}

/*
 * The NCCL kernel a launch names, without C++ mangling: NCCL 2.28 launches
 * "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorage...",
 * older ones the plain name. False when the launch is no NCCL kernel.
 */
static bool nccl_kernel_name(const char *name, char *out, size_t len)
{
	size_t n = 0;

	if (!name)
		return false;
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

static void on_launch(struct nccl_report *r, const struct grt_record *rec,
		      const struct grt_strings *strings)
{
	const struct grt_cuda_launch_rec *l = rec->payload;
	char name[256];
	long index;

	if (!nccl_kernel_name(grt_strings_get(strings, l->kernel_str), name, sizeof(name)))
		return;
	index = name_table_intern(&r->kernel_names, name);
	if (index < 0) {
		r->out_of_memory = true;
		return;
	}
	remember(r, &r->launches, &r->n_launches, &r->cap_launches,
		 (struct timed_call){ rec->hdr.ts_ns, rec->hdr.tid, (uint32_t)index });
}

static int by_thread_time(const void *a, const void *b)
{
	const struct timed_call *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * A collective's kernel is the first NCCL kernel its thread launches from
 * its entry on, before that thread's next collective (inside the call, or
 * at the ncclGroupEnd that closes a group).
 */
static void match_kernels(struct nccl_report *r)
{
	uint32_t k = 0;

	if (r->matched)
		return;
	r->matched = true;
	/* none of a kind: the array is NULL, which qsort must not be given */
	if (r->n_colls)
		qsort(r->colls, r->n_colls, sizeof(*r->colls), by_thread_time);
	if (r->n_launches)
		qsort(r->launches, r->n_launches, sizeof(*r->launches), by_thread_time);
	for (uint32_t c = 0; c < r->n_colls; c++) {
		const struct timed_call *coll = &r->colls[c], *next = c + 1 < r->n_colls ? coll + 1 : NULL;
		uint32_t op = coll->what & 0xff;

		while (k < r->n_launches && by_thread_time(&r->launches[k], coll) < 0)
			k++;
		if (k == r->n_launches || r->launches[k].tid != coll->tid)
			continue;
		if (next && next->tid == coll->tid && r->launches[k].ts >= next->ts)
			continue;
		r->ranks[coll->what >> 8].kernels++;
		if (r->kernel_of[op] < 0)
			r->kernel_of[op] = r->launches[k].what;
		k++;
	}
}

static void nccl_on_record(void *state, const struct grt_record *rec,
			   const struct grt_strings *strings)
{
	struct nccl_report *r = state;

	switch (rec->hdr.type) {
	case GRT_REC_CUDA_CONTEXT:
	case GRT_REC_CUDA_DEVICE:
		device_map_record(r->devices, rec, strings);
		break;
	case GRT_REC_NCCL_COMM:
		on_comm(r, rec);
		break;
	case GRT_REC_NCCL_COLL:
		on_coll(r, rec);
		break;
	case GRT_REC_CUDA_LAUNCH:
		if (rec->hdr.payload_len >= sizeof(struct grt_cuda_launch_rec))
			on_launch(r, rec, strings);
		break;
	}
}

/* Collectives some ranks of this trace never entered: judged among those that did. */
static void finish(struct nccl_report *r)
{
	struct instance *in;

	match_kernels(r);
	for (size_t i = 0; (in = pid_key_map_iter(&r->instances, &i));) {
		judge(r, in);
		free(in);
	}
	pid_key_map_destroy(&r->instances);
	pid_key_map_init(&r->instances);
}

static void nccl_print_text(void *state, FILE *out)
{
	struct nccl_report *r = state;
	char a[32], b[32];
	uint64_t total = 0;

	finish(r);
	for (int op = 0; op < GRT_NCCL_OPS; op++)
		total += r->calls[op];
	if (!r->n_ranks && !total) {
		fprintf(out, "no NCCL communicator or collective in this trace (record with -s nccl)\n");
		return;
	}
	fprintf(out, "  %-18s %4s %5s %8s %6s %11s %12s %8s %12s %7s\n", "communicator", "rank",
		"of", "pid", "device", "collectives", "bytes", "kernels", "waited", "last_in");
	for (uint32_t i = 0; i < r->n_ranks; i++) {
		const struct rank_state *s = &r->ranks[i];
		char device[16] = "?";

		if (s->device >= 0)
			snprintf(device, sizeof(device), "%d", s->device);
		fprintf(out, "  0x%016" PRIx64 " %4u %5u %8u %6s %11u %12s %8" PRIu64 " %12s %7" PRIu64
			     "\n", s->comm_id, s->rank, s->nranks, s->pid, device, s->seq,
			report_format_bytes(s->bytes, a, sizeof(a)), s->kernels,
			job_format_ns(s->waited_ns, b, sizeof(b)), s->last_in);
	}
	fprintf(out, "collectives by op:\n");
	for (int op = 0; op < GRT_NCCL_OPS; op++)
		if (r->calls[op])
			fprintf(out, "  %-15s %8" PRIu64 " calls %12s  kernel %s\n", grt_nccl_op_name(op),
				r->calls[op], report_format_bytes(r->bytes[op], a, sizeof(a)),
				r->kernel_of[op] >= 0 ? r->kernel_names.names[r->kernel_of[op]]
						      : "(none seen)");
	if (r->unknown_comm)
		fprintf(out, "  %" PRIu64 " collectives on communicators created before the trace "
			     "started: no rank, no waits\n", r->unknown_comm);
	fprintf(out, "waits (a rank entered a collective before the last rank of its communicator, "
		     "or a send or receive before its peer; longest first):\n");
	if (!r->n_top)
		fprintf(out, "  none\n");
	for (uint32_t i = 0; i < r->n_top; i++) {
		const struct wait_row *w = &r->top[i];

		fprintf(out, "  rank %u's %s #%u waited %s for rank %u (communicator 0x%016" PRIx64
			     ", %s)\n", w->rank, grt_nccl_op_name(w->op), w->seq + 1,
			job_format_ns(w->ns, a, sizeof(a)), w->for_rank, w->comm_id,
			report_format_bytes(w->bytes, b, sizeof(b)));
	}
	if (r->out_of_memory)
		fprintf(out, "WARNING: %s\n", NCCL_INCOMPLETE);
}

static void nccl_print_json(void *state, struct json_writer *w)
{
	struct nccl_report *r = state;

	finish(r);
	jw_begin_object(w);
	jw_key(w, "ranks");
	jw_begin_array(w);
	for (uint32_t i = 0; i < r->n_ranks; i++) {
		const struct rank_state *s = &r->ranks[i];

		jw_begin_object(w);
		jw_field_u64(w, "comm_id", s->comm_id);
		jw_field_u64(w, "rank", s->rank);
		jw_field_u64(w, "nranks", s->nranks);
		jw_field_u64(w, "pid", s->pid);
		jw_key(w, "device");
		if (s->device >= 0)
			jw_u64(w, (uint64_t)s->device);
		else
			jw_null(w);
		jw_field_u64(w, "collectives", s->seq);
		jw_field_u64(w, "p2p", s->p2p);
		jw_field_u64(w, "bytes", s->bytes);
		jw_field_u64(w, "kernels", s->kernels);
		jw_field_u64(w, "waited_ns", s->waited_ns);
		jw_field_u64(w, "last_in", s->last_in);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "ops");
	jw_begin_array(w);
	for (int op = 0; op < GRT_NCCL_OPS; op++) {
		if (!r->calls[op])
			continue;
		jw_begin_object(w);
		jw_field_string(w, "op", grt_nccl_op_name(op));
		jw_field_u64(w, "calls", r->calls[op]);
		jw_field_u64(w, "bytes", r->bytes[op]);
		jw_field_string(w, "kernel",
				r->kernel_of[op] >= 0 ? r->kernel_names.names[r->kernel_of[op]] : NULL);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_field_u64(w, "unknown_comm", r->unknown_comm);
	jw_key(w, "waits");
	jw_begin_array(w);
	for (uint32_t i = 0; i < r->n_top; i++) {
		jw_begin_object(w);
		jw_field_u64(w, "rank", r->top[i].rank);
		jw_field_u64(w, "waited_for", r->top[i].for_rank);
		jw_field_string(w, "op", grt_nccl_op_name(r->top[i].op));
		jw_field_u64(w, "index", r->top[i].seq + 1);
		jw_field_u64(w, "ns", r->top[i].ns);
		jw_field_u64(w, "entered_ns", r->top[i].entered_ns);
		jw_field_u64(w, "comm_id", r->top[i].comm_id);
		jw_field_u64(w, "bytes", r->top[i].bytes);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static const char *nccl_incomplete(void *state)
{
	const struct nccl_report *r = state;

	return r->out_of_memory ? NCCL_INCOMPLETE : NULL;
}

GRT_REPORT_SECTION(nccl_section) = {
	.name = "nccl",
	.summary = "NCCL collectives per rank, their kernels, and which rank waited for which",
	.default_on = true,
	.sources = 1u << GRT_SRC_NCCL,
	.order = 85,
	.create = nccl_create,
	.on_record = nccl_on_record,
	.print_text = nccl_print_text,
	.print_json = nccl_print_json,
	.incomplete = nccl_incomplete,
	.destroy = nccl_destroy,
};
