/* Job summaries: counts, shares and P50/P90/P99 per kernel, stream, process and tag; worst jobs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/summary.h"
#include "analysis/jobs/rows.h"
#include "analysis/jobs/tags.h"
#include "analysis/nccl_calls.h"

static void table_init(struct job_group_table *t)
{
	memset(t, 0, sizeof(*t));
	u64_map_init(&t->index);
}

static void table_destroy(struct job_group_table *t)
{
	for (uint32_t i = 0; i < t->count; i++) {
		grt_stats_destroy(&t->rows[i].exec);
		grt_stats_destroy(&t->rows[i].total);
		grt_stats_destroy(&t->rows[i].queue);
	}
	free(t->rows);
	u64_map_destroy(&t->index);
}

static struct job_group *table_get(struct job_group_table *t, uint64_t key)
{
	struct job_group *g;
	uint64_t v;

	if (u64_map_get(&t->index, key, &v))
		return &t->rows[v - 1];
	if (t->count == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 32;
		struct job_group *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		t->rows = rows;
		t->cap = cap;
	}
	if (u64_map_put(&t->index, key, t->count + 1))
		return NULL;
	g = &t->rows[t->count++];
	memset(g, 0, sizeof(*g));
	g->key = key;
	grt_stats_init(&g->exec);
	grt_stats_init(&g->total);
	grt_stats_init(&g->queue);
	return g;
}

int job_summary_init(struct job_summary *s, unsigned top_n)
{
	memset(s, 0, sizeof(*s));
	s->top_n = top_n ? top_n : 10;
	table_init(&s->kernels);
	table_init(&s->streams);
	table_init(&s->procs);
	for (int tg = 0; tg < JOB_TAG_COUNT; tg++)
		interval_union_init(&s->tags[tg].wall);
	s->worst = calloc(s->top_n, sizeof(*s->worst));
	return s->worst ? 0 : -ENOMEM;
}

void job_summary_destroy(struct job_summary *s)
{
	table_destroy(&s->kernels);
	table_destroy(&s->streams);
	table_destroy(&s->procs);
	for (int tg = 0; tg < JOB_TAG_COUNT; tg++)
		interval_union_destroy(&s->tags[tg].wall);
	free(s->worst);
	memset(s, 0, sizeof(*s));
}

/* Returns how many of the job's samples could not be kept (0 unless memory ran out). */
static int group_add(struct job_group *g, const struct job *j)
{
	int lost = 0;

	if (!g)
		return 0;
	g->jobs++;
	g->incomplete += job_incomplete(j);
	if (j->known & JOB_K_EXEC) {
		g->exec_ns += j->t_exec;
		lost += grt_stats_add(&g->exec, j->t_exec) != 0;
	}
	if (j->known & JOB_K_TOTAL)
		lost += grt_stats_add(&g->total, j->t_total) != 0;
	if (j->known & JOB_K_QUEUE)
		lost += grt_stats_add(&g->queue, j->t_queue) != 0;
	for (int t = 0; t < JOB_TAG_COUNT; t++)
		g->tagged[t] += !!(j->tags & (1u << t));
	return lost;
}

uint64_t job_slow_ns(const struct job *j)
{
	uint64_t ns = 0;

	if (j->known & JOB_K_SUBMIT_HOST)
		ns += j->t_submit_host;
	if (j->known & JOB_K_QUEUE)
		ns += j->t_queue;
	if (j->known & JOB_K_EXEC)
		ns += j->t_exec;
	return ns;
}

static void keep_worst(struct job_summary *s, const struct job *j)
{
	uint32_t at = s->n_worst;
	uint64_t slow = job_slow_ns(j);

	if (!slow)
		return;
	if (at == s->top_n) {
		if (job_slow_ns(&s->worst[at - 1]) >= slow)
			return;
		at--;
	} else {
		s->n_worst++;
	}
	while (at && job_slow_ns(&s->worst[at - 1]) < slow) {
		s->worst[at] = s->worst[at - 1];
		at--;
	}
	s->worst[at] = *j;
}

static void note_span(struct job_summary *s, const struct job *j)
{
	uint64_t finish = j->complete > j->end ? j->complete : j->end;

	if (j->api_enter && (!s->first_enter || j->api_enter < s->first_enter))
		s->first_enter = j->api_enter;
	if (finish > s->last_finish)
		s->last_finish = finish;
}

