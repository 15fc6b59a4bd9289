/* Report section `uvm`: per process faults, migrated bytes, evictions, thrashing regions. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "common/u64_map.h"
#include "trace/grt_format.h"
#include "trace/records_uvm.h"

#define ACCESS_KINDS 5 /* none, read, write, atomic, prefetch */

struct uvm_region {
	uint64_t address;
	uint64_t bytes; /* largest size reported for the region */
	uint64_t events;
};

struct uvm_proc_stats {
	uint32_t pid;
	uint64_t cpu_faults, gpu_faults, gpu_replays, fatal_faults;
	uint64_t cpu_by_access[ACCESS_KINDS], gpu_by_access[ACCESS_KINDS];
	uint64_t htod_bytes, dtoh_bytes, dtod_bytes, htoh_bytes;
	uint64_t htod_count, dtoh_count, dtod_count, htoh_count;
	uint64_t prefetch_bytes; /* of the above, moved by the driver's prefetcher */
	uint64_t migration_ns;	 /* GPU copy time: sum of each migration's GPU stamps (CPU window
				    without) */
	uint64_t wall_ns;	 /* union of the host-visible windows (queued -> completion seen) */
	uint64_t win_start, win_end; /* the window being merged */
	uint64_t evictions, evicted_bytes;
	uint64_t thrashing, throttling, map_remote, read_dup, read_dup_invalidate;
	uint64_t lost;		     /* events the driver dropped (queue full) */
	struct u64_map region_index; /* thrashing address -> index in regions */
	struct uvm_region *regions;
	size_t nregions, cap_regions;
};

struct uvm_report {
	unsigned top_n;
	struct u64_map pid_index; /* owner pid -> index in procs */
	struct uvm_proc_stats *procs;
	size_t nprocs, cap;
	uint64_t events;
};

static void *uvm_create(const struct report_input *in)
{
	struct uvm_report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->top_n = in->top_n ? in->top_n : UINT32_MAX; /* --top 0: every region */
	u64_map_init(&r->pid_index);
	return r;
}

static struct uvm_proc_stats *stats_for(struct uvm_report *r, uint32_t pid)
{
	uint64_t idx;

