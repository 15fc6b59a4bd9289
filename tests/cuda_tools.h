/* Test helpers around the CUDA toolkit (nvcc, ptxas) and files, for the fatbin and PTX tests. */
#ifndef GRT_TEST_CUDA_TOOLS_H
#define GRT_TEST_CUDA_TOOLS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The toolkit's bin directory when its nvcc is not on PATH. */
#define CUDA_BIN "/usr/local/cuda/bin"

/* A shell-usable path to tool (nvcc, ptxas), or NULL when the toolkit is absent. */
static const char *cuda_tool(const char *tool)
{
	static char path[2][256];
	char cmd[300];
	int slot = strcmp(tool, "nvcc") ? 1 : 0;

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	if (!system(cmd))
		return tool;
	snprintf(path[slot], sizeof(path[slot]), CUDA_BIN "/%s", tool);
	return access(path[slot], X_OK) ? NULL : path[slot];
}

/* Runs a shell command built from fmt; returns its exit status (-1 when it could not run). */
static inline int run_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int run_cmd(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc)
		printf("  command failed (%d): %s\n", rc, cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

/* The whole file in a malloc'd, NUL-terminated buffer, or NULL. */
static inline char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)size + 1);
		if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[size] = 0;
			if (len)
				*len = (size_t)size;
		}
	}
	fclose(f);
	return buf;
}

static inline bool spit(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(data, 1, len, f) == len;
	return !fclose(f) && ok;
}

/* A fresh scratch directory under $TMPDIR (removed by scratch_remove). */
static inline bool scratch_make(char *dir, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, size, "%s/grt-ptx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) != NULL;
}

static inline void scratch_remove(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("  could not remove %s\n", dir);
}

/*
 * ptxas for sm_<arch> over len bytes of PTX text: its exit status (-1 when it
 * could not run), 0 without a toolkit (the caller's text checks still ran).
 */
static inline int ptxas_text(const char *ptx, size_t len, unsigned arch)
{
	const char *ptxas = cuda_tool("ptxas");
	char dir[256], path[300];
	int rc = -1;

	if (!ptxas)
		return 0;
	if (!scratch_make(dir, sizeof(dir)))
		return -1;
	snprintf(path, sizeof(path), "%s/t.ptx", dir);
	if (spit(path, ptx, len))
		rc = run_cmd("%s -arch=sm_%u -o /dev/null %s", ptxas, arch, path);
	scratch_remove(dir);
	return rc;
}

#endif
