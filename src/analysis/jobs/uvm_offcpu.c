/* UVM events and off-CPU intervals around jobs: vm-fault windows and preempted time. */
#include <stdlib.h>
#include "analysis/jobs/builder_internal.h"
#include "trace/records_kernel.h"
#include "trace/records_uvm.h"

static bool is_fault_kind(uint32_t kind)
{
	switch (kind) {
	case GRT_UVM_GPU_FAULT:
	case GRT_UVM_GPU_FAULT_REPLAY:
	case GRT_UVM_MIGRATION:
	case GRT_UVM_EVICTION:
	case GRT_UVM_THRASHING:
	case GRT_UVM_THROTTLING_START:
	case GRT_UVM_THROTTLING_END:
	case GRT_UVM_MAP_REMOTE:
	case GRT_UVM_READ_DUPLICATE:
	case GRT_UVM_READ_DUPLICATE_INVALIDATE:
	case GRT_UVM_FATAL_FAULT:
		return true;
	default:
		return false; /* CPU faults, queue/buffer overflows, page size changes */
	}
}

/* First event (logical index) whose ts is at or after from. */
static uint32_t uvm_lower_bound(const struct jproc *p, uint64_t from)
{
	uint32_t lo = 0, hi = p->uvm_len;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (p->uvm[(p->uvm_head + mid) % p->uvm_cap].ts < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void jb_uvm_window(struct jproc *p, struct job *j)
{
	uint64_t a, z, covered_to = 0, from;

	if (!p || !p->uvm_len)
		return;
	if (j->start && j->end) {
		a = j->start;
		z = j->end;
	} else if (j->complete) {
		a = j->submit ? j->submit : j->api_enter;
		z = j->complete;
	} else {
		return;
	}
	from = a > p->uvm_max_span ? a - p->uvm_max_span : 0;
	for (uint32_t i = uvm_lower_bound(p, from); i < p->uvm_len; i++) {
		const struct uvm_ev *e = &p->uvm[(p->uvm_head + i) % p->uvm_cap];
		uint64_t s, t;

		if (e->ts > z)
			break;
		if (e->end < a)
			continue;
		j->vm_faults++;
		/* the union of the events' spans, clipped to the window */
		s = e->ts > a ? e->ts : a;
		t = e->end < z ? e->end : z;
		if (s < covered_to)
			s = covered_to;
		if (t > s)
			j->t_vm_fault += t - s;
		if (t > covered_to)
			covered_to = t;
	}
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;

	return e > s ? e - s : 0;
}

void jb_add_offcpu(struct bjob *j, const struct offcpu *o)
{
	uint64_t ov;

	if (!j->job.submit || (j->job.flags & JOB_F_SYNC_CALL))
		return;
	ov = overlap(j->job.api_enter, j->job.submit, o->off, o->on);
	if (ov || (o->off >= j->job.api_enter && o->off <= j->job.submit)) {
		j->job.t_offcpu += ov;
		j->job.offcpu_count++;
	}
}

void jb_on_offcpu(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_sched_offcpu_rec *o = rec->payload;
	struct jthread *t = jb_thread_get(b, rec->hdr.tid, rec->hdr.pid);
	struct offcpu iv = { rec->hdr.ts_ns, o->on_cpu_ns > rec->hdr.ts_ns ? o->on_cpu_ns : rec->hdr.ts_ns };

	b->stats.offcpu_records++;
	if (!t)
		return;
	t->ring[t->n_ring % OFFCPU_RING] = iv;
	if (++t->n_ring == 2 * OFFCPU_RING)
		t->n_ring = OFFCPU_RING; /* all slots stay valid; keeps the index small */
	/* a switch recorded after the launch it interrupted */
	if (t->last_job)
		jb_add_offcpu(t->last_job, &iv);
}

static void uvm_push(struct jproc *p, uint64_t ts, uint64_t end, struct job_builder_stats *st)
{
	uint32_t at;

	if (p->uvm_len == p->uvm_cap) {
		uint32_t cap = p->uvm_cap ? p->uvm_cap * 2 : 256;
		struct uvm_ev *n;

		if (cap > UVM_MAX_EVENTS) {
			/* bounded: the oldest event falls out */
			p->uvm_head = (p->uvm_head + 1) % p->uvm_cap;
			p->uvm_len--;
			st->uvm_dropped++;
		} else {
			n = malloc(cap * sizeof(*n));
			if (!n) {
				st->alloc_failures++;
				return;
			}
			for (uint32_t i = 0; i < p->uvm_len; i++)
				n[i] = p->uvm[(p->uvm_head + i) % p->uvm_cap];
			free(p->uvm);
			p->uvm = n;
			p->uvm_cap = cap;
			p->uvm_head = 0;
		}
	}
	/* sorted by ts; events come nearly in order, so the walk back is short */
	at = p->uvm_len;
	while (at && p->uvm[(p->uvm_head + at - 1) % p->uvm_cap].ts > ts) {
		p->uvm[(p->uvm_head + at) % p->uvm_cap] = p->uvm[(p->uvm_head + at - 1) % p->uvm_cap];
		at--;
	}
	p->uvm[(p->uvm_head + at) % p->uvm_cap] = (struct uvm_ev){ ts, end };
	p->uvm_len++;
	if (end - ts > p->uvm_max_span)
		p->uvm_max_span = end - ts;
}

void jb_on_uvm(struct job_builder *b, const struct grt_record *rec)
{
	const struct grt_uvm_event_rec *u = rec->payload;
	struct jproc *p;

	if (b->ops.uvm)
		b->ops.uvm(b->ctx, rec->hdr.pid, rec->hdr.ts_ns, u);
	if (!is_fault_kind(u->kind))
		return;
	p = jb_proc_get(b, rec->hdr.pid);
	if (!p)
		return;
	b->stats.uvm_events++;
	uvm_push(p, rec->hdr.ts_ns, u->end_ns > rec->hdr.ts_ns ? u->end_ns : rec->hdr.ts_ns, &b->stats);
}
