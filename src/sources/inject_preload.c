/* The launched command's LD_PRELOAD of libgrtrace-inject.so, shared by the gpu and cuda sources. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

int inject_add_env(struct grt_session *s, const char *key, const char *value)
{
	char kv[PATH_MAX * 2 + 64];

	snprintf(kv, sizeof(kv), "%s=%s", key, value);
	return grt_session_add_target_env(s, kv);
}

int inject_preload(struct grt_session *s, const char *lib)
{
	const char *preload = getenv("LD_PRELOAD");
	char value[PATH_MAX * 2];

	for (const char *const *e = grt_session_target_env(s); *e; e++)
		if (!strncmp(*e, "LD_PRELOAD=", 11))
			return 0;
	snprintf(value, sizeof(value), "%s%s%s", lib, preload && *preload ? ":" : "",
		 preload ? preload : "");
	return inject_add_env(s, "LD_PRELOAD", value);
}
