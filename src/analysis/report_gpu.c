/* Report section `gpu`: CUPTI device time per kernel, block probes, not instrumented, clocks. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "analysis/stats.h"
#include "trace/records_core.h"
#include "trace/records_gpu.h"
#include "trace/trace_names.h"

#define GPU_INCOMPLETE "out of memory while counting; some records are missing"

#define MAX_CLOCKS 64	/* (pid, clock) calibration series kept */
#define MAX_MESSAGES 32 /* distinct gpu source_status lines kept */
#define NO_SM UINT32_MAX

/* One kernel name: CUPTI device times and block-probe launch summaries. */
struct gpu_kernel_row {
	struct grt_stats device_ns;    /* CUPTI end - start */
	struct grt_stats exec_ns;      /* probes: last block end - first block start */
	struct grt_stats block_p50_ns; /* probes: each launch's median block duration */
	uint64_t probed_launches;
	uint64_t lost_blocks;
	uint32_t max_blocks;
	uint32_t max_sms;
	double worst_imbalance; /* slowest block / median block, worst launch */
	uint64_t worst_launch_id;
	uint64_t busiest_sm_ns; /* of the worst launch */
	int instrument_status;	/* latest gpu_instrument status; 1 = none seen */
	char *reason;		/* latest reason when not instrumented */
};

/* Blocks per SM of one launch with per-block records: min and max over the SMs it used. */
struct launch_sm_counts {
	uint64_t launch_id;
	uint32_t counts[1024];
};

struct clock_series {
	uint32_t pid;
	uint32_t clock_id;
	uint32_t device;
	uint32_t fits;
	int64_t first_offset, last_offset;
	uint64_t first_host, last_host;
	uint64_t max_error;
};

struct copy_kind_row {
	uint64_t count, bytes;
	struct grt_stats device_ns;
};

struct gpu_report {
	struct name_table names;
	struct gpu_kernel_row *rows;
	size_t cap;
	struct copy_kind_row copies[8]; /* grt_copy_kind, the last for memsets */
	uint64_t copies_by_events;	/* of them, timed with CUDA events (CUPTI not loaded) */
	struct clock_series clocks[MAX_CLOCKS];
	unsigned nclocks;
	char *messages[MAX_MESSAGES];
	int message_status[MAX_MESSAGES];
	unsigned nmessages;
	struct u64_map sm_spread;	   /* launch_id -> (max << 32 | min) blocks per SM */
	struct launch_sm_counts *counting; /* the launch whose block records are being read */
	uint64_t drops;
	uint64_t kernel_records, launch_records, block_records;
	unsigned top_n;
	bool out_of_memory;
};

static size_t rows_count(const struct gpu_report *g)
{
	return g->names.count < g->cap ? g->names.count : g->cap;
}

static void *gpu_create(const struct report_input *in)
{
	struct gpu_report *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	name_table_init(&g->names);
	u64_map_init(&g->sm_spread);
	for (unsigned i = 0; i < 8; i++)
		grt_stats_init(&g->copies[i].device_ns);
	g->top_n = in->top_n;
	return g;
}

static void gpu_destroy(void *state)
{
	struct gpu_report *g = state;

	for (size_t i = 0; i < rows_count(g); i++) {
		grt_stats_destroy(&g->rows[i].device_ns);
		grt_stats_destroy(&g->rows[i].exec_ns);
		grt_stats_destroy(&g->rows[i].block_p50_ns);
		free(g->rows[i].reason);
	}
	for (unsigned i = 0; i < 8; i++)
		grt_stats_destroy(&g->copies[i].device_ns);
	for (unsigned i = 0; i < g->nmessages; i++)
		free(g->messages[i]);
	free(g->rows);
	free(g->counting);
	name_table_destroy(&g->names);
	u64_map_destroy(&g->sm_spread);
	free(g);
}

static struct gpu_kernel_row *row_for(struct gpu_report *g, const char *name)
{
	long index = name_table_intern(&g->names, name ? name : "?");

