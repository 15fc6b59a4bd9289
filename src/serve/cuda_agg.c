/* Loads the aggregation programs, probes libcuda files with them, reads and trims their maps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/u64_map.h"
#include "serve/cuda_agg_user.h"
#include "sources/bpf_util.h"
#include "sources/cuda_api.h"
#include "sources/elf_symbols.h"
#include "sources/uprobe_multi.h"
#include "trace/records_cuda.h"
#include "cuda_agg.skel.h"

#define MAX_LIBRARIES 16

struct probed_library {
	dev_t dev;
	ino_t ino;
	int *link_fds;
	unsigned nfds;
	struct bpf_link **links;
	unsigned nlinks;
};

struct cuda_agg {
	struct cuda_agg_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link *exit_link, *exec_link; /* the process-end tracepoints */
	cuda_agg_event_fn on_event;
	void *ctx;
	bool multi;
	int stats_fd; /* keeps BPF run-time statistics on while open */
	struct probed_library libs[MAX_LIBRARIES];
	unsigned nlibs;
	unsigned refused;
};

/* What the programs do with a class's calls (cuda_agg.h), and the alloc or copy kind. */
static uint64_t op_of_class(enum cuda_probe_class cls, uint32_t *kind)
{
	static const struct {
		uint8_t op, kind;
	} ops[CUDA_CLASS_COUNT] = {
	    [CUDA_CLASS_LAUNCH] = {AGG_OP_LAUNCH},
	    [CUDA_CLASS_LAUNCH_EX] = {AGG_OP_LAUNCH_EX},
	    [CUDA_CLASS_MEM_ALLOC] = {AGG_OP_ALLOC, GRT_ALLOC_DEVICE},
	    [CUDA_CLASS_MEM_ALLOC_ASYNC] = {AGG_OP_ALLOC, GRT_ALLOC_ASYNC},
	    [CUDA_CLASS_MEM_ALLOC_MANAGED] = {AGG_OP_ALLOC, GRT_ALLOC_MANAGED},
	    [CUDA_CLASS_MEM_ALLOC_HOST] = {AGG_OP_ALLOC, GRT_ALLOC_HOST},
	    [CUDA_CLASS_MEM_HOST_ALLOC] = {AGG_OP_ALLOC, GRT_ALLOC_HOST_ALLOC},
	    [CUDA_CLASS_MEM_ALLOC_PITCH] = {AGG_OP_ALLOC_PITCH, GRT_ALLOC_PITCH},
	    [CUDA_CLASS_MEM_ALLOC_FROM_POOL_ASYNC] = {AGG_OP_ALLOC, GRT_ALLOC_POOL_ASYNC},
	    [CUDA_CLASS_MEM_FREE] = {AGG_OP_FREE, GRT_ALLOC_DEVICE},
	    [CUDA_CLASS_MEM_FREE_ASYNC] = {AGG_OP_FREE, GRT_ALLOC_ASYNC},
	    [CUDA_CLASS_MEM_FREE_HOST] = {AGG_OP_FREE, GRT_ALLOC_HOST},
	    [CUDA_CLASS_MEMCPY] = {AGG_OP_COPY, GRT_COPY_DEFAULT},
	    [CUDA_CLASS_MEMCPY_ASYNC] = {AGG_OP_COPY, GRT_COPY_DEFAULT},
	    [CUDA_CLASS_MEMCPY_HTOD] = {AGG_OP_COPY, GRT_COPY_HTOD},
	    [CUDA_CLASS_MEMCPY_DTOH] = {AGG_OP_COPY, GRT_COPY_DTOH},
	    [CUDA_CLASS_MEMCPY_DTOD] = {AGG_OP_COPY, GRT_COPY_DTOD},
	    [CUDA_CLASS_MEMCPY_HTOD_ASYNC] = {AGG_OP_COPY, GRT_COPY_HTOD},
	    [CUDA_CLASS_MEMCPY_DTOH_ASYNC] = {AGG_OP_COPY, GRT_COPY_DTOH},
	    [CUDA_CLASS_MEMCPY_DTOD_ASYNC] = {AGG_OP_COPY, GRT_COPY_DTOD},
	    [CUDA_CLASS_MEMCPY_PEER] = {AGG_OP_COPY_PEER, GRT_COPY_PEER},
	    [CUDA_CLASS_MEMCPY_PEER_ASYNC] = {AGG_OP_COPY_PEER, GRT_COPY_PEER},
	    [CUDA_CLASS_MEMCPY_2D] = {AGG_OP_COPY_2D},
	    [CUDA_CLASS_MEMCPY_2D_ASYNC] = {AGG_OP_COPY_2D},
	    [CUDA_CLASS_MEMCPY_3D] = {AGG_OP_COPY_3D},
	    [CUDA_CLASS_MEMCPY_3D_ASYNC] = {AGG_OP_COPY_3D},
	    [CUDA_CLASS_CTX_SYNCHRONIZE] = {AGG_OP_SYNC},
	    [CUDA_CLASS_STREAM_SYNCHRONIZE] = {AGG_OP_SYNC},
	    [CUDA_CLASS_EVENT_SYNCHRONIZE] = {AGG_OP_SYNC},
	    [CUDA_CLASS_MODULE_GET_FUNCTION] = {AGG_OP_NAME_ARG},
	    [CUDA_CLASS_LIBRARY_GET_KERNEL] = {AGG_OP_NAME_ARG},
	    [CUDA_CLASS_KERNEL_GET_FUNCTION] = {AGG_OP_NAME_ALIAS},
	    [CUDA_CLASS_FUNC_GET_NAME] = {AGG_OP_NAME_OUT},
	};

	*kind = cls < CUDA_CLASS_COUNT ? ops[cls].kind : 0;
	return cls < CUDA_CLASS_COUNT ? ops[cls].op : AGG_OP_PLAIN;
}

