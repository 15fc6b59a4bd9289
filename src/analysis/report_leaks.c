/* Report section `leaks`: GPU memory still allocated at process exit or trace end, by allocation stack. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "trace/trace_names.h"
#include "analysis/user_stacks.h"
#include "common/text_escape.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"

#define LEAKS_INCOMPLETE "out of memory while tracking allocations; leaks may be missing"

/*
 * Allocations are tracked per process (device addresses are per process).
 * A process-exit record freezes that process's outstanding allocations as
 * leaked at exit; a later process with the same pid starts afresh. Whatever
 * is still allocated at the end of the trace is reported as outstanding.
 *
 * Sources drain on their own ticks, so a process's last cuda calls may be
 * written after its exit record: a call of a pid with no running process
 * that happened before that pid's latest exit belongs to the exited one.
 */

enum leak_class {
	LEAK_DEVICE,
	LEAK_MANAGED,
	LEAK_HOST,
	LEAK_CLASSES,
};

static const char *const class_names[LEAK_CLASSES] = { "device", "managed", "host" };

struct live_alloc {
	uint64_t addr;
	uint64_t bytes;
	int32_t stack_id;
	uint8_t class;		/* enum leak_class */
};

struct leak_process {
	uint32_t pid;
	bool exited;
	int32_t exit_code;
	uint16_t exit_signal;	/* 0: it exited rather than being killed */
	bool core_dumped;
	uint64_t exit_ns;
	struct live_alloc *live;
	size_t nlive, cap;
	struct u64_map by_addr;	/* addr -> index in live */
	uint64_t allocs, frees;
	uint64_t failed_allocs;	/* returned an error: nothing to track */
	uint64_t unknown_frees;	/* address never seen allocated (or allocated before tracing) */
	uint64_t lost_frees;	/* an address allocated again while live: its free was not seen */
};

struct leaks_report {
	struct leak_process **procs;
	size_t nprocs, cap;
	struct u64_map current;	/* pid -> index of its running (not exited) process */
	struct u64_map exited;	/* pid -> index of its latest exited process */
	struct user_stacks *stacks;
	struct pid_comms comms;
	unsigned top_n;
	uint64_t min_bytes;	/* --threshold leak_min_bytes: smaller stacks are summed up */
	bool out_of_memory;
};

static void *leaks_create(const struct report_input *in)
{
	struct leaks_report *l = calloc(1, sizeof(*l));
	double min_bytes = 0;
	int found = report_threshold(in->thresholds, "leak_min_bytes", &min_bytes);

	if (found < 0) {
		free(l);
		errno = EINVAL;
		return NULL;
	}
	if (!l || !(l->stacks = user_stacks_new())) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	u64_map_init(&l->current);
	u64_map_init(&l->exited);
	pid_comms_init(&l->comms);
	l->top_n = in->top_n;
	l->min_bytes = (uint64_t)min_bytes;
	return l;
}

static void process_free(struct leak_process *p)
{
	u64_map_destroy(&p->by_addr);
	free(p->live);
	free(p);
}

static void leaks_destroy(void *state)
{
	struct leaks_report *l = state;

	for (size_t i = 0; i < l->nprocs; i++)
		process_free(l->procs[i]);
	free(l->procs);
	u64_map_destroy(&l->current);
	u64_map_destroy(&l->exited);
	user_stacks_free(l->stacks);
	pid_comms_destroy(&l->comms);
	free(l);
}

/* The process of pid a call at ts belongs to: running, just exited, or new. */
static struct leak_process *process_for(struct leaks_report *l, uint32_t pid, uint64_t ts)
{
	struct leak_process *p;
	uint64_t index;