void job_summary_add(struct job_summary *s, const struct job *j)
{
	struct job_group *g;

	s->jobs++;
	s->incomplete += job_incomplete(j);
	for (int b = 0; b < 8; b++)
		s->missing[b] += !!(j->missing & (1u << b));
	if (j->missing)
		s->first_missing[job_first_missing(j)]++;
	s->failed += !!(j->flags & JOB_F_FAILED);
	s->forced += !!(j->flags & JOB_F_FORCED);
	s->tail_unchecked += !!(j->flags & JOB_F_TAIL_UNCHECKED);
	s->graph_nodes += j->group_id != 0 && j->kind == JOB_KERNEL;
	if (j->known & JOB_K_EXEC)
		s->exec_ns += j->t_exec;
	if (j->known & JOB_K_TOTAL)
		s->total_ns += j->t_total;
	note_span(s, j);
	for (int t = 0; t < JOB_TAG_COUNT; t++) {
		uint64_t from, to;

		if (!(j->tags & (1u << t)))
			continue;
		s->tags[t].jobs++;
		s->tags[t].cost_ns += job_tag_cost(j, (enum job_tag)t);
		s->tags[t].total_ns += j->t_total;
		if (job_tag_interval(j, (enum job_tag)t, &from, &to))
			interval_union_add(&s->tags[t].wall, from, to);
	}
	if (j->flags & JOB_F_FAILED)
		return; /* nothing ran: counted, but not timed */
	g = table_get(&s->kernels, j->kernel_key);
	s->alloc_failures += !g;
	if (g)
		g->name = j->name;
	s->alloc_failures += group_add(g, j);
	g = table_get(&s->streams, ((uint64_t)j->pid << 32) | j->stream_index);
	s->alloc_failures += !g;
	if (g) {
		g->pid = j->pid;
		g->stream = j->stream;
		g->stream_index = j->stream_index;
	}
	s->alloc_failures += group_add(g, j);
	g = table_get(&s->procs, j->pid);
	s->alloc_failures += !g;
	if (g)
		g->pid = j->pid;
	s->alloc_failures += group_add(g, j);
	keep_worst(s, j);
}

void job_summary_settle(struct job_summary *s, uint64_t point)
{
	for (int t = 0; t < JOB_TAG_COUNT; t++)
		interval_union_settle(&s->tags[t].wall, point);
}

void job_summary_finish(struct job_summary *s)
{
	if (s->finished)
		return;
	s->finished = true;
	for (int t = 0; t < JOB_TAG_COUNT; t++) {
		interval_union_settle(&s->tags[t].wall, UINT64_MAX);
		s->tags[t].wall_ns = interval_union_length(&s->tags[t].wall);
	}
}

bool job_summary_complete(const struct job_summary *s)
{
	if (s->alloc_failures || s->kernels.sort_failed || s->streams.sort_failed ||
	    s->procs.sort_failed)
		return false;
	for (int t = 0; t < JOB_TAG_COUNT; t++)
		if (s->tags[t].wall.error)
			return false;
	return true;
}

uint64_t job_summary_span(const struct job_summary *s)
{
	return s->last_finish > s->first_enter ? s->last_finish - s->first_enter : 0;
}

