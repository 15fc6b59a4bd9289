/* The launched command's LD_PRELOAD of libgrtrace-inject.so, shared by the gpu and cuda sources. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/shm_room.h"
#include "sources/inject_preload.h"
#include "sources/session.h"

#define INJECT_LIB_NAME "libgrtrace-inject.so"

int gpu_find_inject_lib(char *out, size_t len)
{
	const char *env = getenv("GRTRACE_INJECT_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	snprintf(out, len, "%s/%s", exe, INJECT_LIB_NAME);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, len, "%s/../lib/grtrace/%s", exe, INJECT_LIB_NAME);
	return access(out, R_OK) ? -ENOENT : 0;
}

int inject_shm_create(const char *kind, uint64_t len, uint64_t reserve, char *path,
		      size_t path_len, void **map)
{
	int fd, err = 0;

	snprintf(path, path_len, "/dev/shm/grtrace-%s-%d-XXXXXX", kind, (int)getpid());
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		path[0] = 0;
		return -errno;
	}
	if (ftruncate(fd, (off_t)len))
		err = -errno;
	if (!err && reserve)
		err = shm_allocate(fd, 0, reserve);
	*map = err ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!err && *map == MAP_FAILED)
		err = -errno;
	close(fd);
	if (err)
		*map = NULL;
	return err;
}

int inject_add_env(struct grt_session *s, const char *key, const char *value)
{
	char kv[PATH_MAX * 2 + 64];

	snprintf(kv, sizeof(kv), "%s=%s", key, value);
	return grt_session_add_target_env(s, kv);
}

/*
 * A sanitizer build of grtrace preloads a sanitizer build of the library
 * into targets that lack the runtime: the runtime must be told not to
 * refuse that, and the library's state lives until exit by design. Release
 * builds leave the target's ASAN_OPTIONS alone.
 */
static int allow_sanitized_library(struct grt_session *s)
{
#if defined(__SANITIZE_ADDRESS__)
	const char *was = getenv("ASAN_OPTIONS");
	char value[1024];

	snprintf(value, sizeof(value), "%s%sverify_asan_link_order=0:detect_leaks=0",
		 was ? was : "", was && *was ? ":" : "");
	return inject_add_env(s, "ASAN_OPTIONS", value);
#else
	(void)s;
	return 0;
#endif
}

int inject_preload(struct grt_session *s, const char *lib)
{
	const char *preload = getenv("LD_PRELOAD");
	char value[PATH_MAX * 2];
	int err;

	for (const char *const *e = grt_session_target_env(s); *e; e++)
		if (!strncmp(*e, "LD_PRELOAD=", 11))
			return 0;
	snprintf(value, sizeof(value), "%s%s%s", lib, preload && *preload ? ":" : "",
		 preload ? preload : "");
	err = inject_add_env(s, "LD_PRELOAD", value);
	return err ? err : allow_sanitized_library(s);
}
