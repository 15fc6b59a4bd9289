/* The node agent: libcuda discovery feeding the counting probes, processes from first call to expiry. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "analysis/report_util.h"
#include "common/clock.h"
#include "common/text_escape.h"
#include "common/u64_map.h"
#include "serve/agent.h"
#include "serve/cuda_agg_user.h"
#include "serve/proc_stacks.h"
#include "sources/libcuda_watch.h"
#include "sources/nvml_sampler.h"
#include "sources/source.h"
#include "trace/trace_names.h"

#define LIVENESS_CHECK_NS 1000000000ull
#define LEAK_STACK_FRAMES 6

/* A launched handle of an exited process, with its final count. */
struct handle_count {
	uint64_t handle;
	uint64_t launches;
};

struct serve_proc {
	uint32_t pid;
	char comm[AGG_COMM_LEN + 1];
	unsigned long long start_time; /* /proc/PID/stat field 22: tells a reused pid apart */
	bool exited;
	uint64_t exit_ns;
	struct u64_map names;	 /* handle -> index in name_texts + 1 */
	struct u64_map handle_labels; /* named handle -> index in labels, or OTHER_LABEL */
	struct name_table name_texts;
	struct name_table labels; /* the first kernel_labels names launched */
	struct proc_stacks *stacks;
	/* final counts, kept from the exit until the idle timeout */
	struct agg_proc_stats final;
	bool final_uvm_bound;
	struct uvm_counts final_uvm;
	struct serve_api_count *final_apis;
	size_t nfinal_apis;
	struct handle_count *final_launches;
	size_t nfinal_launches;
};

struct serve_agent {
	struct serve_agent_config cfg;
	pthread_mutex_t lock;
	int epoll_fd;
	int pid_map_fd;
	struct cuda_agg *agg;
	struct libcuda_watch *watch;
	struct nvml_sampler *nvml;
	struct xid_counts *xids;
	struct uvm_counter *uvm;
	struct serve_device devices[SERVE_MAX_DEVICES];
	size_t ndevices;
	struct serve_nvlink nvlinks[SERVE_MAX_NVLINKS];
	size_t nnvlinks;
	uint64_t lost_samples;
	struct u64_map procs;	  /* pid -> struct serve_proc * */
	struct u64_map exiting;	  /* pids whose exit was announced, handled after the drain */
	struct agg_table tables[CUDA_AGG_MAPS];
	uint64_t leaked_bytes[AGG_ALLOC_KINDS];
	uint64_t leaking_processes;
	uint64_t processes_seen;
	uint64_t next_liveness_ns;
	char why[512];
};

static void note(struct serve_agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct serve_agent *a, const char *fmt, ...)
{
	va_list ap;

	if (!a->cfg.log)
		return;
	va_start(ap, fmt);
	fputs("grtrace: serve: ", a->cfg.log);
	vfprintf(a->cfg.log, fmt, ap);
	fputc('\n', a->cfg.log);
	fflush(a->cfg.log);
	va_end(ap);
}

/* ---- processes ---- */

static unsigned long long read_start_time(uint32_t pid)
{
	char path[64], line[1024], *p;
	unsigned long long start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			      "%*d %*d %llu",
		       &start);
	fclose(f);
	return start;
}

/*
 * The process's name, /proc/PID/comm, into comm; comm is left as it was when
 * that cannot be read, or while the main thread is lent to grtrace and
 * carries its name (grtrace-*): grtrace's name is never the application's.
 */