	if (index < 0)
		return NULL;
	while ((size_t)index >= g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 32;
		struct gpu_kernel_row *bigger = realloc(g->rows, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		for (size_t i = g->cap; i < cap; i++) {
			memset(&bigger[i], 0, sizeof(bigger[i]));
			grt_stats_init(&bigger[i].device_ns);
			grt_stats_init(&bigger[i].exec_ns);
			grt_stats_init(&bigger[i].block_p50_ns);
			bigger[i].instrument_status = 1;
		}
		g->rows = bigger;
		g->cap = cap;
	}
	return &g->rows[index];
}

static void add_stat(struct gpu_report *g, struct grt_stats *s, uint64_t v)
{
	if (grt_stats_add(s, v))
		g->out_of_memory = true;
}

static void on_kernel(struct gpu_report *g, const struct grt_record *rec,
		      const struct grt_strings *strings)
{
	const struct grt_gpu_kernel_rec *k = rec->payload;
	struct gpu_kernel_row *row = row_for(g, grt_strings_get(strings, k->kernel_str));

	g->kernel_records++;
	if (!row) {
		g->out_of_memory = true;
		return;
	}
	if (k->end_ns >= k->start_ns && k->start_ns)
		add_stat(g, &row->device_ns, k->end_ns - k->start_ns);
}

static void on_copy(struct gpu_report *g, const struct grt_record *rec)
{
	const struct grt_gpu_copy_rec *c = rec->payload;
	struct copy_kind_row *row =
	    &g->copies[c->kind == GRT_GPU_COPY_MEMSET ? 7 : (c->kind < 7 ? c->kind : 0)];

	row->count++;
	row->bytes += c->bytes;
	if (c->flags & GRT_GPU_F_EVENT_TIMED)
		g->copies_by_events++;
	if (c->end_ns >= c->start_ns && c->start_ns)
		add_stat(g, &row->device_ns, c->end_ns - c->start_ns);
}

static void on_launch(struct gpu_report *g, const struct grt_record *rec,
		      const struct grt_strings *strings)
{
	const struct grt_gpu_launch_rec *l = rec->payload;
	struct gpu_kernel_row *row = row_for(g, grt_strings_get(strings, l->kernel_str));
	double imbalance;

	g->launch_records++;
	if (!row) {
		g->out_of_memory = true;
		return;
	}
	row->probed_launches++;
	row->lost_blocks += l->lost_blocks;
	if (l->blocks > row->max_blocks)
		row->max_blocks = l->blocks;
	if (l->sms_used > row->max_sms)
		row->max_sms = l->sms_used;
	if (l->end_ns > l->start_ns && l->start_ns)
		add_stat(g, &row->exec_ns, l->end_ns - l->start_ns);
	if (l->block_ns_p50)
		add_stat(g, &row->block_p50_ns, l->block_ns_p50);
	imbalance = l->block_ns_p50 ? (double)l->block_ns_max / (double)l->block_ns_p50 : 0;
	if (imbalance > row->worst_imbalance) {
		row->worst_imbalance = imbalance;
		row->worst_launch_id = l->launch_id;
		row->busiest_sm_ns = l->busiest_sm_ns;
	}
}

/* Per-block records of one launch arrive together: count them per SM, keep min/max per launch. */
static void finish_sm_counts(struct gpu_report *g)
{
	struct launch_sm_counts *c = g->counting;
	uint32_t lo = UINT32_MAX, hi = 0;

	if (!c || !c->launch_id)
		return;
	for (unsigned sm = 0; sm < 1024; sm++) {
		if (!c->counts[sm])
			continue;
		if (c->counts[sm] < lo)
			lo = c->counts[sm];
		if (c->counts[sm] > hi)
			hi = c->counts[sm];
	}
	if (hi && u64_map_put(&g->sm_spread, c->launch_id, ((uint64_t)hi << 32) | lo))
		g->out_of_memory = true;
	memset(c, 0, sizeof(*c));
}

static void on_block(struct gpu_report *g, const struct grt_record *rec)
{
	const struct grt_gpu_block_rec *b = rec->payload;

	g->block_records++;
	if (b->smid == NO_SM || b->smid >= 1024)
		return;
	if (!g->counting && !(g->counting = calloc(1, sizeof(*g->counting)))) {
		g->out_of_memory = true;
		return;
	}
	if (g->counting->launch_id != b->launch_id) {
		finish_sm_counts(g);
		g->counting->launch_id = b->launch_id;
	}
	g->counting->counts[b->smid]++;
}

static void on_instrument(struct gpu_report *g, const struct grt_record *rec,
			  const struct grt_strings *strings)
{
	const struct grt_gpu_instrument_rec *i = rec->payload;
	struct gpu_kernel_row *row = row_for(g, grt_strings_get(strings, i->kernel_str));
	const char *reason = grt_strings_get(strings, i->reason_str);

	if (!row) {
		g->out_of_memory = true;
		return;
	}
	/* the latest word wins: a kernel can be instrumented, then fail at launch */
	row->instrument_status = i->status;
	free(row->reason);
	row->reason = i->status && reason ? strdup(reason) : NULL;
}

static void on_calib(struct gpu_report *g, const struct grt_record *rec)
{
	const struct grt_clock_calib_rec *c = rec->payload;
	int64_t offset = (int64_t)(c->gpu_ns - c->host_ns);
	struct clock_series *s = NULL;

	for (unsigned i = 0; i < g->nclocks && !s; i++)
		if (g->clocks[i].pid == rec->hdr.pid && g->clocks[i].clock_id == c->clock_id &&
		    g->clocks[i].device == c->device)
			s = &g->clocks[i];
	if (!s) {
		if (g->nclocks == MAX_CLOCKS)
			return;
		s = &g->clocks[g->nclocks++];
		*s = (struct clock_series){.pid = rec->hdr.pid,
					   .clock_id = c->clock_id,
					   .device = c->device,
					   .first_offset = offset,
					   .first_host = c->host_ns};
	}
	s->fits++;
	s->last_offset = offset;
	s->last_host = c->host_ns;
	if (c->error_ns > s->max_error)
		s->max_error = c->error_ns;
}

static void on_status(struct gpu_report *g, const struct grt_record *rec,
		      const struct grt_strings *strings)
{
	const struct grt_source_status_rec *s = rec->payload;
	const char *text = grt_strings_get(strings, s->message_str);

	if (s->source != GRT_SRC_GPU || !text || g->nmessages == MAX_MESSAGES)
		return;
	/* the library's summaries and every problem; not the per-module attach lines */
	if (!s->status && strncmp(text, "CUPTI:", 6) && strncmp(text, "cost:", 5) &&
	    !strstr(text, "launches instrumented"))
		return;
	for (unsigned i = 0; i < g->nmessages; i++)
		if (!strcmp(g->messages[i], text))
			return;
	g->message_status[g->nmessages] = s->status;
	if (!(g->messages[g->nmessages] = strdup(text)))
		g->out_of_memory = true;
	else
		g->nmessages++;
}

static void gpu_on_record(void *state, const struct grt_record *rec,
			  const struct grt_strings *strings)
{
	struct gpu_report *g = state;

	switch (rec->hdr.type) {
	case GRT_REC_GPU_KERNEL:
		on_kernel(g, rec, strings);
		break;
	case GRT_REC_GPU_COPY:
		on_copy(g, rec);
		break;
	case GRT_REC_GPU_LAUNCH:
		on_launch(g, rec, strings);
		break;
	case GRT_REC_GPU_BLOCK:
		on_block(g, rec);
		break;
	case GRT_REC_GPU_INSTRUMENT:
		on_instrument(g, rec, strings);
		break;
	case GRT_REC_CLOCK_CALIB:
		on_calib(g, rec);
		break;
	case GRT_REC_SOURCE_STATUS:
		on_status(g, rec, strings);
		break;
	case GRT_REC_DROP:
		if (((const struct grt_drop_rec *)rec->payload)->source == GRT_SRC_GPU)
			g->drops += ((const struct grt_drop_rec *)rec->payload)->count;
		break;
	default:
		break;
	}
}

/* Kernels with device time first (most total first), then probed-only ones. */
static int compare_rows(const void *a, const void *b, void *ctx)
{
	const struct gpu_report *g = ctx;
	const struct gpu_kernel_row *x = &g->rows[*(const size_t *)a],
				    *y = &g->rows[*(const size_t *)b];

	if (x->device_ns.total != y->device_ns.total)
		return x->device_ns.total > y->device_ns.total ? -1 : 1;
	if (x->exec_ns.total != y->exec_ns.total)
		return x->exec_ns.total > y->exec_ns.total ? -1 : 1;
	return strcmp(g->names.names[*(const size_t *)a], g->names.names[*(const size_t *)b]);
}

/* Row indices matching want (device times, probes, not instrumented), sorted; NULL when none. */
static size_t *select_rows(struct gpu_report *g, size_t *n, int what)
{
	size_t *order = malloc((rows_count(g) ? rows_count(g) : 1) * sizeof(*order));

	*n = 0;
	if (!order) {
		g->out_of_memory = true;
		return NULL;
	}
	for (size_t i = 0; i < rows_count(g); i++) {
		const struct gpu_kernel_row *r = &g->rows[i];
		bool take = what == 0	? r->device_ns.count > 0
			    : what == 1 ? r->probed_launches > 0
					: r->instrument_status < 0;

		if (take)
			order[(*n)++] = i;
	}
	qsort_r(order, *n, sizeof(*order), compare_rows, g);
	return order;
}

static size_t shown(const struct gpu_report *g, size_t n)
{
	return g->top_n && g->top_n < n ? g->top_n : n;
}

static void print_device_times(struct gpu_report *g, FILE *out)
{
	size_t n, *order = select_rows(g, &n, 0);

	if (!n) {
		fprintf(
		    out,
		    "no CUPTI kernel records (CUPTI off, unavailable, or not needed where the block "
		    "probes timed every kernel: see the notes below)\n");
		free(order);
		return;
	}
	fprintf(out, "device time per kernel (CUPTI, %" PRIu64 " kernel records)\n",
		g->kernel_records);
	fprintf(out, "%9s %12s %10s %10s %10s  %s\n", "launches", "total_us", "mean_us", "p50_us",
		"p99_us", "kernel");
	for (size_t i = 0; i < shown(g, n); i++) {
		struct gpu_kernel_row *r = &g->rows[order[i]];

		fprintf(out, "%9" PRIu64 " %12.3f %10.3f %10.3f %10.3f  %s\n", r->device_ns.count,
			report_ns_to_us(r->device_ns.total), grt_stats_mean(&r->device_ns) / 1000.0,
			report_ns_to_us(grt_stats_percentile(&r->device_ns, 50)),
			report_ns_to_us(grt_stats_percentile(&r->device_ns, 99)),
			g->names.names[order[i]]);
	}
	if (shown(g, n) < n)
		fprintf(out, "... %zu more kernels (--top 0 shows all)\n", n - shown(g, n));
	free(order);
}

static void print_copies(struct gpu_report *g, FILE *out)
{
	char bytes[32];

	for (unsigned k = 0; k < 8; k++) {
		struct copy_kind_row *c = &g->copies[k];

		if (!c->count)
			continue;
		fprintf(out, "  %-8s %8" PRIu64 " ops %12s  device %10.3f us total, p50 %8.3f us\n",
			k == 7 ? "memset" : grt_copy_kind_name(k), c->count,
			report_format_bytes(c->bytes, bytes, sizeof(bytes)),
			report_ns_to_us(c->device_ns.total),
			report_ns_to_us(grt_stats_percentile(&c->device_ns, 50)));
	}
	/* an event pair times the stream, not the copy engine: say which rows read so */
	if (g->copies_by_events)
		fprintf(out,
			"  (%" PRIu64 " of these timed with CUDA events around their calls, CUPTI not "
			"loaded: the stream's time, with the copy engine's start-up and the staging of "
			"pageable memory)\n",
			g->copies_by_events);
}

static void print_probes(struct gpu_report *g, FILE *out)
{
	size_t n, *order = select_rows(g, &n, 1);

	if (!n) {
		fprintf(out,
			"no block-probe launches (no kernel with usable PTX ran, or probes off)\n");
		free(order);
		return;
	}
	fprintf(out,
		"block probes per kernel (%" PRIu64 " launch summaries, %" PRIu64
		" block records)\n",
		g->launch_records, g->block_records);
	fprintf(out, "%9s %7s %5s %11s %11s %10s %9s %10s %8s  %s\n", "launches", "blocks", "SMs",
		"exec_p50_us", "exec_p99_us", "blk_p50_us", "imbal_max", "blocks/SM", "lost", "kernel");
	for (size_t i = 0; i < shown(g, n); i++) {
		struct gpu_kernel_row *r = &g->rows[order[i]];
		uint64_t spread = 0;
		char per_sm[24] = "-";

		if (u64_map_get(&g->sm_spread, r->worst_launch_id, &spread))
			snprintf(per_sm, sizeof(per_sm), "%u-%u", (unsigned)(spread & 0xffffffffu),
				 (unsigned)(spread >> 32));
		fprintf(out,
			"%9" PRIu64 " %7u %5u %11.3f %11.3f %10.3f %9.2f %10s %8" PRIu64 "  %s\n",
			r->probed_launches, r->max_blocks, r->max_sms,
			report_ns_to_us(grt_stats_percentile(&r->exec_ns, 50)),
			report_ns_to_us(grt_stats_percentile(&r->exec_ns, 99)),
			report_ns_to_us(grt_stats_percentile(&r->block_p50_ns, 50)),
			r->worst_imbalance, per_sm, r->lost_blocks, g->names.names[order[i]]);
	}
	fprintf(
	    out,
	    "  exec = first block start to last block end; imbal = slowest block / median block "
	    "(worst launch, whose blocks per SM are shown when its blocks were recorded)\n");
	free(order);
}

static void print_not_instrumented(struct gpu_report *g, FILE *out)
{
	size_t n, instrumented = 0, *order = select_rows(g, &n, 2);

	for (size_t i = 0; i < rows_count(g); i++)
		instrumented += g->rows[i].instrument_status == 0;
	fprintf(out, "kernels instrumented: %zu, not instrumented: %zu\n", instrumented, n);
	for (size_t i = 0; i < shown(g, n); i++)
		fprintf(out, "  %s: %s\n", g->names.names[order[i]],
			g->rows[order[i]].reason ? g->rows[order[i]].reason : "?");
	if (shown(g, n) < n)
		fprintf(out, "  ... %zu more (--top 0 shows all)\n", n - shown(g, n));
	free(order);
}

static const char *clock_name(uint32_t id)
{
	return id == GRT_CLOCK_GPU_GLOBALTIMER ? "globaltimer"
	       : id == GRT_CLOCK_CUPTI	       ? "cupti"
					       : "?";
}

static void print_clocks(struct gpu_report *g, FILE *out)
{
	if (!g->nclocks) {
		fprintf(out, "no clock calibration (device times are not mapped)\n");
		return;
	}
	fprintf(out, "clock calibration (device clock - CLOCK_MONOTONIC)\n");
	for (unsigned i = 0; i < g->nclocks; i++) {
		const struct clock_series *s = &g->clocks[i];
		double span = (double)(s->last_host - s->first_host) / 1e9;

		fprintf(out,
			"  pid %-7u %-11s dev %u: %u fits, offset %" PRId64 " ns, error <= %" PRIu64
			" ns, drift %+" PRId64 " ns over %.3f s\n",
			s->pid, clock_name(s->clock_id), s->device, s->fits, s->first_offset,
			s->max_error, s->last_offset - s->first_offset, span);
	}
}

static void gpu_print_text(void *state, FILE *out)
{
	struct gpu_report *g = state;

	finish_sm_counts(g);
	if (!g->kernel_records && !g->launch_records && !g->nclocks && !g->nmessages &&
	    !rows_count(g)) {
		fprintf(out, "no gpu source records in this trace (record with -s gpu)\n");
		return;
	}
	print_device_times(g, out);
	print_copies(g, out);
	print_probes(g, out);
	print_not_instrumented(g, out);
	print_clocks(g, out);
	fprintf(out,
		"gpu source events lost: %" PRIu64
		" (CUPTI records, ring overflow, launches without a "
		"probe buffer)\n",
		g->drops);
	for (unsigned i = 0; i < g->nmessages; i++)
		fprintf(out, "  %s%s\n", g->message_status[i] ? "problem: " : "", g->messages[i]);
	if (g->out_of_memory)
		fprintf(out, "WARNING: %s\n", GPU_INCOMPLETE);
}

static void json_kernels(struct gpu_report *g, struct json_writer *w)
{
	size_t n, *order = select_rows(g, &n, 0);

	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		jw_begin_object(w);
		jw_key(w, "kernel");
		jw_string(w, g->names.names[order[i]]);
		jw_key(w, "device_ns");
		report_json_stats(w, &g->rows[order[i]].device_ns);
		jw_end_object(w);
	}
	jw_end_array(w);
	free(order);
}

