/* Locating libcuda.so.1 through /proc/PID/maps and the loader cache. */
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
	/*
	 * The map_files link reaches the very file mapped, from any mount
	 * namespace and even after it was replaced on disk.
	 */
	snprintf(lib->open_path, sizeof(lib->open_path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)w->pid, m->start, m->end);
	if (access(lib->open_path, R_OK))
		snprintf(lib->open_path, sizeof(lib->open_path), "%s", m->path);
	rc = w->fn(lib, w->ctx);
	free(lib);
	return rc;
}

int cuda_locate_in_pid(pid_t pid, int (*fn)(const struct cuda_lib_found *lib, void *ctx), void *ctx)
{
	struct locate_walk w = { .pid = pid, .fn = fn, .ctx = ctx };
	int rc = proc_maps_foreach(pid, locate_one, &w);

	return rc ? rc : w.found;
}

/* "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1" */
static bool cache_line_path(const char *line, char *path, size_t len)
{
	const char *arrow = strstr(line, " => ");
	size_t n;

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, "libcuda.so.1 ", 13) || !arrow || !strstr(line, "x86-64"))
		return false;
	arrow += 4;
	n = strcspn(arrow, "\n");
	if (!n || n >= len)
		return false;
	memcpy(path, arrow, n);
	path[n] = 0;
	return true;
}

int cuda_locate_in_loader_cache(char *path, size_t len)
{
	static const char *const ldconfigs[] = { "/sbin/ldconfig", "/usr/sbin/ldconfig" };
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	for (size_t i = 0; i < 2 && !found; i++) {
		char cmd[64];
		FILE *p;

		if (access(ldconfigs[i], X_OK))
			continue;
		snprintf(cmd, sizeof(cmd), "%s -p 2>/dev/null", ldconfigs[i]);
		p = popen(cmd, "re");
		if (!p)
			continue;
		while (!found && getline(&line, &cap, p) > 0)
			found = cache_line_path(line, path, len);
		pclose(p);
	}
	free(line);
	return found ? 0 : -ENOENT;
}
