/* Jobs tagged collective-wait: the longest, and per device the ranks its collectives waited for. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "analysis/jobs/collective_waits.h"
#include "analysis/jobs/summary.h"
#include "analysis/nccl_calls.h"
#include "common/grow_array.h"
#include "common/top_list.h"

#define PAIRS_PER_DEVICE 3	/* lines per device; the rest summed in one */

int collective_waits_init(struct collective_waits *cw, uint32_t top_n)
{
	*cw = (struct collective_waits){ .top_n = top_n ? top_n : 1 };
	cw->top = calloc(cw->top_n, sizeof(*cw->top));
	return cw->top ? 0 : -ENOMEM;
}

void collective_waits_destroy(struct collective_waits *cw)
{
	free(cw->top);
	free(cw->pairs);
	*cw = (struct collective_waits){ 0 };
}

static uint64_t job_wait_of(const void *row)
{
	return ((const struct collective_wait_job *)row)->call->wait_ns;
}

static uint64_t call_wait_of(const void *row)
{
	return (*(const struct nccl_call *const *)row)->wait_ns;
}

static void keep_longest(struct collective_waits *cw, const struct collective_wait_job *w)
{
	long at = top_list_slot(cw->top, sizeof(*cw->top), &cw->n_top, cw->top_n, w->call->wait_ns,
				job_wait_of);

	if (at >= 0)
		cw->top[at] = *w;
}

static void name_largest(struct collective_wait_pair *p, const struct nccl_call *call)
{
	long at = top_list_slot(p->largest, sizeof(p->largest[0]), &p->n_largest,
				COLLECTIVE_WAIT_NAMED, call->wait_ns, call_wait_of);

	if (at >= 0)
		p->largest[at] = call;
}

static struct collective_wait_pair *pair_of(struct collective_waits *cw, uint32_t device,
					    const struct nccl_call *call)
{
	for (uint32_t i = 0; i < cw->n_pairs; i++) {
		struct collective_wait_pair *p = &cw->pairs[i];

		if (p->device == device && p->rank == call->rank && p->for_rank == call->for_rank &&
		    p->for_device == call->for_device)
			return p;
	}
	if (grt_grow_array((void **)&cw->pairs, &cw->cap_pairs, sizeof(*cw->pairs), cw->n_pairs + 1)) {
		cw->alloc_failed = true;
		return NULL;
	}
	cw->pairs[cw->n_pairs] = (struct collective_wait_pair){
		.device = device, .rank = call->rank, .for_rank = call->for_rank,
		.for_device = call->for_device,
	};
	return &cw->pairs[cw->n_pairs++];
}

void collective_waits_job(struct collective_waits *cw, const struct job *j)
{
	const struct nccl_call *call = j->collective;
	uint32_t device = j->device;
	struct collective_wait_pair *p;

	if (!call || !(j->tags & (1u << JOB_TAG_COLLECTIVE_WAIT)))
		return;
	if (device == JOB_NO_DEVICE && call->device >= 0)
		device = (uint32_t)call->device;
	cw->jobs++;
	keep_longest(cw, &(struct collective_wait_job){ j->id, j->pid, device, call });
	if (device == JOB_NO_DEVICE)
		return;
	p = pair_of(cw, device, call);
	if (!p)
		return;
	p->ns += call->wait_ns;
	p->jobs++;
	name_largest(p, call);
}

/* By device, then the longest waits first. */
static int by_device_ns(const void *a, const void *b)
{
	const struct collective_wait_pair *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return (x->for_rank > y->for_rank) - (x->for_rank < y->for_rank);
}

void collective_waits_finish(struct collective_waits *cw)
{
	if (cw->n_pairs)
		qsort(cw->pairs, cw->n_pairs, sizeof(*cw->pairs), by_device_ns);
}

static const char *device_text(int64_t device, char *buf, size_t len)
{
	if (device < 0 || device == JOB_NO_DEVICE)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%" PRId64, device);
	return buf;
}

