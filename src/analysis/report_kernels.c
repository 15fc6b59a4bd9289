/* Report section `kernels`: per kernel name, launches, launch API time and the launch shapes seen. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "analysis/stats.h"
#include "trace/records_cuda.h"
#include "trace/trace_names.h"

#define KERNELS_INCOMPLETE "out of memory while counting; some launches are missing"

/* Distinct grid/block shapes kept per kernel; launches in further shapes are counted together. */
#define MAX_SHAPES 8

struct launch_shape {
	uint32_t grid[3];
	uint32_t block[3];
	uint64_t launches;
};

struct kernel_row {
	uint64_t launches;
	uint64_t errors;
	uint64_t unfinished;	/* the launch call never returned */
	uint64_t unsampled;	/* its return was not sampled (record --launch-returns) */
	struct grt_stats api_ns;
	struct launch_shape shapes[MAX_SHAPES];
	uint32_t nshapes;
	uint64_t other_shape_launches;
	bool unresolved;	/* named func@0x... for want of a name */
	uint64_t handle;	/* when unresolved */
};

struct kernels_report {
	struct name_table names;	/* row i is named names.names[i] */
	struct kernel_row *rows;
	size_t cap;
	struct u64_map handle_names;	/* function handle -> name index + 1, from func_name records */
	unsigned top_n;
	bool out_of_memory;
	bool have_config;	/* the trace says how launch returns were sampled */
	uint32_t return_every;	/* its --launch-returns */
};

/* Rows that exist: a name interned when the rows could not grow has none. */
static size_t rows_count(const struct kernels_report *k)
{
	return k->names.count < k->cap ? k->names.count : k->cap;
}

static void *kernels_create(const struct report_input *in)
{
	struct kernels_report *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	name_table_init(&k->names);
	u64_map_init(&k->handle_names);
	k->top_n = in->top_n;
	return k;
}

static void kernels_destroy(void *state)
{
	struct kernels_report *k = state;

	for (size_t i = 0; i < rows_count(k); i++)
		grt_stats_destroy(&k->rows[i].api_ns);
	free(k->rows);
	name_table_destroy(&k->names);
	u64_map_destroy(&k->handle_names);
	free(k);
}

/* The row of a name, created with the name; NULL when memory ran out. */
static struct kernel_row *row_for(struct kernels_report *k, const char *name)
{
	long index = name_table_intern(&k->names, name);

