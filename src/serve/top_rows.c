/* Rates, percentiles and busiest kernels of each process between two snapshots, for grtrace top. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "serve/top_rows.h"
#include "trace/records_cuda.h"

int top_sort_for_key(int key)
{
	switch (key) {
	case 'l': return TOP_SORT_LAUNCHES;
	case 'p': return TOP_SORT_P99;
	case 'm': return TOP_SORT_MEMORY;
	case 'c': return TOP_SORT_COPY;
	case 's': return TOP_SORT_SYNC;
	case 'u': return TOP_SORT_UVM;
	case 'n': return TOP_SORT_PID;
	}
	return -1;
}

const char *top_sort_name(enum top_sort sort)
{
	static const char *const names[] = {
	    [TOP_SORT_LAUNCHES] = "launches/s", [TOP_SORT_P99] = "API p99",
	    [TOP_SORT_MEMORY] = "device memory", [TOP_SORT_COPY] = "copy GB/s",
	    [TOP_SORT_SYNC] = "sync wait", [TOP_SORT_UVM] = "UVM faults/s", [TOP_SORT_PID] = "pid",
	};

	return names[sort];
}

double top_hist_quantile_us(const uint64_t *hist, double q)
{
	uint64_t total = 0, seen = 0;
	double rank;

	for (int b = 0; b < AGG_HIST_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return -1;
	rank = q * (double)total;
	for (int b = 0; b < AGG_HIST_BUCKETS; b++) {
		double lo = (double)(1ull << b), hi = lo * 2;

		if (!hist[b] || (double)(seen + hist[b]) < rank) {
			seen += hist[b];
			continue;
		}
		/* linear within the bucket [2^b, 2^(b+1)) ns */
		return (lo + (hi - lo) * (rank - (double)seen) / (double)hist[b]) / 1000.0;
	}
	return (double)(1ull << (AGG_HIST_BUCKETS - 1)) / 1000.0;
}

