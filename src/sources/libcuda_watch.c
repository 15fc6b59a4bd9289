/* System-wide libcuda discovery: a scan of /proc at start, then exec and dlopen notifications. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/clock.h"
#include "common/u64_map.h"
#include "sources/bpf_util.h"
#include "sources/cuda_locate.h"
#include "sources/elf_symbols.h"
#include "sources/libcuda_locate.h"
#include "sources/libcuda_watch.h"
#include "sources/proc_maps.h"
#include "libcuda_watch.skel.h"

#define DEFAULT_RESCAN_S 30.0
#define MAX_FILES 64

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct libcuda_watch {
	struct libcuda_watch_config cfg;
	struct libcuda_watch_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link *exec_link, *fork_link;
	struct bpf_link *loader_links[MAX_FILES];
	int own_pid_map_fd;
	int pid_map_fd;
	struct file_id libs[MAX_FILES], loaders[MAX_FILES];
	unsigned nlibs, nloaders;
	struct u64_map pending; /* tgids to look at on the next poll */
	uint64_t next_rescan_ns;
	unsigned long long drops_seen;
	struct libcuda_watch_stats stats;
};

static bool seen_file(struct file_id *set, unsigned *n, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return true; /* unreadable: nothing to do with it */
	for (unsigned i = 0; i < *n; i++)
		if (set[i].dev == st.st_dev && set[i].ino == st.st_ino)
			return true;
	if (*n == MAX_FILES)
		return true;
	set[(*n)++] = (struct file_id){st.st_dev, st.st_ino};
	return false;
}

static void offer_library(struct libcuda_watch *w, const char *open_path, const char *shown_path)
{
	int err;

	if (seen_file(w->libs, &w->nlibs, open_path))
		return;
	w->stats.libraries++;
	err = w->cfg.found(w->cfg.ctx, open_path, shown_path);
	if (err < 0)
		w->stats.last_error = err;
}

/* "ld-linux-x86-64.so.2", "ld-2.31.so", "ld-musl-x86_64.so.1": the dynamic loader */
static bool is_loader_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "ld-", 3) && strstr(base, ".so");
}

static void probe_loader(struct libcuda_watch *w, const char *open_path)
{
	const char *name = "_dl_debug_state";
	uint64_t offset = 0;
	struct bpf_link *link;

	if (seen_file(w->loaders, &w->nloaders, open_path))
		return;
	if (elf_find_functions(open_path, &name, 1, &offset) != 1 || !offset)
		return; /* a loader without the debugger hook (musl): exec and rescans cover it */
	elf_skip_landing_pads(open_path, &offset, 1);
	link = bpf_program__attach_uprobe(w->skel->progs.watch_loader, false, -1, open_path,
					  offset);
	if (!link)
		return;
	w->loader_links[w->stats.loaders++] = link;
}

struct scan {
	struct libcuda_watch *w;
	pid_t pid;
	char open_path[PATH_MAX];
};

static int scan_mapping(const struct proc_mapping *m, void *ctx)
{
	struct scan *s = ctx;
	bool cuda = cuda_is_libcuda_path(m->path), loader = is_loader_path(m->path);

	if (!m->executable || !m->inode || (!cuda && !loader))
		return 0;
	proc_mapping_open_path(s->pid, m, s->open_path, sizeof(s->open_path));
	if (cuda)
		offer_library(s->w, s->open_path, m->path);
	else
		probe_loader(s->w, s->open_path);
	return 0;
}

static void scan_process(struct libcuda_watch *w, pid_t pid)
{
	struct scan *s;

	if (pid == getpid() || !(s = malloc(sizeof(*s))))
		return;
	s->w = w;
	s->pid = pid;
	w->stats.process_scans++;
	proc_maps_foreach(pid, scan_mapping, s); /* a process gone meanwhile is no error */
	free(s);
}