static uint64_t cookie_of(uint32_t api)
{
	uint32_t kind;
	uint64_t op = op_of_class(cuda_api_class(api), &kind);

	return AGG_COOKIE(api, op, kind) | (cuda_api_is_legacy32(api) ? AGG_COOKIE_LEGACY32 : 0);
}

static int on_ring_event(void *ctx, void *data, size_t len)
{
	struct cuda_agg *a = ctx;

	if (len >= sizeof(struct agg_event))
		a->on_event(a->ctx, data);
	return 0;
}

int cuda_agg_open(struct cuda_agg **out, int pid_map_fd, cuda_agg_event_fn on_event, void *ctx,
		  char *why, size_t why_len)
{
	struct cuda_agg *a = calloc(1, sizeof(*a));
	int err = 0;

	if (!a)
		return -ENOMEM;
	a->on_event = on_event;
	a->ctx = ctx;
	a->stats_fd = -1;
	grt_bpf_capture_messages();
	a->skel = cuda_agg_bpf__open();
	if (!a->skel)
		err = -errno;
	if (!err) {
		a->skel->rodata->self_tgid = (__u32)getpid();
		a->multi = grt_uprobe_multi_supported() && !getenv("GRT_CUDA_NO_UPROBE_MULTI");
		if (a->multi) {
			bpf_program__set_expected_attach_type(a->skel->progs.agg_enter,
							      GRT_BPF_TRACE_UPROBE_MULTI);
			bpf_program__set_expected_attach_type(a->skel->progs.agg_exit,
							      GRT_BPF_TRACE_UPROBE_MULTI);
		}
		a->skel->rodata->filter_by_tgid = pid_map_fd >= 0;
		if (pid_map_fd >= 0)
			err = bpf_map__reuse_fd(a->skel->maps.traced_tgids, pid_map_fd);
	}
	if (!err)
		err = cuda_agg_bpf__load(a->skel);
	if (!err) {
		a->exit_link = bpf_program__attach(a->skel->progs.agg_process_exit);
		a->exec_link = bpf_program__attach(a->skel->progs.agg_process_exec);
		err = a->exit_link && a->exec_link ? 0 : -errno;
	}
	if (!err) {
		a->ring = ring_buffer__new(bpf_map__fd(a->skel->maps.agg_events), on_ring_event, a,
					   NULL);
		err = a->ring ? 0 : -errno;
	}
	if (err) {
		snprintf(why, why_len, "loading the CUDA counting programs failed: %s",
			 grt_bpf_last_message()[0] ? grt_bpf_last_message() : strerror(-err));
		cuda_agg_close(a);
		return err;
	}
	/* the run time the health metrics report; absent on kernels without it */
	a->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	*out = a;
	return 0;
}