static void json_probes(struct gpu_report *g, struct json_writer *w)
{
	size_t n, *order = select_rows(g, &n, 1);

	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		struct gpu_kernel_row *r = &g->rows[order[i]];
		uint64_t spread = 0;

		jw_begin_object(w);
		jw_key(w, "kernel");
		jw_string(w, g->names.names[order[i]]);
		jw_key(w, "launches");
		jw_u64(w, r->probed_launches);
		jw_key(w, "max_blocks");
		jw_u64(w, r->max_blocks);
		jw_key(w, "max_sms");
		jw_u64(w, r->max_sms);
		jw_key(w, "exec_ns");
		report_json_stats(w, &r->exec_ns);
		jw_key(w, "block_p50_ns");
		report_json_stats(w, &r->block_p50_ns);
		jw_key(w, "worst_imbalance");
		jw_f64(w, r->worst_imbalance);
		jw_key(w, "worst_launch_id");
		jw_u64(w, r->worst_launch_id);
		jw_key(w, "worst_busiest_sm_ns");
		jw_u64(w, r->busiest_sm_ns);
		if (u64_map_get(&g->sm_spread, r->worst_launch_id, &spread)) {
			jw_key(w, "worst_blocks_per_sm_min");
			jw_u64(w, spread & 0xffffffffu);
			jw_key(w, "worst_blocks_per_sm_max");
			jw_u64(w, spread >> 32);
		}
		jw_key(w, "lost_blocks");
		jw_u64(w, r->lost_blocks);
		jw_end_object(w);
	}
	jw_end_array(w);
	free(order);
}

