/* Per-process UVM activity spans in start order, with migration totals, for the idle-gap split. */
#include <stdlib.h>
#include "analysis/jobs/uvm_activity.h"
#include "common/grow_array.h"
#include "common/u64_map.h"

struct span {
	uint64_t start;
	uint64_t end;
};

struct proc_uvm {
	struct span *v;
	uint32_t len;
	uint32_t cap;
	uint32_t compact_at;
	uint64_t max_span;	/* longest span kept: how far back a lookup must start */
	struct uvm_totals totals;
};

struct uvm_activity {
	struct u64_map procs;	/* pid -> struct proc_uvm * */
	uint64_t alloc_failures;
};

struct uvm_activity *uvm_activity_new(void)
{
	struct uvm_activity *u = calloc(1, sizeof(*u));

	if (u)
		u64_map_init(&u->procs);
	return u;
}

void uvm_activity_free(struct uvm_activity *u)
{
	uint64_t v;

	if (!u)
		return;
	for (size_t i = 0; u64_map_iter(&u->procs, &i, NULL, &v);) {
		free(((struct proc_uvm *)(uintptr_t)v)->v);
		free((void *)(uintptr_t)v);
	}
	u64_map_destroy(&u->procs);
	free(u);
}

static struct proc_uvm *proc_of(const struct uvm_activity *u, uint32_t pid)
{
	uint64_t v;

	return u64_map_get(&u->procs, pid, &v) ? (struct proc_uvm *)(uintptr_t)v : NULL;
}

/* Activity of the process itself, the kind that fills the time between kernels; not bookkeeping. */
static bool is_activity(uint32_t kind)
{
	switch (kind) {
	case GRT_UVM_QUEUE_OVERFLOW:
	case GRT_UVM_FAULT_BUFFER_OVERFLOW:
	case GRT_UVM_PAGE_SIZE_CHANGE:
		return false;
	default:
		return kind > 0 && kind < GRT_UVM_KIND_COUNT;
	}
}

static void count(struct uvm_totals *t, const struct grt_uvm_event_rec *e)
{
	if (e->kind == GRT_UVM_CPU_FAULT)
		t->cpu_faults++;
	else if (e->kind == GRT_UVM_GPU_FAULT)
		t->gpu_faults++;
	if (e->kind != GRT_UVM_MIGRATION)
		return;
	t->migrations++;
	if (e->src_processor == GRT_UVM_PROC_CPU && e->dst_processor != GRT_UVM_PROC_CPU &&
	    e->dst_processor != GRT_UVM_PROC_NONE)
		t->to_device += e->bytes;
	else if (e->dst_processor == GRT_UVM_PROC_CPU && e->src_processor != GRT_UVM_PROC_CPU &&
		 e->src_processor != GRT_UVM_PROC_NONE)
		t->to_host += e->bytes;
}

static void compact(struct proc_uvm *p, uint64_t horizon)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < p->len; i++)
		if (p->v[i].end >= horizon)
			p->v[kept++] = p->v[i];
	p->len = kept;
	p->compact_at = kept * 2 > 256 ? kept * 2 : 256;
}

void uvm_activity_event(struct uvm_activity *u, uint32_t pid, uint64_t ts,
			const struct grt_uvm_event_rec *e, uint64_t horizon)
{
	struct proc_uvm *p = proc_of(u, pid);
	struct span s = { ts, e->end_ns > ts ? e->end_ns : ts };
	uint32_t at;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || u64_map_put(&u->procs, pid, (uintptr_t)p)) {
			free(p);
			u->alloc_failures++;
			return;
		}
	}
	count(&p->totals, e);
	if (!is_activity(e->kind) || s.end < horizon)
		return;
	if (p->len >= p->compact_at)
		compact(p, horizon);
	if (grt_grow_array((void **)&p->v, &p->cap, sizeof(*p->v), p->len + 1)) {
		u->alloc_failures++;
		return;
	}
	/* nearly in order: the walk back is short */
	for (at = p->len; at && p->v[at - 1].start > s.start; at--)
		p->v[at] = p->v[at - 1];
	p->v[at] = s;
	p->len++;
	if (s.end - s.start > p->max_span)
		p->max_span = s.end - s.start;
}

bool uvm_activity_within(const struct uvm_activity *u, uint32_t pid, uint64_t a, uint64_t b,
			 uint64_t *from, uint64_t *to)
{
	const struct proc_uvm *p = proc_of(u, pid);
	uint32_t lo = 0, hi;
	uint64_t earliest;
	bool any = false;

	if (!p || b <= a)
		return false;
	earliest = a > p->max_span ? a - p->max_span : 0;
	for (hi = p->len; lo < hi;) {
		uint32_t mid = (lo + hi) / 2;

		if (p->v[mid].start < earliest)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t i = lo; i < p->len && p->v[i].start < b; i++) {
		uint64_t s = p->v[i].start > a ? p->v[i].start : a;
		uint64_t t = p->v[i].end < b ? p->v[i].end : b;

		if (p->v[i].end < a)
			continue;
		if (!any || s < *from)
			*from = s;
		if (!any || t > *to)
			*to = t;
		any = true;
	}
	return any && *to > *from;
}

uint64_t uvm_activity_alloc_failures(const struct uvm_activity *u)
{
	return u->alloc_failures;
}

const struct uvm_totals *uvm_activity_totals(const struct uvm_activity *u, uint32_t pid)
{
	const struct proc_uvm *p = proc_of(u, pid);

	return p ? &p->totals : NULL;
}