	if (index < 0)
		return NULL;
	if ((size_t)index >= k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 32;
		struct kernel_row *bigger = realloc(k->rows, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		memset(bigger + k->cap, 0, (cap - k->cap) * sizeof(*bigger));
		k->rows = bigger;
		k->cap = cap;
	}
	return &k->rows[index];
}

static void note_shape(struct kernel_row *row, const uint32_t grid[3], const uint32_t block[3],
		       uint64_t launches)
{
	for (uint32_t i = 0; i < row->nshapes; i++) {
		struct launch_shape *s = &row->shapes[i];

		if (!memcmp(s->grid, grid, sizeof(s->grid)) && !memcmp(s->block, block, sizeof(s->block))) {
			s->launches += launches;
			return;
		}
	}
	if (row->nshapes == MAX_SHAPES) {
		row->other_shape_launches += launches;
		return;
	}
	memcpy(row->shapes[row->nshapes].grid, grid, sizeof(row->shapes[0].grid));
	memcpy(row->shapes[row->nshapes].block, block, sizeof(row->shapes[0].block));
	row->shapes[row->nshapes++].launches = launches;
}

/* The kernel's name: from the launch, else from an earlier func_name record, else func@0x... */
static struct kernel_row *launch_row(struct kernels_report *k, const struct grt_cuda_launch_rec *l,
				     const struct grt_strings *strings)
{
	const char *name = grt_strings_get(strings, l->kernel_str);
	struct kernel_row *row;
	char unknown[32];
	uint64_t index;

	if (!name && u64_map_get(&k->handle_names, l->function, &index))
		name = k->names.names[index - 1];
	if (name) {
		row = row_for(k, name);
		/* later launches of this handle may come without a name */
		if (row && l->function &&
		    u64_map_put(&k->handle_names, l->function, (uint64_t)(row - k->rows) + 1))
			return NULL;
		return row;
	}
	row = row_for(k, grt_unknown_kernel_name(l->function, unknown, sizeof(unknown)));
	if (row) {
		row->unresolved = true;
		row->handle = l->function;
	}
	return row;
}

static void on_launch(struct kernels_report *k, const struct grt_record *rec,
		      const struct grt_strings *strings)
{
	const struct grt_cuda_launch_rec *l = rec->payload;
	struct kernel_row *row = launch_row(k, l, strings);
	uint64_t ns;

	if (!row) {
		k->out_of_memory = true;
		return;
	}
	row->launches++;
	if (report_call_failed(&l->call))
		row->errors++;
	if (report_call_ns(rec, &l->call, &ns)) {
		if (grt_stats_add(&row->api_ns, ns))
			k->out_of_memory = true;
	} else if (l->call.flags & GRT_CUDA_F_RETURN_UNSAMPLED) {
		row->unsampled++;
	} else {
		row->unfinished++;
	}
	note_shape(row, l->grid, l->block, 1);
}

static void on_func_name(struct kernels_report *k, const struct grt_record *rec,
			 const struct grt_strings *strings)
{
	const struct grt_cuda_func_name_rec *f = rec->payload;
	const char *name = grt_strings_get(strings, f->name_str);
	long index;

	if (!name || report_call_failed(&f->call))
		return;
	index = name_table_intern(&k->names, name);
	if (index < 0 || !row_for(k, name) || u64_map_put(&k->handle_names, f->handle, index + 1))
		k->out_of_memory = true;
}

static void kernels_on_record(void *state, const struct grt_record *rec,
			      const struct grt_strings *strings)
{
	struct kernels_report *k = state;

	if (rec->hdr.type == GRT_REC_CUDA_LAUNCH)
		on_launch(k, rec, strings);
	else if (rec->hdr.type == GRT_REC_CUDA_FUNC_NAME)
		on_func_name(k, rec, strings);
	else if (rec->hdr.type == GRT_REC_CUDA_CONFIG) {
		k->have_config = true;
		k->return_every = ((const struct grt_cuda_config_rec *)rec->payload)->launch_return_every;
	}
}

static void merge_row(struct kernels_report *k, struct kernel_row *into, struct kernel_row *from)
{
	into->launches += from->launches;
	into->errors += from->errors;
	into->unfinished += from->unfinished;
	into->unsampled += from->unsampled;
	if (grt_stats_merge(&into->api_ns, &from->api_ns))
		k->out_of_memory = true;
	for (uint32_t i = 0; i < from->nshapes; i++)
		note_shape(into, from->shapes[i].grid, from->shapes[i].block, from->shapes[i].launches);
	into->other_shape_launches += from->other_shape_launches;
	from->launches = 0;
}

/* Handles named after their launches (func_name came later) join their named row. */
static void resolve_late_names(struct kernels_report *k)
{
	for (size_t i = 0; i < rows_count(k); i++) {
		struct kernel_row *row = &k->rows[i];
		uint64_t index;

		if (row->unresolved && row->launches &&
		    u64_map_get(&k->handle_names, row->handle, &index))
			merge_row(k, &k->rows[index - 1], row);
	}
}

/* Busiest first: total API time, then launches, then name. */
static int compare_rows(const void *a, const void *b, void *ctx)
{
	const struct kernels_report *k = ctx;
	const struct kernel_row *x = &k->rows[*(const size_t *)a], *y = &k->rows[*(const size_t *)b];

	if (x->api_ns.total != y->api_ns.total)
		return x->api_ns.total > y->api_ns.total ? -1 : 1;
	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	return strcmp(k->names.names[*(const size_t *)a], k->names.names[*(const size_t *)b]);
}

/* Indices of rows with launches, busiest first; *n set. NULL when none or out of memory. */
static size_t *sorted_rows(struct kernels_report *k, size_t *n)
{
	size_t *order = malloc((k->names.count ? k->names.count : 1) * sizeof(*order));

	*n = 0;
	if (!order) {
		k->out_of_memory = true;
		return NULL;
	}
	resolve_late_names(k);
	for (size_t i = 0; i < rows_count(k); i++)
		if (k->rows[i].launches)
			order[(*n)++] = i;
	qsort_r(order, *n, sizeof(*order), compare_rows, k);
	return order;
}

static const struct launch_shape *most_common_shape(const struct kernel_row *row)
{
	const struct launch_shape *best = NULL;

	for (uint32_t i = 0; i < row->nshapes; i++)
		if (!best || row->shapes[i].launches > best->launches)
			best = &row->shapes[i];
	return best;
}

static void kernels_print_text(void *state, FILE *out)
{
	struct kernels_report *k = state;
	size_t n, shown;
	size_t *order = sorted_rows(k, &n);
	uint64_t launches = 0, timed = 0;

	if (!n) {
		fprintf(out, "no kernel launches in this trace\n");
		free(order);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		launches += k->rows[order[i]].launches;
		timed += k->rows[order[i]].api_ns.count;
	}
	fprintf(out, "%zu kernels, %" PRIu64 " launches ", n, launches);
	if (!k->have_config || k->return_every == 1)
		fprintf(out, "(API time = cuLaunchKernel entry to return)\n");
	else if (!k->return_every)
		fprintf(out, "(API time not recorded: --launch-returns 0)\n");
	else
		fprintf(out,
			"(API time = cuLaunchKernel entry to return, sampled 1 in %u per thread: "
			"%" PRIu64 " launches)\n",
			k->return_every, timed);
	fprintf(out, "%9s %6s %12s %10s %10s %10s  %-28s %6s  %s\n", "launches", "errors", "total_us",
		"mean_us", "p50_us", "p99_us", "common_grid/block", "shapes", "kernel");
	shown = k->top_n && k->top_n < n ? k->top_n : n;
	for (size_t i = 0; i < shown; i++) {
		struct kernel_row *row = &k->rows[order[i]];
		const struct launch_shape *s = most_common_shape(row);
		char shape[64];

		snprintf(shape, sizeof(shape), "%ux%ux%u / %ux%ux%u", s->grid[0], s->grid[1], s->grid[2],
			 s->block[0], s->block[1], s->block[2]);
		fprintf(out, "%9" PRIu64 " %6" PRIu64 " %12.3f %10.3f %10.3f %10.3f  %-28s %5u%s  %s\n",
			row->launches, row->errors, report_ns_to_us(row->api_ns.total),
			grt_stats_mean(&row->api_ns) / 1000.0,
			report_ns_to_us(grt_stats_percentile(&row->api_ns, 50)),
			report_ns_to_us(grt_stats_percentile(&row->api_ns, 99)), shape, row->nshapes,
			row->other_shape_launches ? "+" : " ", k->names.names[order[i]]);
		if (row->unfinished)
			fprintf(out, "%9s ^ %" PRIu64 " of these never returned (not in the times)\n", "",
				row->unfinished);
	}
	if (shown < n)
		fprintf(out, "... %zu more kernels (--top 0 shows all)\n", n - shown);
	if (k->out_of_memory)
		fprintf(out, "WARNING: %s\n", KERNELS_INCOMPLETE);
	free(order);
}

static void json_shapes(struct json_writer *w, const struct kernel_row *row)
{
	jw_begin_array(w);
	for (uint32_t i = 0; i < row->nshapes; i++) {
		jw_begin_object(w);
		jw_key(w, "grid");
		jw_begin_array(w);
		for (int d = 0; d < 3; d++)
			jw_u64(w, row->shapes[i].grid[d]);
		jw_end_array(w);
		jw_key(w, "block");
		jw_begin_array(w);
		for (int d = 0; d < 3; d++)
			jw_u64(w, row->shapes[i].block[d]);
		jw_end_array(w);
		jw_key(w, "launches");
		jw_u64(w, row->shapes[i].launches);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void kernels_print_json(void *state, struct json_writer *w)
{
	struct kernels_report *k = state;
	size_t n;
	size_t *order = sorted_rows(k, &n);

	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		struct kernel_row *row = &k->rows[order[i]];

		jw_begin_object(w);
		jw_key(w, "name");
		jw_string(w, k->names.names[order[i]]);
		jw_key(w, "resolved");
		jw_bool(w, !row->unresolved);
		jw_key(w, "launches");
		jw_u64(w, row->launches);
		jw_key(w, "errors");
		jw_u64(w, row->errors);
		jw_key(w, "unfinished");
		jw_u64(w, row->unfinished);
		jw_key(w, "unsampled");
		jw_u64(w, row->unsampled);
		jw_key(w, "api_ns");
		report_json_stats(w, &row->api_ns);
		jw_key(w, "shapes");
		json_shapes(w, row);
		jw_key(w, "other_shape_launches");
		jw_u64(w, row->other_shape_launches);
		jw_end_object(w);
	}
	jw_end_array(w);
	free(order);
}

static const char *kernels_incomplete(void *state)
{
	const struct kernels_report *k = state;

	return k->out_of_memory ? KERNELS_INCOMPLETE : NULL;
}

GRT_REPORT_SECTION(kernels_section) = {
	.name = "kernels",
	.summary = "per kernel: launches, launch API time (mean, P50, P99), grid/block shapes, errors",
	.default_on = true,
	.order = 20,
	.create = kernels_create,
	.on_record = kernels_on_record,
	.print_text = kernels_print_text,
	.print_json = kernels_print_json,
	.incomplete = kernels_incomplete,
	.destroy = kernels_destroy,
};