static void read_comm(uint32_t pid, char *comm, size_t len)
{
	char path[64], name[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (!(f = fopen(path, "re")))
		return;
	if (fgets(name, (int)sizeof(name), f)) {
		name[strcspn(name, "\n")] = 0;
		if (len && !grt_is_own_thread_name(name)) {
			size_t n = strnlen(name, len - 1);

			memcpy(comm, name, n);
			comm[n] = 0;
		}
	}
	fclose(f);
}

static void proc_free(struct serve_proc *p)
{
	u64_map_destroy(&p->names);
	u64_map_destroy(&p->handle_labels);
	name_table_destroy(&p->name_texts);
	name_table_destroy(&p->labels);
	proc_stacks_free(p->stacks);
	free(p->final_apis);
	free(p->final_launches);
	free(p);
}

static struct serve_proc *proc_find(struct serve_agent *a, uint32_t pid)
{
	uint64_t v;

	return u64_map_get(&a->procs, pid, &v) ? (struct serve_proc *)(uintptr_t)v : NULL;
}

/* The process record of pid, made at its first sight: comm, start time, mappings for stacks. */
static struct serve_proc *proc_get(struct serve_agent *a, uint32_t pid, const char *comm)
{
	struct serve_proc *p = proc_find(a, pid);

	if (p && !p->exited)
		return p;
	if (p) { /* the pid came back as a new process before the old one's series expired */
		u64_map_remove(&a->procs, pid, NULL);
		proc_free(p);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	read_comm(pid, p->comm, sizeof(p->comm));
	p->start_time = read_start_time(pid);
	u64_map_init(&p->names);
	u64_map_init(&p->handle_labels);
	name_table_init(&p->name_texts);
	name_table_init(&p->labels);
	p->stacks = proc_stacks_new((pid_t)pid);
	if (!p->stacks || u64_map_put(&a->procs, pid, (uintptr_t)p)) {
		proc_free(p);
		return NULL;
	}
	proc_stacks_read_maps(p->stacks);
	uvm_counter_watch(a->uvm, pid);
	a->processes_seen++;
	return p;
}

static void learn_name(struct serve_proc *p, uint64_t handle, const char *name)
{
	long idx = name_table_intern(&p->name_texts, name);

	if (idx >= 0)
		u64_map_put(&p->names, handle, (uint64_t)idx + 1);
}

static const char *name_of(const struct serve_proc *p, uint64_t handle)
{
	uint64_t idx;

	return u64_map_get(&p->names, handle, &idx) ? p->name_texts.names[idx - 1] : NULL;
}

/*
 * An allocation's stack, its frames in the event: kept, and the mappings read
 * again when a frame may lie in a new one.
 */
static void learn_stack(struct serve_proc *p, const struct agg_event *ev)
{
	uint64_t ips[AGG_STACK_DEPTH];

	if (ev->name_len != sizeof(ips) || proc_stacks_has(p->stacks, ev->other))
		return;
	memcpy(ips, ev->name, sizeof(ips));
	proc_stacks_add(p->stacks, ev->other, ips, AGG_STACK_DEPTH);
	proc_stacks_read_maps(p->stacks);
}

static void on_agg_event(void *ctx, const struct agg_event *ev)
{
	struct serve_agent *a = ctx;
	char comm[AGG_COMM_LEN + 1], name[AGG_NAME_LEN];
	struct serve_proc *p;
	const char *alias;

	if (ev->kind == AGG_EV_EXIT) {
		u64_map_put(&a->exiting, ev->tgid, 1);
		return;
	}
	memcpy(comm, ev->comm, AGG_COMM_LEN);
	comm[AGG_COMM_LEN] = 0;
	p = proc_get(a, ev->tgid, comm);
	if (!p)
		return;
	switch (ev->kind) {
	case AGG_EV_NAME:
		if (ev->name_len > 1 && ev->name_len <= AGG_NAME_LEN) {
			memcpy(name, ev->name, ev->name_len);
			name[ev->name_len - 1] = 0;
			learn_name(p, ev->handle, name);
		}
		break;
	case AGG_EV_ALIAS:
		alias = name_of(p, ev->other);
		if (alias) {
			snprintf(name, sizeof(name), "%s", alias);
			learn_name(p, ev->handle, name);
		}
		break;
	case AGG_EV_STACK:
		learn_stack(p, ev);
		break;
	}
}

/* ---- exits ---- */

static bool is_exiting(void *ctx, uint32_t tgid)
{
	return u64_map_get(&((struct serve_agent *)ctx)->exiting, tgid, NULL);
}

static int keep_final_api(struct serve_proc *p, const struct agg_api_key *k,
			  const struct agg_api_stats *s)
{
	struct serve_api_count *more =
	    realloc(p->final_apis, (p->nfinal_apis + 1) * sizeof(*more));

	if (!more)
		return -ENOMEM;
	p->final_apis = more;
	p->final_apis[p->nfinal_apis++] = (struct serve_api_count){.api = k->api, .stats = *s};
	return 0;
}

static int keep_final_launch(struct serve_proc *p, uint64_t handle, uint64_t count)
{
	struct handle_count *more =
	    realloc(p->final_launches, (p->nfinal_launches + 1) * sizeof(*more));

	if (!more)
		return -ENOMEM;
	p->final_launches = more;
	p->final_launches[p->nfinal_launches++] = (struct handle_count){handle, count};
	return 0;
}

/* What an exiting process still held: counted, and logged once with the largest one's stack. */
static void report_leaks(struct serve_agent *a, struct serve_proc *p, const struct agg_table *t)
{
	const struct agg_alloc_key *keys = t->keys;
	const struct agg_alloc *allocs = t->values;
	uint64_t bytes = 0, largest = 0;
	uint64_t largest_stack = 0;
	size_t count = 0;
	char where[2048], comm[4 * AGG_COMM_LEN + 1]; /* each byte escaped to at most 4 */
	const char *bare = "";

	for (size_t i = 0; i < t->n; i++) {
		if (keys[i].tgid != p->pid)
			continue;
		a->leaked_bytes[allocs[i].kind % AGG_ALLOC_KINDS] += allocs[i].bytes;
		bytes += allocs[i].bytes;
		count++;
		if (allocs[i].bytes > largest) {
			largest = allocs[i].bytes;
			largest_stack = allocs[i].stack_key;
		}
	}
	if (!count)
		return;
	a->leaking_processes++;
	if (!proc_stacks_has_mappings(p->stacks))
		bare = " (not symbolized: the process exited before the agent could read its "
		       "mappings)";
	proc_stacks_format(p->stacks, largest_stack, LEAK_STACK_FRAMES, where, sizeof(where));
	text_escape(comm, sizeof(comm), p->comm, false);
	note(a,
	     "pid %u (%s) exited with %" PRIu64 " bytes of CUDA memory in %zu allocations not "
	     "freed; the largest, %" PRIu64 " bytes, allocated at %s%s",
	     p->pid, comm, bytes, count, largest, where, bare);
}

static void freeze(struct serve_agent *a, struct serve_proc *p, uint64_t now)
{
	const struct agg_table *procs = &a->tables[CUDA_AGG_PROCS], *apis = &a->tables[CUDA_AGG_APIS];
	const struct agg_table *launches = &a->tables[CUDA_AGG_LAUNCHES];

	for (size_t i = 0; i < procs->n; i++)
		if (((const uint32_t *)procs->keys)[i] == p->pid)
			p->final = ((const struct agg_proc_stats *)procs->values)[i];
	for (size_t i = 0; i < apis->n; i++) {
		const struct agg_api_key *k = (const struct agg_api_key *)apis->keys + i;

		if (k->tgid == p->pid)
			keep_final_api(p, k, (const struct agg_api_stats *)apis->values + i);
	}
	for (size_t i = 0; i < launches->n; i++) {
		const struct agg_launch_key *k = (const struct agg_launch_key *)launches->keys + i;

		if (k->tgid == p->pid)
			keep_final_launch(p, k->function, ((const uint64_t *)launches->values)[i]);
	}
	report_leaks(a, p, &a->tables[CUDA_AGG_ALLOCS]);
	p->final_uvm_bound = uvm_counter_finish(a->uvm, p->pid, &p->final_uvm);
	p->exited = true;
	p->exit_ns = now;
}

/*
 * Exited processes: their final counts move from the kernel's maps into the
 * process record (where they stay until the idle timeout), and the maps
 * forget them, so a reused pid starts from zero.
 */
static void handle_exits(struct serve_agent *a)
{
	uint64_t now = grt_monotonic_ns(), pid;

	if (!u64_map_size(&a->exiting))
		return;
	for (int m = 0; m < CUDA_AGG_MAPS; m++)
		cuda_agg_read(a->agg, m, &a->tables[m]);
	for (size_t i = 0; u64_map_iter(&a->exiting, &i, &pid, NULL);) {
		struct serve_proc *p = proc_find(a, (uint32_t)pid);
		__u32 key = (__u32)pid;

		if (!p)
			p = proc_get(a, (uint32_t)pid, NULL);
		if (p && !p->exited)
			freeze(a, p, now);
		if (a->pid_map_fd >= 0)
			bpf_map_delete_elem(a->pid_map_fd, &key);
	}
	for (int m = 0; m < CUDA_AGG_MAPS; m++)
		cuda_agg_delete(a->agg, m, &a->tables[m], is_exiting, a);
	u64_map_destroy(&a->exiting);
	u64_map_init(&a->exiting);
}

/* A process whose exit notification was lost (ring buffer full) is found gone here. */
static void check_liveness(struct serve_agent *a, uint64_t now)
{
	uint64_t pid, v;

	if (now < a->next_liveness_ns)
		return;
	a->next_liveness_ns = now + LIVENESS_CHECK_NS;
	for (size_t i = 0; u64_map_iter(&a->procs, &i, &pid, &v);) {
		struct serve_proc *p = (void *)(uintptr_t)v;

		if (!p->exited && read_start_time(p->pid) != p->start_time)
			u64_map_put(&a->exiting, pid, 1);
	}
}

static void expire(struct serve_agent *a, uint64_t now)
{
	uint64_t idle_ns = (uint64_t)(a->cfg.idle_timeout_s * 1e9), pid, v;
	uint32_t gone[64];
	size_t n = 0;

	for (size_t i = 0; n < 64 && u64_map_iter(&a->procs, &i, &pid, &v);) {
		struct serve_proc *p = (void *)(uintptr_t)v;

		if (p->exited && now >= p->exit_ns && now - p->exit_ns >= idle_ns)
			gone[n++] = (uint32_t)pid;
	}
	for (size_t i = 0; i < n; i++) {
		u64_map_remove(&a->procs, gone[i], &v);
		proc_free((void *)(uintptr_t)v);
	}
}

/* ---- discovery ---- */

static int probe_found(void *ctx, const char *open_path, const char *shown_path)
{
	struct serve_agent *a = ctx;
	char why[512];
	int err = cuda_agg_probe_library(a->agg, open_path, shown_path, why, sizeof(why));

	if (err)
		note(a, "%s", why);
	else
		note(a, "probing %s", shown_path);
	return err;
}

void serve_nvlink_add(struct serve_nvlink *table, size_t *n, const struct grt_nvlink_sample_rec *s)
{
	size_t at = 0;

	while (at < *n && (table[at].device != s->device || table[at].link != s->link))
		at++;
	if (at == SERVE_MAX_NVLINKS)
		return;
	if (at == *n)
		table[(*n)++] = (struct serve_nvlink){ .device = s->device, .pci = s->pci,
							   .link = s->link };
	table[at].tx_bytes += s->tx_bytes;
	table[at].rx_bytes += s->rx_bytes;
}

/* Keeps each GPU's latest NVML sample: the gauges show the last interval. */
static void take_samples(struct serve_agent *a)
{
	struct nvml_sample samples[32];
	size_t n;

	if (!a->nvml)
		return;
	while ((n = nvml_sampler_take(a->nvml, samples, 32))) {
		for (size_t i = 0; i < n; i++) {
			const struct grt_pcie_sample_rec *r = &samples[i].rec;
			size_t at = 0;

			if (samples[i].type == GRT_REC_NVLINK_SAMPLE) {
				serve_nvlink_add(a->nvlinks, &a->nnvlinks, &samples[i].link);
				continue;
			}
			while (at < a->ndevices && a->devices[at].device != r->device)
				at++;
			if (at == SERVE_MAX_DEVICES)
				continue;
			a->ndevices += at == a->ndevices;
			a->devices[at] = (struct serve_device){
			    .device = r->device, .pci = r->pci, .flags = r->flags,
			    .pcie_tx_bps = r->pcie_tx_bps, .pcie_rx_bps = r->pcie_rx_bps,
			    .nvlink_tx_bps = r->nvlink_tx_bps, .nvlink_rx_bps = r->nvlink_rx_bps,
			    .gauges = samples[i].gauges};
		}
		if (n < 32)
			break;
	}
	a->lost_samples += nvml_sampler_lost(a->nvml);
}

static void drain(struct serve_agent *a)
{
	uint64_t now = grt_monotonic_ns();

	cuda_agg_consume(a->agg);
	libcuda_watch_poll(a->watch);
	/* names and stacks the probes sent after discovery probed a new file */
	cuda_agg_consume(a->agg);
	check_liveness(a, now);
	handle_exits(a);
	expire(a, now);
	take_samples(a);
	xid_counts_poll(a->xids);
	uvm_counter_poll(a->uvm, now);
}

void serve_agent_poll(struct serve_agent *a, int timeout_ms)
{
	struct epoll_event ready[4];

	epoll_wait(a->epoll_fd, ready, 4, timeout_ms);
	pthread_mutex_lock(&a->lock);
	drain(a);
	pthread_mutex_unlock(&a->lock);
}

static int watch_fd(struct serve_agent *a, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};

	return epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* Puts prefix before the one line in why. */
static void prefix_why(char *why, size_t why_len, const char *prefix)
{
	char line[512];

	snprintf(line, sizeof(line), "%s", why);
	snprintf(why, why_len, "%s%s", prefix, line);
}

/* NVML from the trusted path only (nvml_library_path), sampled once a second unless told. */
static int start_nvml(struct serve_agent *a, char *why, size_t why_len)
{
	char path[4096];
	int err = nvml_library_path(path, sizeof(path), why, why_len);

	if (err)
		return err;
	a->nvml = nvml_sampler_start(path, a->cfg.nvml_interval_ms ? a->cfg.nvml_interval_ms : 1000,
				     true, why, why_len);
	return a->nvml ? 0 : -ENODEV;
}

static int create_pid_map(struct serve_agent *a)
{
	__u8 one = 1;

	a->pid_map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "traced_tgids", sizeof(__u32),
				       sizeof(__u8), 8192, NULL);
	if (a->pid_map_fd < 0)
		return -errno;
	for (unsigned i = 0; i < a->cfg.npids; i++) {
		__u32 tgid = (__u32)a->cfg.pids[i];

		if (bpf_map_update_elem(a->pid_map_fd, &tgid, &one, BPF_ANY))
			return -errno;
	}
	return 0;
}

int serve_agent_start(struct serve_agent **out, const struct serve_agent_config *cfg, char *why,
		      size_t why_len)
{
	struct serve_agent *a = calloc(1, sizeof(*a));
	struct libcuda_watch_config wc = {0};
	int err = 0;

	if (!a)
		return -ENOMEM;
	a->cfg = *cfg;
	a->pid_map_fd = -1;
	pthread_mutex_init(&a->lock, NULL);
	u64_map_init(&a->procs);
	u64_map_init(&a->exiting);
	a->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (a->epoll_fd < 0)
		err = -errno;
	/* the optional sources first: one that cannot run here fails before anything is probed */
	if (!err && cfg->xid)
		err = xid_counts_start(&a->xids, why, why_len);
	if (!err && cfg->uvm && (err = uvm_counter_start(&a->uvm, cfg->uvm_replay, why, why_len)))
		prefix_why(why, why_len, "uvm: ");
	if (!err && cfg->npids && (err = create_pid_map(a)))
		snprintf(why, why_len, "cannot create the process filter map: %s", strerror(-err));
	if (!err)
		err = cuda_agg_open(&a->agg, a->pid_map_fd, on_agg_event, a, why, why_len);
	if (!err) {
		wc = (struct libcuda_watch_config){
		    .pids = cfg->pids,
		    .npids = cfg->npids,
		    .pid_map_fd = a->pid_map_fd,
		    .extra_paths = cfg->libcuda_paths,
		    .nextra = cfg->nlibcuda,
		    .rescan_s = cfg->rescan_s,
		    .found = probe_found,
		    .ctx = a,
		};
		err = libcuda_watch_start(&a->watch, &wc, why, why_len);
	}
	if (!err && ((err = watch_fd(a, cuda_agg_events_fd(a->agg))) ||
		     (err = watch_fd(a, libcuda_watch_fd(a->watch)))))
		snprintf(why, why_len, "epoll: %s", strerror(-err));
	if (!err && cfg->nvml)
		err = start_nvml(a, why, why_len);
	if (err) {
		serve_agent_stop(a);
		return err;
	}
	/* what the first scan's probing sent */
	cuda_agg_consume(a->agg);
	*out = a;
	return 0;
}

void serve_agent_stop(struct serve_agent *a)
{
	uint64_t v;

	if (!a)
		return;
	nvml_sampler_stop(a->nvml);
	xid_counts_stop(a->xids);
	uvm_counter_stop(a->uvm);
	libcuda_watch_stop(a->watch);
	cuda_agg_close(a->agg);
	for (size_t i = 0; u64_map_iter(&a->procs, &i, NULL, &v);)
		proc_free((void *)(uintptr_t)v);
	u64_map_destroy(&a->procs);
	u64_map_destroy(&a->exiting);
	for (int m = 0; m < CUDA_AGG_MAPS; m++)
		agg_table_free(&a->tables[m]);
	if (a->pid_map_fd >= 0)
		close(a->pid_map_fd);
	if (a->epoll_fd >= 0)
		close(a->epoll_fd);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* ---- snapshots ---- */

/* What handle_labels holds for a handle counted under "other". */
#define OTHER_LABEL UINT64_MAX

/*
 * The label a kernel name is counted under: its own while fewer than the
 * limit have one, else "other" (as is a kernel named "other", so that the
 * label means one thing). Returns its index in p->labels, or -1 for other.
 */
static long label_index(const struct serve_agent *a, struct serve_proc *p, const char *name)
{
	long idx;

	if (!strcmp(name, "other"))
		return -1;
	idx = name_table_find(&p->labels, name);
	if (idx < 0 && p->labels.count < a->cfg.kernel_labels)
		idx = name_table_intern(&p->labels, name);
	return idx;
}

/*
 * A handle's label, remembered once its name is known: a scrape of many
 * processes and kernels looks each handle up once, without hashing names.
 */
static long handle_label(const struct serve_agent *a, struct serve_proc *p, uint64_t handle)
{
	const char *name;
	char hex[32];
	uint64_t v;
	long idx;

	if (u64_map_get(&p->handle_labels, handle, &v))
		return v == OTHER_LABEL ? -1 : (long)v;
	name = name_of(p, handle);
	if (!name) { /* not named (yet): counted under its handle, not remembered */
		snprintf(hex, sizeof(hex), "0x%" PRIx64, handle);
		return label_index(a, p, hex);
	}
	idx = label_index(a, p, name);
	u64_map_put(&p->handle_labels, handle, idx < 0 ? OTHER_LABEL : (uint64_t)idx);
	return idx;
}

/*
 * Adds count launches to the snapshot's kernel of label idx; kernel_slots
 * maps (process slot, label) to the kernel's index in s->kernels.
 */
static int add_launches(const struct serve_agent *a, struct serve_proc *p,
			struct serve_proc_snapshot *s, uint64_t at, uint64_t handle, uint64_t count,
			struct u64_map *kernel_slots)
{
	long idx = handle_label(a, p, handle);
	uint64_t key = at << 32 | (uint64_t)(idx + 1), k;
	struct serve_kernel_count *more;

	if (u64_map_get(kernel_slots, key, &k)) {
		s->kernels[k].launches += count;
		return 0;
	}
	more = realloc(s->kernels, (s->nkernels + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	s->kernels = more;
	s->kernels[s->nkernels].label = strdup(idx < 0 ? "other" : p->labels.names[idx]);
	if (!s->kernels[s->nkernels].label || u64_map_put(kernel_slots, key, s->nkernels))
		return -ENOMEM;
	s->kernels[s->nkernels++].launches = count;
	return 0;
}

static int add_api(struct serve_proc_snapshot *s, uint32_t api, const struct agg_api_stats *st)
{
	struct serve_api_count *more = realloc(s->apis, (s->napis + 1) * sizeof(*more));

	if (!more)
		return -ENOMEM;
	s->apis = more;
	s->apis[s->napis++] = (struct serve_api_count){.api = api, .stats = *st};
	return 0;
}

static int by_pid(const void *x, const void *y)
{
	const struct serve_proc_snapshot *a = x, *b = y;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* Fills the live processes' counts from the maps, the exited ones' from their final counts. */
static int fill_procs(struct serve_agent *a, struct serve_snapshot *out, struct u64_map *index)
{
	const struct agg_table *procs = &a->tables[CUDA_AGG_PROCS], *apis = &a->tables[CUDA_AGG_APIS];
	const struct agg_table *launches = &a->tables[CUDA_AGG_LAUNCHES];
	struct u64_map kernel_slots; /* (process slot << 32 | label + 1) -> index in its kernels */
	uint64_t pid, v, at;
	int err = 0;

	for (size_t i = 0; i < procs->n; i++)
		proc_get(a, ((const uint32_t *)procs->keys)[i], NULL); /* its first event was lost */
	out->procs = calloc(u64_map_size(&a->procs) + 1, sizeof(*out->procs));
	if (!out->procs)
		return -ENOMEM;
	u64_map_init(&kernel_slots);
	for (size_t i = 0; u64_map_iter(&a->procs, &i, &pid, &v);) {
		struct serve_proc *p = (void *)(uintptr_t)v;
		struct serve_proc_snapshot *s = &out->procs[out->nprocs];

		s->pid = p->pid;
		memcpy(s->comm, p->comm, sizeof(s->comm));
		s->exited = p->exited;
		if (p->exited) {
			s->uvm_bound = p->final_uvm_bound;
			s->uvm = p->final_uvm;
			s->stats = p->final;
			for (size_t j = 0; j < p->nfinal_apis && !err; j++)
				err = add_api(s, p->final_apis[j].api, &p->final_apis[j].stats);
			for (size_t j = 0; j < p->nfinal_launches && !err; j++)
				err = add_launches(a, p, s, out->nprocs, p->final_launches[j].handle,
						   p->final_launches[j].launches, &kernel_slots);
		} else {
			s->uvm_bound = uvm_counter_get(a->uvm, p->pid, &s->uvm);
		}
		if (u64_map_put(index, pid, out->nprocs))
			err = -ENOMEM;
		out->nprocs++;
	}
	for (size_t i = 0; i < procs->n && !err; i++)
		if (u64_map_get(index, ((const uint32_t *)procs->keys)[i], &at) &&
		    !out->procs[at].exited)
			out->procs[at].stats = ((const struct agg_proc_stats *)procs->values)[i];
	for (size_t i = 0; i < apis->n && !err; i++) {
		const struct agg_api_key *k = (const struct agg_api_key *)apis->keys + i;

		if (u64_map_get(index, k->tgid, &at) && !out->procs[at].exited)
			err = add_api(&out->procs[at], k->api,
				      (const struct agg_api_stats *)apis->values + i);
	}
	for (size_t i = 0; i < launches->n && !err; i++) {
		const struct agg_launch_key *k = (const struct agg_launch_key *)launches->keys + i;

		if (u64_map_get(index, k->tgid, &at) && !out->procs[at].exited)
			err = add_launches(a, proc_find(a, k->tgid), &out->procs[at], at, k->function,
					   ((const uint64_t *)launches->values)[i], &kernel_slots);
	}
	u64_map_destroy(&kernel_slots);
	serve_snapshot_total_launches(out);
	return err;
}

void serve_snapshot_total_launches(struct serve_snapshot *s)
{
	for (size_t i = 0; i < s->nprocs; i++)
		for (size_t k = 0; k < s->procs[i].nkernels; k++)
			s->procs[i].stats.launches += s->procs[i].kernels[k].launches;
}

static void fill_health(struct serve_agent *a, struct serve_snapshot *out)
{
	struct serve_health *h = &out->health;
	struct libcuda_watch_stats ws;
	struct cuda_agg_health ah;

	cuda_agg_health(a->agg, &ah);
	libcuda_watch_stats(a->watch, &ws);
	for (size_t i = 0; i < out->nprocs; i++) {
		if (out->procs[i].exited)
			h->processes_exited++;
		else
			h->processes_tracked++;
	}
	h->processes_seen_total = a->processes_seen;
	h->libraries_probed = cuda_agg_libraries(a->agg);
	h->loaders_probed = ws.loaders;
	h->process_scans = ws.process_scans;
	h->discovery_error = ws.last_error;
	h->lost_counts = ah.lost_counts;
	h->lost_events = ah.lost_events + ws.lost_events;
	h->lost_allocs = ah.lost_allocs;
	h->bpf_run_ns = ah.bpf_run_ns;
	h->bpf_runs = ah.bpf_runs;
	h->refused_probes = ah.refused;
	h->lost_samples = a->lost_samples;
	h->lost_uvm = uvm_counter_lost(a->uvm);
	out->uvm_counted = a->uvm != NULL;
	memcpy(out->devices, a->devices, sizeof(out->devices));
	out->ndevices = a->ndevices;
	memcpy(out->nvlinks, a->nvlinks, a->nnvlinks * sizeof(a->nvlinks[0]));
	out->nnvlinks = a->nnvlinks;
	out->xid_counted = a->xids != NULL;
	out->nxids = xid_counts_get(a->xids, out->xids, SERVE_MAX_XIDS);
	if (out->nxids > SERVE_MAX_XIDS)
		out->nxids = SERVE_MAX_XIDS;
}

int serve_agent_snapshot(struct serve_agent *a, struct serve_snapshot *out)
{
	struct u64_map index;
	int err = 0;

	memset(out, 0, sizeof(*out));
	u64_map_init(&index);
	pthread_mutex_lock(&a->lock);
	/* names first: a launch counted now may be of a handle named a moment ago */
	drain(a);
	out->taken_ns = grt_monotonic_ns();
	for (int m = 0; m < CUDA_AGG_MAPS && !err; m++)
		if (m != CUDA_AGG_ALLOCS)
			err = cuda_agg_read(a->agg, m, &a->tables[m]);
	if (!err)
		err = fill_procs(a, out, &index);
	memcpy(out->leaked_bytes, a->leaked_bytes, sizeof(out->leaked_bytes));
	out->leaking_processes = a->leaking_processes;
	fill_health(a, out);
	pthread_mutex_unlock(&a->lock);
	u64_map_destroy(&index);
	if (err) {
		serve_snapshot_free(out);
		return err;
	}
	qsort(out->procs, out->nprocs, sizeof(*out->procs), by_pid);
	return 0;
}

void serve_snapshot_free(struct serve_snapshot *s)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		for (size_t k = 0; k < s->procs[i].nkernels; k++)
			free((void *)s->procs[i].kernels[k].label);
		free(s->procs[i].kernels);
		free(s->procs[i].apis);
	}
	free(s->procs);
	memset(s, 0, sizeof(*s));
}