void collective_waits_print_text(const struct collective_waits *cw, FILE *out)
{
	char name[96], a[24], d[16], fd[16];

	if (!cw->n_top)
		return;
	fprintf(out, "\ncollective waits (NCCL kernels whose rank entered its collective before the "
		     "last rank; longest first):\n");
	for (uint32_t i = 0; i < cw->n_top; i++) {
		const struct collective_wait_job *w = &cw->top[i];

		fprintf(out, "  job %" PRIu64 " %s (pid %u, device %s): waited %s for rank %u (device %s), "
			     "%s\n", w->id, nccl_call_name(w->call, name, sizeof(name)), w->pid,
			device_text(w->device, d, sizeof(d)), job_format_ns(w->call->wait_ns, a, sizeof(a)),
			w->call->for_rank, device_text(w->call->for_device, fd, sizeof(fd)),
			w->call->basis == NCCL_BASIS_DEVICE ? "kernel starts on the GPU"
							    : "host entry times");
	}
	if (cw->jobs > cw->n_top)
		fprintf(out, "  ... %" PRIu64 " more jobs tagged collective-wait\n", cw->jobs - cw->n_top);
}

/* "all-reduce #15, all-reduce #16 and 3 more" */
static void collectives_text(const struct collective_wait_pair *p, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < p->n_largest && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s #%u", i ? ", " : "",
				      grt_nccl_op_name(p->largest[i]->op), p->largest[i]->seq + 1);
	if (p->jobs > p->n_largest && n < len)
		snprintf(buf + n, len - n, " and %" PRIu64 " more", p->jobs - p->n_largest);
}

void collective_waits_print_device_text(const struct collective_waits *cw, uint32_t device, FILE *out)
{
	char a[24], fd[16], names[160];
	uint64_t rest = 0;
	uint32_t shown = 0;

	for (uint32_t i = 0; i < cw->n_pairs; i++) {
		const struct collective_wait_pair *p = &cw->pairs[i];

		if (p->device != device)
			continue;
		if (shown == PAIRS_PER_DEVICE) {
			rest += p->ns;
			continue;
		}
		collectives_text(p, names, sizeof(names));
		fprintf(out, "    device %u (rank %u): %s in collectives waiting for rank %u (device %s): %s\n",
			device, p->rank, job_format_ns(p->ns, a, sizeof(a)), p->for_rank,
			device_text(p->for_device, fd, sizeof(fd)), names);
		shown++;
	}
	if (rest)
		fprintf(out, "    and %s in collectives waiting for further ranks\n",
			job_format_ns(rest, a, sizeof(a)));
}

void collective_waits_print_device_json(const struct collective_waits *cw, uint32_t device,
					struct json_writer *w)
{
	jw_begin_array(w);
	for (uint32_t i = 0; cw && i < cw->n_pairs; i++) {
		const struct collective_wait_pair *p = &cw->pairs[i];

		if (p->device != device)
			continue;
		jw_begin_object(w);
		jw_field_u64(w, "rank", p->rank);
		jw_field_u64(w, "waited_for", p->for_rank);
		jw_key(w, "waited_for_device");
		if (p->for_device >= 0)
			jw_u64(w, (uint64_t)p->for_device);
		else
			jw_null(w);
		jw_field_u64(w, "ns", p->ns);
		jw_field_u64(w, "jobs", p->jobs);
		/* the largest of them */
		jw_field_string(w, "op", grt_nccl_op_name(p->largest[0]->op));
		jw_field_u64(w, "index", p->largest[0]->seq + 1);
		jw_field_u64(w, "largest_ns", p->largest[0]->wait_ns);
		jw_end_object(w);
	}
	jw_end_array(w);
}

bool collective_waits_has_device(const struct collective_waits *cw, uint32_t device)
{
	for (uint32_t i = 0; cw && i < cw->n_pairs; i++)
		if (cw->pairs[i].device == device)
			return true;
	return false;
}

uint32_t collective_waits_device_at(const struct collective_waits *cw, uint32_t i)
{
	uint32_t seen = 0;

	for (uint32_t k = 0; cw && k < cw->n_pairs; k++) {
		if (k && cw->pairs[k].device == cw->pairs[k - 1].device)
			continue;
		if (seen++ == i)
			return cw->pairs[k].device;
	}
	return JOB_NO_DEVICE;
}
