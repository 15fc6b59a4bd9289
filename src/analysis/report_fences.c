/* Report section `fences`: dma_fence events by kind and wait durations per driver timeline (fence source). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/kernel_stats.h"
#include "analysis/report_section.h"
#include "trace/kernel_names.h"
#include "trace/records_kernel.h"

#define FENCE_KINDS (GRT_FENCE_WAIT_END + 1)
#define MAX_TIMELINES 256

/* Waits of one (driver, timeline). */
struct timeline_waits {
	char driver[32];
	char timeline[32];
	struct duration_list waits;
	uint64_t unmatched;	/* wait_end without this thread's wait_start in the trace */
};

struct fence_report {
	uint64_t events[FENCE_KINDS];
	struct timeline_waits timelines[MAX_TIMELINES];
	size_t ntimelines;
	uint64_t untracked;	/* waits of timelines beyond MAX_TIMELINES */
};

static void *fences_create(const struct report_input *in)
{
	struct fence_report *r = calloc(1, sizeof(*r));

	if (!r)
		errno = ENOMEM;
	return r;
}

static struct timeline_waits *timeline_of(struct fence_report *r, const char *driver, const char *timeline)
{
	driver = driver ? driver : "";
	timeline = timeline ? timeline : "";
	for (size_t i = 0; i < r->ntimelines; i++)
		if (!strcmp(r->timelines[i].driver, driver) && !strcmp(r->timelines[i].timeline, timeline))
			return &r->timelines[i];
	if (r->ntimelines == MAX_TIMELINES)
		return NULL;
	struct timeline_waits *t = &r->timelines[r->ntimelines++];
	snprintf(t->driver, sizeof(t->driver), "%s", driver);
	snprintf(t->timeline, sizeof(t->timeline), "%s", timeline);
	return t;
}

static void fences_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct fence_report *r = state;
	const struct grt_fence_rec *f = rec->payload;
	struct timeline_waits *t;

	if (rec->hdr.type != GRT_REC_FENCE)
		return;
	if (f->event < FENCE_KINDS)
		r->events[f->event]++;
	if (f->event != GRT_FENCE_WAIT_END)
		return;
	t = timeline_of(r, grt_strings_get(strings, f->driver_str), grt_strings_get(strings, f->timeline_str));
	if (!t)
		r->untracked++;
	else if (!(f->flags & GRT_FENCE_F_WAIT_MATCHED))
		t->unmatched++;
	else
		duration_list_push(&t->waits, f->wait_ns);
}

static bool fences_empty(const struct fence_report *r)
{
	for (int k = 0; k < FENCE_KINDS; k++)
		if (r->events[k])
			return false;
	return true;
}

static uint64_t total_of(const struct duration_list *d)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->n; i++)
		sum += d->v[i];
	return sum;
}

static void fences_print_text(void *state, FILE *out)
{
	struct fence_report *r = state;

	if (fences_empty(r)) {
		fprintf(out, "no dma_fence events in this trace (record with -s fence)\n");
		return;
	}
	fprintf(out, "dma_fence events\n ");
	for (int k = GRT_FENCE_INIT; k < FENCE_KINDS; k++)
		fprintf(out, " %s=%llu", grt_fence_event_name(k), (unsigned long long)r->events[k]);
	fprintf(out, "\n  %-16s %-24s %7s %11s %10s %10s %10s %9s\n", "driver", "timeline", "waits", "total_ms",
		"p50_us", "p99_us", "max_us", "unpaired");
	for (size_t i = 0; i < r->ntimelines; i++) {
		struct timeline_waits *t = &r->timelines[i];

		fprintf(out, "  %-16s %-24s %7zu %11.3f %10.1f %10.1f %10.1f %9llu\n", t->driver, t->timeline,
			t->waits.n, total_of(&t->waits) / 1e6, duration_list_percentile(&t->waits, 50) / 1e3,
			duration_list_percentile(&t->waits, 99) / 1e3, duration_list_percentile(&t->waits, 100) / 1e3,
			(unsigned long long)t->unmatched);
	}
	if (r->untracked)
		fprintf(out, "  (%llu waits on further timelines not broken down)\n", (unsigned long long)r->untracked);
}

static void fences_print_json(void *state, struct json_writer *w)
{
	struct fence_report *r = state;

	jw_begin_object(w);
	jw_key(w, "events");
	jw_begin_object(w);
	for (int k = GRT_FENCE_INIT; k < FENCE_KINDS; k++) {
		jw_key(w, grt_fence_event_name(k));
		jw_u64(w, r->events[k]);
	}
	jw_end_object(w);
	jw_key(w, "waits");
	jw_begin_array(w);
	for (size_t i = 0; i < r->ntimelines; i++) {
		struct timeline_waits *t = &r->timelines[i];

		jw_begin_object(w);
		jw_key(w, "driver");
		jw_string(w, t->driver);
		jw_key(w, "timeline");
		jw_string(w, t->timeline);
		jw_key(w, "count");
		jw_u64(w, t->waits.n);
		jw_key(w, "total_ns");
		jw_u64(w, total_of(&t->waits));
		jw_key(w, "p50_ns");
		jw_u64(w, duration_list_percentile(&t->waits, 50));
		jw_key(w, "p99_ns");
		jw_u64(w, duration_list_percentile(&t->waits, 99));
		jw_key(w, "max_ns");
		jw_u64(w, duration_list_percentile(&t->waits, 100));
		jw_key(w, "unpaired");
		jw_u64(w, t->unmatched);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void fences_destroy(void *state)
{
	struct fence_report *r = state;

	for (size_t i = 0; i < r->ntimelines; i++)
		duration_list_free(&r->timelines[i].waits);
	free(r);
}

GRT_REPORT_SECTION(fences_section) = {
	.name = "fences",
	.summary = "dma_fence events by kind, wait durations per driver timeline (fence source)",
	.default_on = true,
	.sources = 1u << GRT_SRC_FENCE,
	.order = 63,
	.create = fences_create,
	.on_record = fences_on_record,
	.print_text = fences_print_text,
	.print_json = fences_print_json,
	.destroy = fences_destroy,
};
