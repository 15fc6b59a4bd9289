/* Every libcuda copy a process maps, through /proc/PID/maps (for the first probe and rescans). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sources/cuda_locate.h"
#include "sources/proc_maps.h"

#define MAX_COPIES 8

bool cuda_is_libcuda_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libcuda.so", 10) && (base[10] == 0 || base[10] == '.');
}

void proc_mapping_open_path(pid_t pid, const struct proc_mapping *m, char *out, size_t len)
{
	snprintf(out, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start, m->end);
	if (access(out, R_OK))
		snprintf(out, len, "%s", m->path);
}

struct locate_walk {
	pid_t pid;
	int (*fn)(const struct cuda_lib_found *lib, void *ctx);
	void *ctx;
	uint64_t inodes[MAX_COPIES]; /* seen already: a library maps several segments */
	int found;
};

static int locate_one(const struct proc_mapping *m, void *ctx)
{
	struct locate_walk *w = ctx;
	struct cuda_lib_found *lib;
	int rc;

	if (!m->executable || !m->inode || !cuda_is_libcuda_path(m->path))
		return 0;
	for (int i = 0; i < w->found && i < MAX_COPIES; i++)
		if (w->inodes[i] == m->inode)
			return 0;
	if (w->found < MAX_COPIES)
		w->inodes[w->found] = m->inode;
	w->found++;
	lib = malloc(sizeof(*lib));
	if (!lib)
		return -ENOMEM;
	snprintf(lib->path, sizeof(lib->path), "%s", m->path);
	proc_mapping_open_path(w->pid, m, lib->open_path, sizeof(lib->open_path));
	rc = w->fn(lib, w->ctx);
	free(lib);
	return rc;
}

int cuda_locate_in_pid(pid_t pid, int (*fn)(const struct cuda_lib_found *lib, void *ctx), void *ctx)
{
	struct locate_walk w = {.pid = pid, .fn = fn, .ctx = ctx};
	int rc = proc_maps_foreach(pid, locate_one, &w);

	return rc ? rc : w.found;
}