	if (u64_map_get(&l->current, pid, &index))
		return l->procs[index];
	if (u64_map_get(&l->exited, pid, &index) && ts <= l->procs[index]->exit_ns)
		return l->procs[index];
	if (l->nprocs == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct leak_process **bigger = realloc(l->procs, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		l->procs = bigger;
		l->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	u64_map_init(&p->by_addr);
	if (u64_map_put(&l->current, pid, l->nprocs)) {
		process_free(p);
		return NULL;
	}
	p->pid = pid;
	l->procs[l->nprocs++] = p;
	return p;
}

static enum leak_class class_of(uint32_t kind)
{
	switch (kind) {
	case GRT_ALLOC_MANAGED:
		return LEAK_MANAGED;
	case GRT_ALLOC_HOST:
	case GRT_ALLOC_HOST_ALLOC:
		return LEAK_HOST;
	default:
		return LEAK_DEVICE;
	}
}

static void remove_live(struct leak_process *p, size_t index)
{
	u64_map_remove(&p->by_addr, p->live[index].addr, NULL);
	if (index != p->nlive - 1) {
		p->live[index] = p->live[p->nlive - 1];
		u64_map_put(&p->by_addr, p->live[index].addr, index); /* replaces: cannot fail */
	}
	p->nlive--;
}

static int add_live(struct leak_process *p, const struct grt_cuda_alloc_rec *a)
{
	uint64_t index;

	if (u64_map_get(&p->by_addr, a->addr, &index)) {
		p->lost_frees++;
		remove_live(p, index);
	}
	if (p->nlive == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct live_alloc *bigger = realloc(p->live, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		p->live = bigger;
		p->cap = cap;
	}
	if (u64_map_put(&p->by_addr, a->addr, p->nlive))
		return -ENOMEM;
	p->live[p->nlive++] = (struct live_alloc){
		.addr = a->addr, .bytes = a->bytes, .stack_id = a->user_stack_id,
		.class = (uint8_t)class_of(a->kind),
	};
	return 0;
}

static void on_alloc(struct leaks_report *l, const struct grt_record *rec)
{
	const struct grt_cuda_alloc_rec *a = rec->payload;
	struct leak_process *p = process_for(l, rec->hdr.pid, rec->hdr.ts_ns);

	if (!p) {
		l->out_of_memory = true;
		return;
	}
	/* a call that failed or never returned produced no address to track */
	if (report_call_failed(&a->call) || !a->addr) {
		p->failed_allocs++;
		return;
	}
	p->allocs++;
	if (add_live(p, a))
		l->out_of_memory = true;
}

static void on_free(struct leaks_report *l, const struct grt_record *rec)
{
	const struct grt_cuda_free_rec *f = rec->payload;
	struct leak_process *p = process_for(l, rec->hdr.pid, rec->hdr.ts_ns);
	uint64_t index;

	if (!p) {
		l->out_of_memory = true;
		return;
	}
	/* freeing NULL is a no-op; a failed free freed nothing */
	if (!f->addr || report_call_failed(&f->call))
		return;
	p->frees++;
	if (u64_map_get(&p->by_addr, f->addr, &index))
		remove_live(p, index);
	else
		p->unknown_frees++;
}

static void on_process(struct leaks_report *l, const struct grt_record *rec)
{
	const struct grt_process_rec *pr = rec->payload;
	uint64_t index;

	if (pr->event == GRT_PROC_START) {
		u64_map_remove(&l->exited, rec->hdr.pid, NULL); /* a new process: nothing comes late */
		return;
	}
	if (pr->event != GRT_PROC_EXIT || !u64_map_get(&l->current, rec->hdr.pid, &index))
		return;
	l->procs[index]->exited = true;
	l->procs[index]->exit_code = pr->exit_code;
	l->procs[index]->exit_signal = pr->exit_signal;
	l->procs[index]->core_dumped = pr->exit_flags & GRT_PROC_CORE_DUMPED;
	l->procs[index]->exit_ns = rec->hdr.ts_ns;
	u64_map_remove(&l->current, rec->hdr.pid, NULL);
	/* its address table stays: frees written after the exit record still find their allocation */
	if (u64_map_put(&l->exited, rec->hdr.pid, index))
		l->out_of_memory = true;
}

static void leaks_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct leaks_report *l = state;

	pid_comms_on_record(&l->comms, rec, strings);
	if (user_stacks_on_record(l->stacks, rec, strings))
		l->out_of_memory = true;
	if (rec->hdr.type == GRT_REC_CUDA_ALLOC)
		on_alloc(l, rec);
	else if (rec->hdr.type == GRT_REC_CUDA_FREE)
		on_free(l, rec);
	else if (rec->hdr.type == GRT_REC_PROCESS)
		on_process(l, rec);
}

/* Leftover allocations of one class of a process sharing one stack. */
struct leak_group {
	int32_t stack_id;
	uint64_t bytes;
	uint64_t allocations;
};

struct leak_class_totals {
	struct leak_group *groups;	/* most bytes first */
	size_t ngroups;
	uint64_t bytes, allocations;
};

static int compare_by_stack(const void *a, const void *b)
{
	const struct live_alloc *x = a, *y = b;

	if (x->class != y->class)
		return x->class - y->class;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static int compare_groups(const void *a, const void *b)
{
	const struct leak_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->allocations != y->allocations)
		return x->allocations > y->allocations ? -1 : 1;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

/* Groups a process's leftovers by class and stack. Returns 0 or -ENOMEM. */
static int group_leaks(struct leak_process *p, struct leak_class_totals totals[LEAK_CLASSES])
{
	memset(totals, 0, LEAK_CLASSES * sizeof(totals[0]));
	if (!p->nlive)
		return 0;
	qsort(p->live, p->nlive, sizeof(p->live[0]), compare_by_stack);
	for (size_t i = 0; i < p->nlive; i++) {
		struct leak_class_totals *t = &totals[p->live[i].class];
		struct leak_group *last = t->ngroups ? &t->groups[t->ngroups - 1] : NULL;

		if (!last || last->stack_id != p->live[i].stack_id) {
			struct leak_group *bigger = realloc(t->groups, (t->ngroups + 1) * sizeof(*bigger));

			if (!bigger)
				return -ENOMEM;
			t->groups = bigger;
			last = &t->groups[t->ngroups++];
			*last = (struct leak_group){ .stack_id = p->live[i].stack_id };
		}
		last->bytes += p->live[i].bytes;
		last->allocations++;
		t->bytes += p->live[i].bytes;
		t->allocations++;
	}
	/* the address index is stale after the sort; nothing is added after streaming */
	for (int c = 0; c < LEAK_CLASSES; c++)
		if (totals[c].ngroups > 1)
			qsort(totals[c].groups, totals[c].ngroups, sizeof(totals[c].groups[0]), compare_groups);
	return 0;
}

static void free_totals(struct leak_class_totals totals[LEAK_CLASSES])
{
	for (int c = 0; c < LEAK_CLASSES; c++)
		free(totals[c].groups);
}

static void print_stack(struct leaks_report *l, uint32_t pid, int32_t stack_id, FILE *out)
{
	uint32_t depth = 0;
	const uint64_t *ips = user_stacks_get(l->stacks, stack_id, &depth);
	char frame[512];

	if (stack_id == GRT_STACK_LOST) {
		fprintf(out, "        (no stack: the kernel could not walk it)\n");
		return;
	}
	if (stack_id < 0) {
		fprintf(out, "        (no stack recorded)\n");
		return;
	}
	if (!ips) {
		fprintf(out, "        (stack %d not in the trace)\n", stack_id);
		return;
	}
	for (uint32_t i = 0; i < depth; i++) {
		user_stacks_format_frame(l->stacks, pid, ips[i], i, frame, sizeof(frame));
		/* function names come from the program's own ELF files: escaped like its other texts */
		fprintf(out, "        #%-2u ", i);
		text_escape_write(out, frame, false);
		fputc('\n', out);
	}
}

static void print_class(struct leaks_report *l, struct leak_process *p, enum leak_class c,
			struct leak_class_totals *t, FILE *out)
{
	char human[32];
	size_t shown = 0;
	uint64_t hidden_bytes = 0, hidden_groups = 0;

	fprintf(out, "  %s: %" PRIu64 " bytes (%s), allocations %" PRIu64 "\n", class_names[c],
		t->bytes, report_format_bytes(t->bytes, human, sizeof(human)), t->allocations);
	for (size_t i = 0; i < t->ngroups; i++) {
		struct leak_group *g = &t->groups[i];

		if (g->bytes < l->min_bytes || (l->top_n && shown >= l->top_n)) {
			hidden_bytes += g->bytes;
			hidden_groups++;
			continue;
		}
		shown++;
		fprintf(out, "    %" PRIu64 " bytes in %" PRIu64 " allocation%s from:\n", g->bytes,
			g->allocations, g->allocations == 1 ? "" : "s");
		print_stack(l, p->pid, g->stack_id, out);
	}
	if (hidden_groups)
		fprintf(out, "    ... %" PRIu64 " more stacks with %" PRIu64 " bytes (--top, leak_min_bytes)\n",
			hidden_groups, hidden_bytes);
}

static void print_process(struct leaks_report *l, struct leak_process *p, FILE *out)
{
	char how[64];
	struct leak_class_totals totals[LEAK_CLASSES];

	if (group_leaks(p, totals)) {
		l->out_of_memory = true;
		free_totals(totals);
		return;
	}
	if (p->exited)
		fprintf(out, "pid %u (%s), %s, left allocated:\n", p->pid,
			pid_comms_get(&l->comms, p->pid),
			grt_describe_exit(p->exit_code, p->exit_signal, p->core_dumped, how,
					  sizeof(how)));
	else
		fprintf(out, "pid %u (%s), still running at the end of the trace, outstanding:\n", p->pid,
			pid_comms_get(&l->comms, p->pid));
	for (int c = 0; c < LEAK_CLASSES; c++)
		if (c == LEAK_DEVICE || totals[c].allocations)
			print_class(l, p, (enum leak_class)c, &totals[c], out);
	fprintf(out, "  allocations %" PRIu64 ", frees %" PRIu64 ", frees of unknown addresses %" PRIu64,
		p->allocs, p->frees, p->unknown_frees);
	if (p->failed_allocs)
		fprintf(out, ", failed allocations %" PRIu64, p->failed_allocs);
	if (p->lost_frees)
		fprintf(out, ", addresses allocated twice (free not seen) %" PRIu64, p->lost_frees);
	fputc('\n', out);
	free_totals(totals);
}

/* A process is worth a paragraph when something is left over or looked wrong. */
static bool process_notable(const struct leak_process *p)
{
	return p->nlive || p->unknown_frees || p->lost_frees;
}

static void leaks_print_text(void *state, FILE *out)
{
	struct leaks_report *l = state;
	size_t shown = 0;

	for (size_t i = 0; i < l->nprocs; i++) {
		if (!process_notable(l->procs[i]))
			continue;
		print_process(l, l->procs[i], out);
		shown++;
	}
	if (!shown) {
		uint64_t allocs = 0, frees = 0;

		for (size_t i = 0; i < l->nprocs; i++) {
			allocs += l->procs[i]->allocs;
			frees += l->procs[i]->frees;
		}
		fprintf(out, "no leaks: nothing left allocated (allocations %" PRIu64 ", frees %" PRIu64
			")\n", allocs, frees);
	}
	if (l->out_of_memory)
		fprintf(out, "WARNING: %s\n", LEAKS_INCOMPLETE);
}

static void json_stack(struct leaks_report *l, uint32_t pid, const struct leak_group *g,
		       struct json_writer *w)
{
	uint32_t depth = 0;
	const uint64_t *ips = user_stacks_get(l->stacks, g->stack_id, &depth);
	char frame[512];

	jw_begin_object(w);
	jw_field_u64(w, "bytes", g->bytes);
	jw_field_u64(w, "allocations", g->allocations);
	jw_key(w, "stack_id");
	jw_i64(w, g->stack_id);
	jw_key(w, "frames");
	jw_begin_array(w);
	for (uint32_t i = 0; ips && i < depth; i++) {
		user_stacks_format_frame(l->stacks, pid, ips[i], i, frame, sizeof(frame));
		jw_string(w, frame);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void json_class_fields(struct leaks_report *l, uint32_t pid, struct leak_class_totals *t,
			      struct json_writer *w)
{
	jw_field_u64(w, "bytes", t->bytes);
	jw_field_u64(w, "allocations", t->allocations);
	jw_key(w, "stacks");
	jw_begin_array(w);
	for (size_t i = 0; i < t->ngroups; i++)
		json_stack(l, pid, &t->groups[i], w);
	jw_end_array(w);
}

static void json_process(struct leaks_report *l, struct leak_process *p, struct json_writer *w)
{
	struct leak_class_totals totals[LEAK_CLASSES];

	if (group_leaks(p, totals))
		l->out_of_memory = true;
	jw_begin_object(w);
	jw_field_u64(w, "pid", p->pid);
	jw_field_string(w, "comm", pid_comms_get(&l->comms, p->pid));
	jw_key(w, "exited");
	jw_bool(w, p->exited);
	jw_key(w, "exit_code");
	if (p->exited)
		jw_i64(w, p->exit_code);
	else
		jw_null(w);
	jw_key(w, "signal");
	if (p->exited && p->exit_signal)
		jw_u64(w, p->exit_signal);
	else
		jw_null(w);
	jw_key(w, "core_dumped");
	jw_bool(w, p->core_dumped);
	/* the top level is the device class; managed and host memory follow as their own objects */
	json_class_fields(l, p->pid, &totals[LEAK_DEVICE], w);
	for (int c = LEAK_MANAGED; c < LEAK_CLASSES; c++) {
		jw_key(w, class_names[c]);
		jw_begin_object(w);
		json_class_fields(l, p->pid, &totals[c], w);
		jw_end_object(w);
	}
	jw_field_u64(w, "allocs", p->allocs);
	jw_field_u64(w, "frees", p->frees);
	jw_field_u64(w, "unknown_frees", p->unknown_frees);
	jw_field_u64(w, "failed_allocs", p->failed_allocs);
	jw_field_u64(w, "lost_frees", p->lost_frees);
	jw_end_object(w);
	free_totals(totals);
}

static void leaks_print_json(void *state, struct json_writer *w)
{
	struct leaks_report *l = state;

	jw_begin_array(w);
	for (size_t i = 0; i < l->nprocs; i++)
		if (process_notable(l->procs[i]))
			json_process(l, l->procs[i], w);
	jw_end_array(w);
}

static const char *leaks_incomplete(void *state)
{
	const struct leaks_report *l = state;

	return l->out_of_memory || l->comms.out_of_memory ? LEAKS_INCOMPLETE : NULL;
}

GRT_REPORT_SECTION(leaks_section) = {
	.name = "leaks",
	.summary = "GPU memory left allocated at process exit or trace end, by allocation stack",
	.default_on = true,
	.order = 50,
	.create = leaks_create,
	.on_record = leaks_on_record,
	.print_text = leaks_print_text,
	.print_json = leaks_print_json,
	.incomplete = leaks_incomplete,
	.destroy = leaks_destroy,
};
