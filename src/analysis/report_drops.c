/* Report section `drops`: events lost per source and per-CPU sequence gaps, so no loss goes unseen. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "common/u64_map.h"
#include "trace/grt_format.h"
#include "trace/records_core.h"
#include "trace/trace_names.h"

#define DROPS_INCOMPLETE "out of memory while checking sequences; the gap counts are incomplete"

/* Sequence bookkeeping of one CPU: seq should rise by exactly one per record. */
struct cpu_sequence {
	uint32_t cpu;
	uint32_t next_seq;	/* expected seq of the CPU's next record */
	uint64_t records;
	uint64_t gaps;		/* places where records are missing */
	uint64_t missing;	/* records missing in those places */
	/*
	 * A seq below the expected one fills an earlier gap (the record was
	 * only out of order: no longer missing) or, with no gap open, repeats
	 * one already seen (duplicated).
	 */
	uint64_t reordered;
	uint64_t duplicated;
};

struct drops_report {
	uint64_t lost[GRT_SRC_MAX + 1];	/* [GRT_SRC_MAX]: sources this build does not know */
	uint64_t drop_records;
	bool have_trailer;
	uint64_t trailer_drops;
	struct cpu_sequence *cpus;
	size_t ncpus, cap;
	struct u64_map by_cpu;	/* cpu -> index in cpus */
	bool out_of_memory;
};

static void *drops_create(const struct report_input *in)
{
	struct drops_report *d = calloc(1, sizeof(*d));

	if (d)
		u64_map_init(&d->by_cpu);
	return d;
}

static void drops_destroy(void *state)
{
	struct drops_report *d = state;

	u64_map_destroy(&d->by_cpu);
	free(d->cpus);
	free(d);
}

static struct cpu_sequence *cpu_for(struct drops_report *d, uint32_t cpu, bool *first)
{
	uint64_t index;

	*first = false;
	if (u64_map_get(&d->by_cpu, cpu, &index))
		return &d->cpus[index];
	if (d->ncpus == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct cpu_sequence *bigger = realloc(d->cpus, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		d->cpus = bigger;
		d->cap = cap;
	}
	if (u64_map_put(&d->by_cpu, cpu, d->ncpus))
		return NULL;
	*first = true;
	d->cpus[d->ncpus] = (struct cpu_sequence){ .cpu = cpu };
	return &d->cpus[d->ncpus++];
}

static void check_sequence(struct drops_report *d, const struct grt_record_header *hdr)
{
	bool first;
	struct cpu_sequence *c = cpu_for(d, hdr->cpu, &first);
	uint32_t ahead;

	if (!c) {
		d->out_of_memory = true;
		return;
	}
	c->records++;
	/* a CPU's sequence starts at 0: records before its first one are missing too */
	ahead = hdr->seq - c->next_seq;	/* modulo 2^32: the counter may wrap */
	if (ahead && ahead < 0x80000000u) {
		c->gaps++;
		c->missing += ahead;
	} else if (ahead && !first) {
		if (c->missing) {
			c->missing--;
			c->reordered++;
		} else {
			c->duplicated++;
		}
		return;	/* keep expecting the higher number */
	}
	c->next_seq = hdr->seq + 1;
}

static void drops_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct drops_report *d = state;

	if (rec->hdr.type != GRT_REC_CHECKSUM) /* outside the per-CPU sequences */
		check_sequence(d, &rec->hdr);
	if (rec->hdr.type == GRT_REC_DROP) {
		const struct grt_drop_rec *drop = rec->payload;

		d->lost[drop->source < GRT_SRC_MAX ? drop->source : GRT_SRC_MAX] += drop->count;
		d->drop_records++;
	} else if (rec->hdr.type == GRT_REC_TRAILER) {
		const struct grt_trailer_rec *t = rec->payload;

		d->have_trailer = true;
		d->trailer_drops = t->drops;
	}
}

static uint64_t total_lost(const struct drops_report *d)
{
	uint64_t total = 0;

	for (int i = 0; i <= GRT_SRC_MAX; i++)
		total += d->lost[i];
	return total;
}

static uint64_t total_missing(const struct drops_report *d)
{
	uint64_t total = 0;

	for (size_t i = 0; i < d->ncpus; i++)
		total += d->cpus[i].missing;
	return total;
}

static const char *source_label(int source)
{
	return source == GRT_SRC_MAX ? "unknown-source" : grt_source_name((uint32_t)source);
}