static void release_library(struct probed_library *lib)
{
	grt_release_file_links(lib->link_fds, lib->nfds, lib->links, lib->nlinks);
	memset(lib, 0, sizeof(*lib));
}

void cuda_agg_close(struct cuda_agg *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < a->nlibs; i++)
		release_library(&a->libs[i]);
	ring_buffer__free(a->ring);
	bpf_link__destroy(a->exit_link);
	bpf_link__destroy(a->exec_link);
	cuda_agg_bpf__destroy(a->skel);
	if (a->stats_fd >= 0)
		close(a->stats_fd);
	free(a);
}

/* One entry and one return link over n offsets; -errno when the kernel refuses either. */
static int attach_multi(struct cuda_agg *a, struct probed_library *lib, const char *path,
			const uint64_t *offsets, const uint64_t *cookies, uint32_t n)
{
	int enter = grt_uprobe_multi_attach(bpf_program__fd(a->skel->progs.agg_enter), path,
					    offsets, cookies, n, GRT_UPROBE_ENTRY);
	int exit;

	if (enter < 0)
		return enter;
	exit = grt_uprobe_multi_attach(bpf_program__fd(a->skel->progs.agg_exit), path, offsets,
				       cookies, n, GRT_UPROBE_RETURN);
	if (exit < 0) {
		close(enter);
		return exit;
	}
	lib->link_fds[lib->nfds++] = enter;
	lib->link_fds[lib->nfds++] = exit;
	return 0;
}

/* Kernels without uprobe_multi: a perf-event uprobe per entry point and direction. */
static int attach_single(struct cuda_agg *a, struct probed_library *lib, const char *path,
			 uint64_t offset, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, enter_opts, .bpf_cookie = cookie);
	LIBBPF_OPTS(bpf_uprobe_opts, exit_opts, .bpf_cookie = cookie, .retprobe = true);
	struct bpf_link *enter, *exit;

	enter = bpf_program__attach_uprobe_opts(a->skel->progs.agg_enter, -1, path, offset,
						&enter_opts);
	if (!enter)
		return -errno;
	exit = bpf_program__attach_uprobe_opts(a->skel->progs.agg_exit, -1, path, offset,
					       &exit_opts);
	if (!exit) {
		bpf_link__destroy(enter);
		return -errno;
	}
	lib->links[lib->nlinks++] = enter;
	lib->links[lib->nlinks++] = exit;
	return 0;
}

/*
 * All entry points in one link pair; where the kernel refuses the whole link
 * (one entry point it cannot probe), each on its own and the refused ones
 * counted.
 */
static int attach_offsets(struct cuda_agg *a, struct probed_library *lib, const char *path,
			  const uint64_t *offsets, const uint64_t *cookies, uint32_t n)
{
	unsigned refused = 0;
	int err = 0, last = 0;

	lib->link_fds = calloc(2 * (n + 1), sizeof(*lib->link_fds));
	lib->links = calloc(2 * n, sizeof(*lib->links));
	if (!lib->link_fds || !lib->links)
		return -ENOMEM;
	if (a->multi && !attach_multi(a, lib, path, offsets, cookies, n))
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		err = a->multi ? attach_multi(a, lib, path, offsets + i, cookies + i, 1)
			       : attach_single(a, lib, path, offsets[i], cookies[i]);
		if (err) {
			refused++;
			last = err;
		}
	}
	a->refused += refused;
	return refused == n ? last : 0;
}