	if (u64_map_get(&r->pid_index, pid, &idx))
		return &r->procs[idx];
	if (r->nprocs == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		struct uvm_proc_stats *grown = realloc(r->procs, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		r->procs = grown;
		r->cap = cap;
	}
	if (u64_map_put(&r->pid_index, pid, r->nprocs))
		return NULL;
	memset(&r->procs[r->nprocs], 0, sizeof(r->procs[0]));
	r->procs[r->nprocs].pid = pid;
	u64_map_init(&r->procs[r->nprocs].region_index);
	return &r->procs[r->nprocs++];
}

static void count_thrashing(struct uvm_proc_stats *p, uint64_t address, uint64_t bytes)
{
	uint64_t idx;

	p->thrashing++;
	if (!u64_map_get(&p->region_index, address, &idx)) {
		if (p->nregions == p->cap_regions) {
			size_t cap = p->cap_regions ? p->cap_regions * 2 : 16;
			struct uvm_region *grown = realloc(p->regions, cap * sizeof(*grown));

			if (!grown)
				return;
			p->regions = grown;
			p->cap_regions = cap;
		}
		if (u64_map_put(&p->region_index, address, p->nregions))
			return;
		idx = p->nregions++;
		p->regions[idx] = (struct uvm_region){.address = address};
	}
	p->regions[idx].events++;
	if (bytes > p->regions[idx].bytes)
		p->regions[idx].bytes = bytes;
}

/*
 * Windows arrive about in start order (the driver reports them as they
 * complete), so merging with the current one is enough for their union.
 */
static void add_window(struct uvm_proc_stats *p, uint64_t start, uint64_t end)
{
	if (p->win_end && start <= p->win_end) {
		if (start < p->win_start)
			p->win_start = start;
		if (end > p->win_end)
			p->win_end = end;
		return;
	}
	p->wall_ns += p->win_end - p->win_start;
	p->win_start = start;
	p->win_end = end;
}

static void count_migration(struct uvm_proc_stats *p, const struct grt_uvm_event_rec *e,
			    const struct grt_record *rec)
{
	const struct grt_uvm_event_ext *x = NULL;
	uint64_t ts = rec->hdr.ts_ns;

	bool from_cpu = e->src_processor == GRT_UVM_PROC_CPU,
	     to_cpu = e->dst_processor == GRT_UVM_PROC_CPU;

	if (from_cpu && to_cpu)
		p->htoh_bytes += e->bytes, p->htoh_count++;
	else if (from_cpu)
		p->htod_bytes += e->bytes, p->htod_count++;
	else if (to_cpu)
		p->dtoh_bytes += e->bytes, p->dtoh_count++;
	else
		p->dtod_bytes += e->bytes, p->dtod_count++;
	if (e->cause == 3) /* UvmEventMigrationCausePrefetch */
		p->prefetch_bytes += e->bytes;
	if (rec->hdr.payload_len >= sizeof(struct grt_uvm_event_full))
		x = &((const struct grt_uvm_event_full *)e)->ext;
	/* the copy engine's own stamps (begin, end in aux) measure the copy, not the bookkeeping */
	if (x && x->gpu_ts_ns && x->aux > x->gpu_ts_ns)
		p->migration_ns += x->aux - x->gpu_ts_ns;
	else if ((e->flags & GRT_UVM_F_HAS_END) && e->end_ns >= ts)
		p->migration_ns += e->end_ns - ts;
	if ((e->flags & GRT_UVM_F_HAS_END) && e->end_ns >= ts)
		add_window(p, ts, e->end_ns);
}

static void uvm_on_record(void *state, const struct grt_record *rec,
			  const struct grt_strings *strings)
{
	struct uvm_report *r = state;
	const struct grt_uvm_event_rec *e = rec->payload;
	struct uvm_proc_stats *p;

	if (rec->hdr.type != GRT_REC_UVM_EVENT || !(p = stats_for(r, e->owner_pid)))
		return;
	r->events++;
	switch (e->kind) {
	case GRT_UVM_CPU_FAULT:
		p->cpu_faults++;
		p->cpu_by_access[e->cause < ACCESS_KINDS ? e->cause : 0]++;
		break;
	case GRT_UVM_GPU_FAULT:
		p->gpu_faults++;
		p->gpu_by_access[e->cause < ACCESS_KINDS ? e->cause : 0]++;
		break;
	case GRT_UVM_GPU_FAULT_REPLAY:
		p->gpu_replays++;
		break;
	case GRT_UVM_FATAL_FAULT:
		p->fatal_faults++;
		break;
	case GRT_UVM_MIGRATION:
		count_migration(p, e, rec);
		break;
	case GRT_UVM_EVICTION:
		p->evictions++;
		p->evicted_bytes += e->bytes;
		break;
	case GRT_UVM_THRASHING:
		count_thrashing(p, e->address, e->bytes);
		break;
	case GRT_UVM_THROTTLING_START:
		p->throttling++;
		break;
	case GRT_UVM_MAP_REMOTE:
		p->map_remote++;
		break;
	case GRT_UVM_READ_DUPLICATE:
		p->read_dup++;
		break;
	case GRT_UVM_READ_DUPLICATE_INVALIDATE:
		p->read_dup_invalidate++;
		break;
	case GRT_UVM_QUEUE_OVERFLOW:
		if (rec->hdr.payload_len >= sizeof(struct grt_uvm_event_full))
			p->lost += ((const struct grt_uvm_event_full *)e)->ext.aux;
		break;
	}
}

static int by_events_desc(const void *a, const void *b)
{
	const struct uvm_region *x = a, *y = b;

	if (x->events != y->events)
		return x->events < y->events ? 1 : -1;
	return x->address < y->address ? -1 : x->address > y->address;
}

static int by_pid(const void *a, const void *b)
{
	const struct uvm_proc_stats *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Orders processes by pid and thrashing regions by event count (then address). */
static void sort_for_output(struct uvm_report *r)
{
	/* close each process's last migration window */
	for (size_t i = 0; i < r->nprocs; i++) {
		r->procs[i].wall_ns += r->procs[i].win_end - r->procs[i].win_start;
		r->procs[i].win_start = r->procs[i].win_end = 0;
	}
	if (r->nprocs)
		qsort(r->procs, r->nprocs, sizeof(*r->procs), by_pid);
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].nregions)
			qsort(r->procs[i].regions, r->procs[i].nregions, sizeof(struct uvm_region),
			      by_events_desc);
}

