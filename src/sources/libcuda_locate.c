/* Finds libcuda.so.1 in a running process's mappings or along the loader's search order. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sources/cuda_locate.h"
#include "sources/libcuda_locate.h"

static const char *const default_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

static int copy_path(char *out, size_t len, const char *path)
{
	if (strlen(path) >= len)
		return -ENAMETOOLONG;
	strcpy(out, path);
	return 0;
}

struct first_copy {
	char *out;
	size_t len;
	int err;
};

/* Keeps the first copy, by the path that reaches the very file mapped. */
static int keep_first(const struct cuda_lib_found *lib, void *ctx)
{
	struct first_copy *f = ctx;

	/* the map_files link is exactly the mapped inode; the path could name another file by now */
	f->err = copy_path(f->out, f->len, lib->open_path);
	return 1; /* one is enough */
}

int libcuda_find_in_process(pid_t pid, char *out, size_t len)
{
	struct first_copy first = { .out = out, .len = len, .err = -ENOENT };
	int found = cuda_locate_in_pid(pid, keep_first, &first);

	if (found == -ENOENT)
		return -ESRCH;
	return found < 0 ? found : first.err;
}

static const char *env_value(const char *const *env, const char *name)
{
	size_t n = strlen(name);

	if (!env)
		return getenv(name);
	for (; *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int try_dir(const char *dir, const char *soname, char *out, size_t len)
{
	char path[PATH_MAX];

	if (!*dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", dir, soname);
	return access(path, R_OK) == 0 ? copy_path(out, len, path) : -ENOENT;
}

static int search_library_path(const char *list, const char *soname, char *out, size_t len)
{
	char *copy, *dir, *save = NULL;
	int err = -ENOENT;

	if (!list || !(copy = strdup(list)))
		return -ENOENT;
	for (dir = strtok_r(copy, ":;", &save); dir && err; dir = strtok_r(NULL, ":;", &save))
		err = try_dir(dir, soname, out, len);
	free(copy);
	return err;
}

/* "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1" */
static int search_loader_cache(const char *soname, char *out, size_t len)
{
	static const char *const ldconfig[] = { "/sbin/ldconfig", "/usr/sbin/ldconfig" };
	char line[PATH_MAX + 128], cmd[64];
	int err = -ENOENT;

	for (size_t i = 0; i < 2 && err; i++) {
		FILE *p;

		if (access(ldconfig[i], X_OK))
			continue;
		snprintf(cmd, sizeof(cmd), "%s -p 2>/dev/null", ldconfig[i]);
		p = popen(cmd, "re");
		if (!p)
			continue;
		while (err && fgets(line, sizeof(line), p)) {
			char *arrow = strstr(line, " => ");

			if (!arrow || strncmp(line + strspn(line, " \t"), soname, strlen(soname)) ||
			    strncmp(line + strspn(line, " \t") + strlen(soname), " (", 2) ||
			    !strstr(line, "x86-64"))
				continue;
			arrow[strcspn(arrow, "\n")] = 0;
			if (access(arrow + 4, R_OK) == 0)
				err = copy_path(out, len, arrow + 4);
		}
		pclose(p);
		if (!err)
			break;
	}
	return err;
}

int library_find_for_launch(const char *soname, const char *const *env, char *out, size_t len)
{
	if (!search_library_path(env_value(env, "LD_LIBRARY_PATH"), soname, out, len))
		return 0;
	if (!search_loader_cache(soname, out, len))
		return 0;
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++)
		if (!try_dir(default_dirs[i], soname, out, len))
			return 0;
	return -ENOENT;
}

int libcuda_find_for_launch(const char *const *env, char *out, size_t len)
{
	return library_find_for_launch(LIBCUDA_SONAME, env, out, len);
}

const char *libcuda_search_description(void)
{
	return "LD_LIBRARY_PATH, the loader cache, /lib and /usr/lib";
}