static int by_exec(const void *a, const void *b)
{
	const struct job_group *x = *(struct job_group *const *)a, *y = *(struct job_group *const *)b;

	if (x->exec_ns != y->exec_ns)
		return x->exec_ns < y->exec_ns ? 1 : -1;
	if (x->jobs != y->jobs)
		return x->jobs < y->jobs ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

struct job_group **job_group_sorted(struct job_group_table *t)
{
	struct job_group **rows = malloc((t->count ? t->count : 1) * sizeof(*rows));

	if (!rows) {
		t->sort_failed = true;
		return NULL;
	}
	for (uint32_t i = 0; i < t->count; i++)
		rows[i] = &t->rows[i];
	qsort(rows, t->count, sizeof(*rows), by_exec);
	return rows;
}

const char *job_format_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else if (ns >= 10000ull)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%.2f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	return buf;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- text ---- */

/* A duration cell of a text table: microseconds, the unit its column title names. */
static const char *cell_us(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f", (double)ns / 1e3);
	return buf;
}

static const char *group_label(const struct job_group *g, int kind, char *buf, size_t len)
{
	if (kind == 0)
		return g->name ? g->name : "?";
	if (kind == 1)
		snprintf(buf, len, "pid %u stream 0x%" PRIx64, g->pid, g->stream);
	else
		snprintf(buf, len, "pid %u", g->pid);
	return buf;
}

static void print_groups_text(struct job_group_table *t, int kind, const char *title,
			      uint64_t exec_all, FILE *out, unsigned rows)
{
	struct job_group **sorted = job_group_sorted(t);
	char a[24], b[24], c[24], d[24], e[24], label[64];

	if (!sorted || !t->count) {
		free(sorted);
		return;
	}
	fprintf(out, "\n%s (by GPU time):\n", title);
	fprintf(out, "  %-40s %8s %7s %12s %10s %10s %10s %12s\n",
		kind == 0 ? "kernel" : kind == 1 ? "stream" : "process", "jobs", "gpu%", "exec_us",
		"p50_us", "p90_us", "p99_us", "total_p90_us");
	for (uint32_t i = 0; i < t->count && (!rows || i < rows); i++) {
		struct job_group *g = sorted[i];

		fprintf(out, "  %-40.40s %8" PRIu64 " %6.1f%% %12s %10s %10s %10s %12s\n",
			group_label(g, kind, label, sizeof(label)), g->jobs, share(g->exec_ns, exec_all),
			cell_us(g->exec_ns, a, sizeof(a)),
			cell_us(grt_stats_percentile(&g->exec, 50), b, sizeof(b)),
			cell_us(grt_stats_percentile(&g->exec, 90), c, sizeof(c)),
			cell_us(grt_stats_percentile(&g->exec, 99), d, sizeof(d)),
			g->total.count ? cell_us(grt_stats_percentile(&g->total, 90), e, sizeof(e))
				       : "-");
	}
	if (rows && t->count > rows)
		fprintf(out, "  ... %u more\n", t->count - rows);
	free(sorted);
}

static const char *opt_ns(const struct job *j, uint32_t bit, uint64_t v, char *buf, size_t len)
{
	return (j->known & bit) ? cell_us(v, buf, len) : "-";
}

static void print_worst_text(struct job_summary *s, FILE *out)
{
	char a[24], b[24], c[24], d[24], e[24], f[24], g[24], tags[128], coll[96];

	if (!s->n_worst)
		return;
	fprintf(out, "\nworst jobs (by submit + queue + exec; 'noticed' is END to the host's COMPLETE):\n");
	fprintf(out, "  %8s %-28s %8s %10s %10s %10s %10s %11s %10s %10s  %s\n", "job", "kernel", "tid",
		"slow_us", "submit_us", "queue_us", "exec_us", "gpu_wait_us", "noticed_us", "total_us",
		"tags");
	for (uint32_t i = 0; i < s->n_worst; i++) {
		const struct job *j = &s->worst[i];

		fprintf(out, "  %8" PRIu64 " %-28.28s %8u %10s %10s %10s %10s %11s %10s %10s  %s%s\n",
			j->id,
			j->collective ? nccl_call_name(j->collective, coll, sizeof(coll))
				      : j->name ? j->name : "?",
			j->tid, cell_us(job_slow_ns(j), g, sizeof(g)),
			opt_ns(j, JOB_K_SUBMIT_HOST, j->t_submit_host, a, sizeof(a)),
			opt_ns(j, JOB_K_QUEUE, j->t_queue, b, sizeof(b)),
			opt_ns(j, JOB_K_EXEC, j->t_exec, c, sizeof(c)),
			opt_ns(j, JOB_K_GPU_WAIT, j->t_gpu_wait, e, sizeof(e)),
			opt_ns(j, JOB_K_COMPLETE, j->t_complete, d, sizeof(d)),
			opt_ns(j, JOB_K_TOTAL, j->t_total, f, sizeof(f)), job_tags_text(j, tags, sizeof(tags)),
			job_incomplete(j) ? " (incomplete)" : "");
	}
}

/*
 * Tag time is shown two ways: the wall time during which at least one job
 * had the tag's cause (the union of their tag intervals, as a share of the
 * jobs' span), and the sum over jobs, which counts overlapping jobs again
 * and can exceed the span by far.
 */
static void print_tags_text(struct job_summary *s, FILE *out)
{
	uint64_t span = job_summary_span(s);
	char a[24], b[24], c[24];

	job_summary_finish(s);
	fprintf(out, "\ntags (wall: time with at least one such job, of the %s span; summed: over jobs, "
		     "overlaps counted again):\n",
		job_format_ns(span, c, sizeof(c)));
	fprintf(out, "  %-18s %8s %7s %12s %7s %12s\n", "tag", "jobs", "jobs%", "wall_us", "span%",
		"summed_us");
	for (int t = 0; t < JOB_TAG_COUNT; t++)
		fprintf(out, "  %-18s %8" PRIu64 " %6.1f%% %12s %6.1f%% %12s\n", job_tag_name(t),
			s->tags[t].jobs, share(s->tags[t].jobs, s->jobs),
			cell_us(s->tags[t].wall_ns, a, sizeof(a)), share(s->tags[t].wall_ns, span),
			cell_us(s->tags[t].cost_ns, b, sizeof(b)));
}

void job_summary_print_text(struct job_summary *s, FILE *out, unsigned rows)
{
	print_tags_text(s, out);
	print_groups_text(&s->kernels, 0, "kernels", s->exec_ns, out, rows);
	print_groups_text(&s->streams, 1, "streams", s->exec_ns, out, rows);
	print_groups_text(&s->procs, 2, "processes", s->exec_ns, out, rows);
	print_worst_text(s, out);
}

/* ---- JSON ---- */

static void json_dist(struct json_writer *w, const char *key, struct grt_stats *st)
{
	jw_key(w, key);
	if (!st->count) {
		jw_null(w);
		return;
	}
	jw_begin_object(w);
	jw_field_u64(w, "count", st->count);
	jw_field_u64(w, "total_ns", st->total);
	jw_field_u64(w, "p50_ns", grt_stats_percentile(st, 50));
	jw_field_u64(w, "p90_ns", grt_stats_percentile(st, 90));
	jw_field_u64(w, "p99_ns", grt_stats_percentile(st, 99));
	jw_field_u64(w, "max_ns", st->max);
	jw_end_object(w);
}

static void json_groups(struct json_writer *w, struct job_group_table *t, int kind, uint64_t exec_all)
{
	struct job_group **sorted = job_group_sorted(t);

	jw_begin_array(w);
	for (uint32_t i = 0; sorted && i < t->count; i++) {
		struct job_group *g = sorted[i];

		jw_begin_object(w);
		if (kind == 0) {
			jw_field_string(w, "kernel", g->name);
		} else {
			jw_field_u64(w, "pid", g->pid);
		}
		if (kind == 1) {
			jw_field_u64(w, "stream", g->stream);
		}
		jw_field_u64(w, "jobs", g->jobs);
		jw_field_u64(w, "incomplete", g->incomplete);
		jw_field_u64(w, "exec_ns", g->exec_ns);
		jw_key(w, "gpu_share");
		jw_f64(w, share(g->exec_ns, exec_all) / 100.0);
		json_dist(w, "exec", &g->exec);
		json_dist(w, "queue", &g->queue);
		json_dist(w, "total", &g->total);
		jw_key(w, "tags");
		jw_begin_object(w);
		for (int tg = 0; tg < JOB_TAG_COUNT; tg++) {
			jw_key(w, job_tag_name(tg));
			jw_u64(w, g->tagged[tg]);
		}
		jw_end_object(w);
		jw_end_object(w);
	}
	jw_end_array(w);
	free(sorted);
}


void job_summary_print_json(struct job_summary *s, struct json_writer *w)
{
	/* by enum job_missing bit; bit 0 (no host launch) is not produced any more */
	static const char *const missing_keys[] = { NULL, "no_submit", "no_device_timing",
						    "no_complete", "unknown_dependency" };

	job_summary_finish(s);
	jw_key(w, "totals");
	jw_begin_object(w);
	jw_field_u64(w, "jobs", s->jobs);
	jw_field_u64(w, "span_ns", job_summary_span(s));
	jw_field_u64(w, "incomplete", s->incomplete);
	/* overlapping: a job missing two steps counts under both */
	for (int b = 1; b < 5; b++) {
		jw_key(w, missing_keys[b]);
		jw_u64(w, s->missing[b]);
	}
	/* a partition of the incomplete jobs: each under the first step it misses */
	jw_key(w, "first_missing");
	jw_begin_object(w);
	for (int b = 1; b < 5; b++) {
		jw_key(w, missing_keys[b]);
		jw_u64(w, s->first_missing[b]);
	}
	jw_end_object(w);
	jw_field_u64(w, "failed", s->failed);
	jw_field_u64(w, "forced", s->forced);
	jw_field_u64(w, "graph_nodes", s->graph_nodes);
	jw_field_u64(w, "tail_unchecked", s->tail_unchecked);
	jw_field_u64(w, "exec_ns", s->exec_ns);
	jw_end_object(w);
	jw_key(w, "tags");
	jw_begin_object(w);
	for (int t = 0; t < JOB_TAG_COUNT; t++) {
		jw_key(w, job_tag_name(t));
		jw_begin_object(w);
		jw_field_u64(w, "jobs", s->tags[t].jobs);
		jw_key(w, "job_share");
		jw_f64(w, share(s->tags[t].jobs, s->jobs) / 100.0);
		/* summed over jobs: overlapping jobs count again */
		jw_field_u64(w, "tag_ns", s->tags[t].cost_ns);
		/* the union: wall time with at least one such job, and its share of the span */
		jw_field_u64(w, "wall_ns", s->tags[t].wall_ns);
		jw_key(w, "span_share");
		jw_f64(w, share(s->tags[t].wall_ns, job_summary_span(s)) / 100.0);
		jw_field_u64(w, "total_ns", s->tags[t].total_ns);
		jw_end_object(w);
	}
	jw_end_object(w);
	jw_key(w, "kernels");
	json_groups(w, &s->kernels, 0, s->exec_ns);
	jw_key(w, "streams");
	json_groups(w, &s->streams, 1, s->exec_ns);
	jw_key(w, "processes");
	json_groups(w, &s->procs, 2, s->exec_ns);
	jw_key(w, "worst");
	jw_begin_array(w);
	for (uint32_t i = 0; i < s->n_worst; i++)
		job_json_row(w, &s->worst[i]);
	jw_end_array(w);
}