static void print_bytes(FILE *out, uint64_t bytes)
{
	char buf[32];

	fputs(report_format_bytes(bytes, buf, sizeof(buf)), out);
}

static void print_proc_text(const struct uvm_report *r, const struct uvm_proc_stats *p, FILE *out)
{
	fprintf(out, "  pid %u\n", p->pid);
	fprintf(out,
		"    faults: cpu %" PRIu64 " (read %" PRIu64 ", write %" PRIu64 ")  gpu %" PRIu64
		" (read %" PRIu64 ", write %" PRIu64 ", atomic %" PRIu64 ", prefetch %" PRIu64
		")  replays %" PRIu64 "  fatal %" PRIu64 "\n",
		p->cpu_faults, p->cpu_by_access[1], p->cpu_by_access[2], p->gpu_faults,
		p->gpu_by_access[1], p->gpu_by_access[2], p->gpu_by_access[3], p->gpu_by_access[4],
		p->gpu_replays, p->fatal_faults);
	fprintf(out, "    migrated: host->device ");
	print_bytes(out, p->htod_bytes);
	fprintf(out, " (%" PRIu64 ")  device->host ", p->htod_count);
	print_bytes(out, p->dtoh_bytes);
	fprintf(out, " (%" PRIu64 ")  device->device ", p->dtoh_count);
	print_bytes(out, p->dtod_bytes);
	fprintf(out, " (%" PRIu64 ")\n    driver prefetch moved ", p->dtod_count);
	print_bytes(out, p->prefetch_bytes);
	fprintf(out,
		" of that (both ways)\n    time in migrations: %.3f ms copying on the GPU, %.3f ms "
		"with a "
		"migration in flight (queued -> completion seen)\n",
		(double)p->migration_ns / 1e6, (double)p->wall_ns / 1e6);
	fprintf(out, "    evictions %" PRIu64 " (", p->evictions);
	print_bytes(out, p->evicted_bytes);
	fprintf(out,
		")  thrashing %" PRIu64 "  throttling %" PRIu64 "  map-remote %" PRIu64
		"  read-duplicate %" PRIu64 "/%" PRIu64 " invalidated  lost %" PRIu64 "\n",
		p->thrashing, p->throttling, p->map_remote, p->read_dup, p->read_dup_invalidate,
		p->lost);
	for (size_t i = 0; i < p->nregions && i < r->top_n; i++) {
		fprintf(out, "    %s 0x%" PRIx64 " ",
			i ? "                  " : "thrashing regions:", p->regions[i].address);
		print_bytes(out, p->regions[i].bytes);
		fprintf(out, "  %" PRIu64 " events\n", p->regions[i].events);
	}
}

static void uvm_print_text(void *state, FILE *out)
{
	struct uvm_report *r = state;

	if (!r->events) {
		fprintf(out, "no unified-memory events (recorded with -s uvm?)\n");
		return;
	}
	sort_for_output(r);
	fprintf(out, "Unified memory (uvm): %" PRIu64 " events\n", r->events);
	for (size_t i = 0; i < r->nprocs; i++)
		print_proc_text(r, &r->procs[i], out);
}

static void print_proc_json(const struct uvm_report *r, const struct uvm_proc_stats *p,
			    struct json_writer *w)
{
	static const char *const access[ACCESS_KINDS] = {"other", "read", "write", "atomic",
							 "prefetch"};