int cuda_agg_probe_library(struct cuda_agg *a, const char *open_path, const char *shown_path,
			   char *why, size_t why_len)
{
	const char *names[GRT_CUDA_API_COUNT];
	uint64_t offsets[GRT_CUDA_API_COUNT], cookies[GRT_CUDA_API_COUNT];
	struct probed_library *lib;
	struct u64_map by_offset;
	uint64_t offset, api;
	struct stat st;
	uint32_t n = 0;
	int found, err = 0;

	if (stat(open_path, &st)) {
		snprintf(why, why_len, "libcuda %s: %s", shown_path, strerror(errno));
		return -errno;
	}
	for (unsigned i = 0; i < a->nlibs; i++)
		if (a->libs[i].dev == st.st_dev && a->libs[i].ino == st.st_ino)
			return 0;
	if (a->nlibs == MAX_LIBRARIES) {
		snprintf(why, why_len, "more than %d libcuda files to probe", MAX_LIBRARIES);
		return -ENOSPC;
	}
	for (uint32_t i = 1; i < GRT_CUDA_API_COUNT; i++)
		names[i - 1] = cuda_api_symbol(i);
	found = elf_find_functions(open_path, names, GRT_CUDA_API_COUNT - 1, offsets);
	if (found <= 0) {
		snprintf(why, why_len, "%s: %s", shown_path,
			 found == -ENOEXEC ? "not an ELF shared object"
			 : found < 0	   ? strerror(-found)
					   : "exports none of the CUDA driver entry points");
		return found < 0 ? found : -ENOENT;
	}
	elf_skip_landing_pads(open_path, offsets, GRT_CUDA_API_COUNT - 1);
	/* aliases (one address, several names) are probed once: the later name, the newer ABI */
	u64_map_init(&by_offset);
	for (uint32_t i = 0; i < GRT_CUDA_API_COUNT - 1 && !err; i++)
		if (offsets[i])
			err = u64_map_put(&by_offset, offsets[i], i + 1);
	for (size_t i = 0; !err && u64_map_iter(&by_offset, &i, &offset, &api);) {
		offsets[n] = offset;
		cookies[n++] = cookie_of((uint32_t)api);
	}
	u64_map_destroy(&by_offset);
	lib = &a->libs[a->nlibs];
	if (!err)
		err = attach_offsets(a, lib, open_path, offsets, cookies, n);
	if (err) {
		release_library(lib);
		snprintf(why, why_len, "cannot attach uprobes to %s: %s", shown_path,
			 grt_bpf_last_message()[0] ? grt_bpf_last_message() : strerror(-err));
		return err;
	}
	lib->dev = st.st_dev;
	lib->ino = st.st_ino;
	a->nlibs++;
	return 0;
}

unsigned cuda_agg_libraries(const struct cuda_agg *a)
{
	return a->nlibs;
}

int cuda_agg_events_fd(const struct cuda_agg *a)
{
	return ring_buffer__epoll_fd(a->ring);
}

void cuda_agg_consume(struct cuda_agg *a)
{
	ring_buffer__consume(a->ring);
}

static int map_fd_of(struct cuda_agg *a, enum cuda_agg_map which)
{
	struct bpf_map *maps[CUDA_AGG_MAPS] = {
	    [CUDA_AGG_PROCS] = a->skel->maps.procs,
	    [CUDA_AGG_APIS] = a->skel->maps.api_stats,
	    [CUDA_AGG_LAUNCHES] = a->skel->maps.launches,
	    [CUDA_AGG_ALLOCS] = a->skel->maps.allocs,
	};

	return bpf_map__fd(maps[which]);
}

void agg_table_free(struct agg_table *t)
{
	free(t->keys);
	free(t->values);
	memset(t, 0, sizeof(*t));
}

static int table_reserve(struct agg_table *t, size_t cap)
{
	void *k, *v;

	if (cap <= t->cap)
		return 0;
	k = realloc(t->keys, cap * t->key_size);
	if (k)
		t->keys = k;
	v = realloc(t->values, cap * t->value_size);
	if (v)
		t->values = v;
	if (!k || !v)
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

/* Without batch operations (kernels before 5.6): key by key. */
static int read_key_by_key(int fd, struct agg_table *t)
{
	char key[64], next[64];
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		memcpy(key, next, t->key_size);
		first = false;
		if (t->n == t->cap && table_reserve(t, t->cap * 2))
			return -ENOMEM;
		if (bpf_map_lookup_elem(fd, key, (char *)t->values + t->n * t->value_size))
			continue; /* deleted meanwhile */
		memcpy((char *)t->keys + t->n * t->key_size, key, t->key_size);
		t->n++;
	}
	return 0;
}