/* Records out of order or repeated, over every CPU. */
static uint64_t total_irregular(const struct drops_report *d)
{
	uint64_t total = 0;

	for (size_t i = 0; i < d->ncpus; i++)
		total += d->cpus[i].reordered + d->cpus[i].duplicated;
	return total;
}

static int compare_cpus(const void *a, const void *b)
{
	const struct cpu_sequence *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static void drops_print_text(void *state, FILE *out)
{
	struct drops_report *d = state;
	uint64_t lost = total_lost(d), missing = total_missing(d);

	if (d->ncpus > 1)
		qsort(d->cpus, d->ncpus, sizeof(d->cpus[0]), compare_cpus);
	if (!lost)
		fprintf(out, "lost events: none reported by any source\n");
	else
		fprintf(out, "lost events: %" PRIu64 " (in %" PRIu64 " drop records)\n", lost,
			d->drop_records);
	for (int i = 0; i <= GRT_SRC_MAX; i++)
		if (d->lost[i])
			fprintf(out, "  %-16s %12" PRIu64 "\n", source_label(i), d->lost[i]);
	if (d->have_trailer && d->trailer_drops != lost)
		fprintf(out, "WARNING: the trailer counts %" PRIu64 " lost events, the drop records %" PRIu64
			"\n", d->trailer_drops, lost);
	if (!missing && !total_irregular(d))
		fprintf(out, "record sequence: contiguous (CPUs seen: %zu)\n", d->ncpus);
	else if (!missing)
		fprintf(out, "record sequence: nothing missing, but records out of order or duplicated\n");
	else
		fprintf(out, "record sequence: records missing from the trace file: %" PRIu64 "\n", missing);
	for (size_t i = 0; i < d->ncpus; i++) {
		struct cpu_sequence *c = &d->cpus[i];

		if (c->gaps || c->reordered || c->duplicated)
			fprintf(out, "  cpu %-4u missing %" PRIu64 ", gaps %" PRIu64 ", out of order %" PRIu64
				", duplicated %" PRIu64 "\n", c->cpu, c->missing, c->gaps, c->reordered,
				c->duplicated);
	}
	if (d->out_of_memory)
		fprintf(out, "WARNING: %s\n", DROPS_INCOMPLETE);
}

static void drops_print_json(void *state, struct json_writer *w)
{
	struct drops_report *d = state;

	if (d->ncpus > 1)
		qsort(d->cpus, d->ncpus, sizeof(d->cpus[0]), compare_cpus);
	jw_begin_object(w);
	jw_field_u64(w, "lost", total_lost(d));
	jw_field_u64(w, "drop_records", d->drop_records);
	jw_key(w, "trailer_lost");
	if (d->have_trailer)
		jw_u64(w, d->trailer_drops);
	else
		jw_null(w);
	jw_key(w, "sources");
	jw_begin_array(w);
	for (int i = 0; i <= GRT_SRC_MAX; i++) {
		if (!d->lost[i])
			continue;
		jw_begin_object(w);
		jw_field_string(w, "source", source_label(i));
		jw_field_u64(w, "lost", d->lost[i]);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_field_u64(w, "sequence_missing", total_missing(d));
	jw_key(w, "cpus");
	jw_begin_array(w);
	for (size_t i = 0; i < d->ncpus; i++) {
		jw_begin_object(w);
		jw_field_u64(w, "cpu", d->cpus[i].cpu);
		jw_field_u64(w, "records", d->cpus[i].records);
		jw_field_u64(w, "gaps", d->cpus[i].gaps);
		jw_field_u64(w, "missing", d->cpus[i].missing);
		jw_field_u64(w, "out_of_order", d->cpus[i].reordered);
		jw_field_u64(w, "duplicated", d->cpus[i].duplicated);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static const char *drops_incomplete(void *state)
{
	const struct drops_report *d = state;

	return d->out_of_memory ? DROPS_INCOMPLETE : NULL;
}

GRT_REPORT_SECTION(drops_section) = {
	.name = "drops",
	.summary = "events lost per source (drop records) and per-CPU record sequence gaps",
	.default_on = true,
	.order = 90,
	.create = drops_create,
	.on_record = drops_on_record,
	.print_text = drops_print_text,
	.print_json = drops_print_json,
	.incomplete = drops_incomplete,
	.destroy = drops_destroy,
};