static const struct serve_proc_snapshot *find_proc(const struct serve_snapshot *s, uint32_t pid)
{
	size_t lo = 0, hi = s ? s->nprocs : 0;

	/* snapshots are sorted by pid */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->procs[mid].pid == pid)
			return &s->procs[mid];
		if (s->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static uint64_t delta(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

static uint64_t kernel_launches(const struct serve_proc_snapshot *p, const char *label)
{
	for (size_t k = 0; p && k < p->nkernels; k++)
		if (!strcmp(p->kernels[k].label, label))
			return p->kernels[k].launches;
	return 0;
}

static const struct agg_api_stats *api_stats(const struct serve_proc_snapshot *p, uint32_t api)
{
	for (size_t a = 0; p && a < p->napis; a++)
		if (p->apis[a].api == api)
			return &p->apis[a].stats;
	return NULL;
}

static void fill_row(const struct serve_proc_snapshot *was, const struct serve_proc_snapshot *p,
		     double seconds, struct top_row *row)
{
	static const struct agg_proc_stats zero_stats;
	const struct agg_proc_stats *before = was ? &was->stats : &zero_stats;
	uint64_t hist[AGG_HIST_BUCKETS] = {0}, copied = 0, best = 0;

	row->pid = p->pid;
	memcpy(row->comm, p->comm, sizeof(row->comm));
	for (uint32_t k = 0; k < AGG_ALLOC_KINDS; k++)
		if (k != GRT_ALLOC_HOST && k != GRT_ALLOC_HOST_ALLOC)
			row->device_bytes += p->stats.in_use_bytes[k];
	row->api_p50_us = row->api_p99_us = -1;
	row->uvm_faults_per_s = -1;
	if (!was || seconds <= 0)
		return;
	if (p->uvm_bound)
		row->uvm_faults_per_s = (double)(delta(p->uvm.faults[UVM_FAULTS_CPU] + p->uvm.faults[UVM_FAULTS_GPU],
						      was->uvm.faults[UVM_FAULTS_CPU] + was->uvm.faults[UVM_FAULTS_GPU])) /
					seconds;
	row->launches_per_s = (double)delta(p->stats.launches, before->launches) / seconds;
	for (uint32_t k = 0; k < AGG_COPY_KINDS; k++)
		copied += delta(p->stats.copy_bytes[k], before->copy_bytes[k]);
	row->copy_gbps = (double)copied / seconds / 1e9;
	row->sync_share = (double)delta(p->stats.sync_wait_ns, before->sync_wait_ns) / 1e9 / seconds;
	for (size_t a = 0; a < p->napis; a++) {
		const struct agg_api_stats *old = api_stats(was, p->apis[a].api);

		for (int b = 0; b < AGG_HIST_BUCKETS; b++)
			hist[b] += delta(p->apis[a].stats.hist[b], old ? old->hist[b] : 0);
	}
	row->api_p50_us = top_hist_quantile_us(hist, 0.50);
	row->api_p99_us = top_hist_quantile_us(hist, 0.99);
	for (size_t k = 0; k < p->nkernels; k++) {
		uint64_t n = delta(p->kernels[k].launches, kernel_launches(was, p->kernels[k].label));

		if (n > best) {
			best = n;
			snprintf(row->busiest, sizeof(row->busiest), "%s", p->kernels[k].label);
		}
	}
}

long top_rows_compute(const struct serve_snapshot *prev, const struct serve_snapshot *cur,
		      struct top_row **rows)
{
	double seconds = prev ? (double)delta(cur->taken_ns, prev->taken_ns) / 1e9 : 0;
	long n = 0;

	*rows = calloc(cur->nprocs + 1, sizeof(**rows));
	if (!*rows)
		return -ENOMEM;
	for (size_t i = 0; i < cur->nprocs; i++) {
		const struct serve_proc_snapshot *p = &cur->procs[i];

		if (!p->exited)
			fill_row(find_proc(prev, p->pid), p, seconds, &(*rows)[n++]);
	}
	return n;
}

static double sort_value(const struct top_row *r, enum top_sort sort)
{
	switch (sort) {
	case TOP_SORT_LAUNCHES: return r->launches_per_s;
	case TOP_SORT_P99: return r->api_p99_us;
	case TOP_SORT_MEMORY: return (double)r->device_bytes;
	case TOP_SORT_COPY: return r->copy_gbps;
	case TOP_SORT_SYNC: return r->sync_share;
	case TOP_SORT_UVM: return r->uvm_faults_per_s;
	case TOP_SORT_PID: return -(double)r->pid;
	}
	return 0;
}

/* largest first, then by pid */
static int by_sort(const void *x, const void *y, void *ctx)
{
	const struct top_row *a = x, *b = y;
	enum top_sort sort = *(const enum top_sort *)ctx;
	double va = sort_value(a, sort), vb = sort_value(b, sort);

	if (va != vb)
		return va < vb ? 1 : -1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

void top_rows_sort(struct top_row *rows, size_t n, enum top_sort sort)
{
	qsort_r(rows, n, sizeof(*rows), by_sort, &sort);
}

#define ROW_FORMAT "%7s %-15s %11s %9s %9s %10s %8s %6s %9s  %s"

void top_format_header(char *buf, size_t len)
{
	snprintf(buf, len, ROW_FORMAT, "PID", "COMMAND", "LAUNCH/s", "API_P50", "API_P99",
		 "DEV_MEM", "COPY_GB/s", "SYNC%", "UVM_FLT/s", "BUSIEST KERNEL");
}

static void format_us(double us, char *buf, size_t len)
{
	if (us < 0)
		snprintf(buf, len, "-");
	else if (us < 1000)
		snprintf(buf, len, "%.1fus", us);
	else
		snprintf(buf, len, "%.1fms", us / 1000);
}

static void format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f%s" : "%.0f%s", v, units[u]);
}

void top_format_row(const struct top_row *row, char *buf, size_t len)
{
	char pid[16], launches[24], p50[16], p99[16], mem[24], copy[24], sync[16], uvm[24];

	snprintf(pid, sizeof(pid), "%u", row->pid);
	snprintf(launches, sizeof(launches), "%.0f", row->launches_per_s);
	format_us(row->api_p50_us, p50, sizeof(p50));
	format_us(row->api_p99_us, p99, sizeof(p99));
	format_bytes(row->device_bytes, mem, sizeof(mem));
	snprintf(copy, sizeof(copy), "%.3f", row->copy_gbps);
	snprintf(sync, sizeof(sync), "%.0f", row->sync_share * 100);
	if (row->uvm_faults_per_s < 0)
		snprintf(uvm, sizeof(uvm), "-");
	else
		snprintf(uvm, sizeof(uvm), "%.0f", row->uvm_faults_per_s);
	snprintf(buf, len, ROW_FORMAT, pid, row->comm, launches, p50, p99, mem, copy, sync, uvm,
		 row->busiest[0] ? row->busiest : "-");
}