	jw_begin_object(w);
	jw_field_u64(w, "pid", p->pid);
	jw_key(w, "faults");
	jw_begin_object(w);
	jw_field_u64(w, "cpu", p->cpu_faults);
	jw_field_u64(w, "gpu", p->gpu_faults);
	jw_field_u64(w, "gpu_replay", p->gpu_replays);
	jw_field_u64(w, "fatal", p->fatal_faults);
	jw_key(w, "gpu_by_access");
	jw_begin_object(w);
	for (int i = 0; i < ACCESS_KINDS; i++)
		jw_field_u64(w, access[i], p->gpu_by_access[i]);
	jw_end_object(w);
	jw_key(w, "cpu_by_access");
	jw_begin_object(w);
	for (int i = 0; i < ACCESS_KINDS; i++)
		jw_field_u64(w, access[i], p->cpu_by_access[i]);
	jw_end_object(w);
	jw_end_object(w);
	jw_key(w, "migrated_bytes");
	jw_begin_object(w);
	jw_field_u64(w, "htod", p->htod_bytes);
	jw_field_u64(w, "dtoh", p->dtoh_bytes);
	jw_field_u64(w, "dtod", p->dtod_bytes);
	jw_field_u64(w, "htoh", p->htoh_bytes);
	jw_field_u64(w, "prefetched", p->prefetch_bytes);
	jw_end_object(w);
	jw_key(w, "migrations");
	jw_begin_object(w);
	jw_field_u64(w, "htod", p->htod_count);
	jw_field_u64(w, "dtoh", p->dtoh_count);
	jw_field_u64(w, "dtod", p->dtod_count);
	jw_field_u64(w, "htoh", p->htoh_count);
	jw_end_object(w);
	jw_field_u64(w, "migration_ns", p->migration_ns);
	jw_field_u64(w, "migration_wall_ns", p->wall_ns);
	jw_field_u64(w, "evictions", p->evictions);
	jw_field_u64(w, "evicted_bytes", p->evicted_bytes);
	jw_field_u64(w, "thrashing", p->thrashing);
	jw_field_u64(w, "throttling", p->throttling);
	jw_field_u64(w, "map_remote", p->map_remote);
	jw_field_u64(w, "read_duplicate", p->read_dup);
	jw_field_u64(w, "read_duplicate_invalidate", p->read_dup_invalidate);
	jw_field_u64(w, "lost", p->lost);
	jw_key(w, "thrashing_regions");
	jw_begin_array(w);
	for (size_t i = 0; i < p->nregions && i < r->top_n; i++) {
		jw_begin_object(w);
		jw_field_u64(w, "address", p->regions[i].address);
		jw_field_u64(w, "bytes", p->regions[i].bytes);
		jw_field_u64(w, "events", p->regions[i].events);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void uvm_print_json(void *state, struct json_writer *w)
{
	struct uvm_report *r = state;

	sort_for_output(r);
	jw_begin_object(w);
	jw_field_u64(w, "events", r->events);
	jw_key(w, "processes");
	jw_begin_array(w);
	for (size_t i = 0; i < r->nprocs; i++)
		print_proc_json(r, &r->procs[i], w);
	jw_end_array(w);
	jw_end_object(w);
}

static void uvm_destroy(void *state)
{
	struct uvm_report *r = state;

	if (!r)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		u64_map_destroy(&r->procs[i].region_index);
		free(r->procs[i].regions);
	}
	u64_map_destroy(&r->pid_index);
	free(r->procs);
	free(r);
}

GRT_REPORT_SECTION(uvm_section) = {
    .name = "uvm",
    .summary =
	"unified memory per process: faults, migrated bytes each way, evictions, thrashing regions",
    .default_on = true,
    .sources = 1u << GRT_SRC_UVM,
    .order = 70,
    .create = uvm_create,
    .on_record = uvm_on_record,
    .print_text = uvm_print_text,
    .print_json = uvm_print_json,
    .destroy = uvm_destroy,
};