/* The programs count returns only in the histogram (cuda_agg.h): its sum is the count. */
static void fill_returns(struct agg_table *t)
{
	struct agg_api_stats *stats = t->values;

	for (size_t i = 0; i < t->n; i++) {
		stats[i].returns = 0;
		for (int b = 0; b < AGG_HIST_BUCKETS; b++)
			stats[i].returns += stats[i].hist[b];
	}
}

int cuda_agg_read(struct cuda_agg *a, enum cuda_agg_map which, struct agg_table *t)
{
	int fd = map_fd_of(a, which);
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info), count, batch = 0;
	bool more = true, first = true;
	int err;

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	t->key_size = info.key_size;
	t->value_size = info.value_size;
	t->n = 0;
	/* room for the whole map: a batch read never needs to grow mid-way */
	if (table_reserve(t, info.max_entries))
		return -ENOMEM;
	while (more) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		count = (__u32)(t->cap - t->n);
		if (!count)
			break;
		err = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch,
					   (char *)t->keys + t->n * t->key_size,
					   (char *)t->values + t->n * t->value_size, &count, &opts);
		if (err && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == 524 /* ENOTSUPP */)) {
				t->n = 0;
				err = read_key_by_key(fd, t);
				if (!err && which == CUDA_AGG_APIS)
					fill_returns(t);
				return err;
			}
			return -errno;
		}
		t->n += count;
		more = !err;
		first = false;
	}
	if (which == CUDA_AGG_APIS)
		fill_returns(t);
	return 0;
}

void cuda_agg_delete(struct cuda_agg *a, enum cuda_agg_map which, const struct agg_table *t,
		     bool (*is_gone)(void *ctx, uint32_t tgid), void *ctx)
{
	int fd = map_fd_of(a, which);
	bool deleted = false;

	for (size_t i = 0; i < t->n; i++) {
		const void *key = (const char *)t->keys + i * t->key_size;

		if (is_gone(ctx, *(const uint32_t *)key))
			deleted |= bpf_map_delete_elem(fd, key) == 0;
	}
	/* threads that cached their process as counted look again (agg_enter) */
	if (deleted && which == CUDA_AGG_PROCS)
		__atomic_add_fetch(&a->skel->bss->procs_generation, 1, __ATOMIC_RELEASE);
}

static uint64_t loss(struct cuda_agg *a, __u32 slot)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t total = 0;

	if (ncpus <= 0)
		return 0;
	{
		__u64 values[ncpus];

		if (bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.losses), &slot, values))
			return 0;
		for (int i = 0; i < ncpus; i++)
			total += values[i];
	}
	return total;
}

static void add_run_time(struct bpf_program *p, struct cuda_agg_health *out)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len)) {
		out->bpf_run_ns += info.run_time_ns;
		out->bpf_runs += info.run_cnt;
	}
}

void cuda_agg_health(struct cuda_agg *a, struct cuda_agg_health *out)
{
	memset(out, 0, sizeof(*out));
	out->lost_counts = loss(a, AGG_LOST_API) + loss(a, AGG_LOST_LAUNCH) + loss(a, AGG_LOST_PROC) +
			   loss(a, AGG_LOST_NESTED);
	out->lost_events = loss(a, AGG_LOST_EVENT);
	out->lost_allocs = loss(a, AGG_LOST_ALLOC);
	add_run_time(a->skel->progs.agg_enter, out);
	add_run_time(a->skel->progs.agg_exit, out);
	add_run_time(a->skel->progs.agg_process_exit, out);
	add_run_time(a->skel->progs.agg_process_exec, out);
	out->refused = a->refused;
}