static void scan_all(struct libcuda_watch *w)
{
	__u32 key, next, *prev = NULL;
	struct dirent *d;
	DIR *proc;

	if (w->pid_map_fd >= 0) {
		while (!bpf_map_get_next_key(w->pid_map_fd, prev, &next)) {
			key = next;
			prev = &key;
			scan_process(w, (pid_t)key);
		}
		return;
	}
	if (!(proc = opendir("/proc")))
		return;
	while ((d = readdir(proc)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			scan_process(w, (pid_t)atoi(d->d_name));
	closedir(proc);
}

static int on_look_at(void *ctx, void *data, size_t len)
{
	struct libcuda_watch *w = ctx;

	/* a burst of dlopen()s (a framework's import) is one look per poll */
	if (len >= sizeof(__u32))
		u64_map_put(&w->pending, *(__u32 *)data, 1);
	return 0;
}

static int use_pid_filter(struct libcuda_watch *w)
{
	__u8 one = 1;

	w->pid_map_fd = w->cfg.pid_map_fd;
	if (w->pid_map_fd < 0) {
		w->own_pid_map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "traced_tgids",
						   sizeof(__u32), sizeof(__u8), 8192, NULL);
		if (w->own_pid_map_fd < 0)
			return -errno;
		w->pid_map_fd = w->own_pid_map_fd;
	}
	for (unsigned i = 0; i < w->cfg.npids; i++) {
		__u32 tgid = (__u32)w->cfg.pids[i];

		if (bpf_map_update_elem(w->pid_map_fd, &tgid, &one, BPF_ANY))
			return -errno;
	}
	w->skel->rodata->filter_by_tgid = true;
	return bpf_map__reuse_fd(w->skel->maps.traced_tgids, w->pid_map_fd);
}

static int load(struct libcuda_watch *w, char *why, size_t why_len)
{
	int err;

	w->skel = libcuda_watch_bpf__open();
	if (!w->skel) {
		snprintf(why, why_len, "cannot open the discovery BPF object: %s", strerror(errno));
		return -errno;
	}
	w->skel->rodata->self_tgid = (__u32)getpid();
	err = w->cfg.npids ? use_pid_filter(w) : 0;
	if (!err)
		err = libcuda_watch_bpf__load(w->skel);
	if (!err) {
		w->exec_link = bpf_program__attach(w->skel->progs.watch_exec);
		w->fork_link = bpf_program__attach(w->skel->progs.watch_fork);
		if (!w->exec_link || !w->fork_link)
			err = -errno;
	}
	if (!err) {
		w->ring = ring_buffer__new(bpf_map__fd(w->skel->maps.look_at), on_look_at, w, NULL);
		if (!w->ring)
			err = -errno;
	}
	if (err)
		snprintf(why, why_len, "loading the libcuda discovery probes failed: %s",
			 grt_bpf_last_message()[0] ? grt_bpf_last_message() : strerror(-err));
	return err;
}

int libcuda_watch_start(struct libcuda_watch **out, const struct libcuda_watch_config *cfg,
			char *why, size_t why_len)
{
	struct libcuda_watch *w = calloc(1, sizeof(*w));
	char cached[PATH_MAX];
	int err;

	if (!w)
		return -ENOMEM;
	w->cfg = *cfg;
	w->own_pid_map_fd = -1;
	w->pid_map_fd = -1;
	u64_map_init(&w->pending);
	err = load(w, why, why_len);
	if (err) {
		libcuda_watch_stop(w);
		return err;
	}
	for (unsigned i = 0; i < cfg->nextra; i++)
		offer_library(w, cfg->extra_paths[i], cfg->extra_paths[i]);
	if (!cfg->skip_loader_search && !libcuda_find_for_launch(NULL, cached, sizeof(cached)))
		offer_library(w, cached, cached);
	scan_all(w);
	w->next_rescan_ns = grt_monotonic_ns() + (uint64_t)((cfg->rescan_s > 0 ? cfg->rescan_s
										 : DEFAULT_RESCAN_S) *
								  1e9);
	*out = w;
	return 0;
}

int libcuda_watch_fd(const struct libcuda_watch *w)
{
	return ring_buffer__epoll_fd(w->ring);
}

int libcuda_watch_pid_map_fd(const struct libcuda_watch *w)
{
	return w->pid_map_fd;
}

bool libcuda_watch_covers(const struct libcuda_watch *w, pid_t tgid)
{
	__u32 key = (__u32)tgid;
	__u8 v;

	return w->pid_map_fd < 0 || !bpf_map_lookup_elem(w->pid_map_fd, &key, &v);
}

void libcuda_watch_poll(struct libcuda_watch *w)
{
	uint64_t tgid, now;

	ring_buffer__consume(w->ring);
	w->stats.lost_events +=
	    grt_bpf_new_drops(bpf_map__fd(w->skel->maps.dropped_events), &w->drops_seen);
	for (size_t i = 0; u64_map_iter(&w->pending, &i, &tgid, NULL);)
		scan_process(w, (pid_t)tgid);
	u64_map_destroy(&w->pending);
	u64_map_init(&w->pending);
	now = grt_monotonic_ns();
	if (now >= w->next_rescan_ns) {
		scan_all(w);
		w->next_rescan_ns =
		    now + (uint64_t)((w->cfg.rescan_s > 0 ? w->cfg.rescan_s : DEFAULT_RESCAN_S) *
				     1e9);
	}
}

void libcuda_watch_stats(const struct libcuda_watch *w, struct libcuda_watch_stats *out)
{
	*out = w->stats;
}

void libcuda_watch_stop(struct libcuda_watch *w)
{
	if (!w)
		return;
	ring_buffer__free(w->ring);
	for (uint64_t i = 0; i < w->stats.loaders; i++)
		bpf_link__destroy(w->loader_links[i]);
	bpf_link__destroy(w->exec_link);
	bpf_link__destroy(w->fork_link);
	libcuda_watch_bpf__destroy(w->skel);
	if (w->own_pid_map_fd >= 0)
		close(w->own_pid_map_fd);
	u64_map_destroy(&w->pending);
	free(w);
}