static void json_rest(struct gpu_report *g, struct json_writer *w)
{
	size_t n, *order = select_rows(g, &n, 2);

	jw_key(w, "not_instrumented");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		jw_begin_object(w);
		jw_key(w, "kernel");
		jw_string(w, g->names.names[order[i]]);
		jw_key(w, "status");
		jw_i64(w, g->rows[order[i]].instrument_status);
		jw_key(w, "reason");
		jw_string(w, g->rows[order[i]].reason);
		jw_end_object(w);
	}
	jw_end_array(w);
	free(order);
	jw_key(w, "clocks");
	jw_begin_array(w);
	for (unsigned i = 0; i < g->nclocks; i++) {
		const struct clock_series *s = &g->clocks[i];

		jw_begin_object(w);
		jw_key(w, "pid");
		jw_u64(w, s->pid);
		jw_key(w, "clock");
		jw_string(w, clock_name(s->clock_id));
		jw_key(w, "device");
		jw_u64(w, s->device);
		jw_key(w, "fits");
		jw_u64(w, s->fits);
		jw_key(w, "offset_ns");
		jw_i64(w, s->first_offset);
		jw_key(w, "error_ns");
		jw_u64(w, s->max_error);
		jw_key(w, "drift_ns");
		jw_i64(w, s->last_offset - s->first_offset);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "copies_timed_by_events");
	jw_u64(w, g->copies_by_events);
	jw_key(w, "drops");
	jw_u64(w, g->drops);
	jw_key(w, "messages");
	jw_begin_array(w);
	for (unsigned i = 0; i < g->nmessages; i++)
		jw_string(w, g->messages[i]);
	jw_end_array(w);
}

static void gpu_print_json(void *state, struct json_writer *w)
{
	struct gpu_report *g = state;

	finish_sm_counts(g);
	jw_begin_object(w);
	jw_key(w, "kernels");
	json_kernels(g, w);
	jw_key(w, "probes");
	json_probes(g, w);
	json_rest(g, w);
	jw_end_object(w);
}

static const char *gpu_incomplete(void *state)
{
	const struct gpu_report *g = state;

	return g->out_of_memory ? GPU_INCOMPLETE : NULL;
}

GRT_REPORT_SECTION(gpu_section) = {
    .name = "gpu",
    .summary = "device time per kernel (CUPTI), block-probe launches, kernels not instrumented and "
	       "why, clocks",
    .default_on = true,
    .order = 25,
    .create = gpu_create,
    .on_record = gpu_on_record,
    .print_text = gpu_print_text,
    .print_json = gpu_print_json,
    .incomplete = gpu_incomplete,
    .destroy = gpu_destroy,
};
