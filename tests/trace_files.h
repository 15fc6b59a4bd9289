/* Temporary directories and whole-file reads for the trace tests. */
#ifndef GRT_TRACE_FILES_H
#define GRT_TRACE_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct test_dir {
	char path[64];
};

/* A fresh directory under /tmp; aborts when none can be made (nothing else can run then). */
static inline void test_dir_make(struct test_dir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/grt-test-XXXXXX");
	if (!mkdtemp(d->path)) {
		perror("mkdtemp");
		abort();
	}
}

static inline void test_dir_file(const struct test_dir *d, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", d->path, name);
}

/* Removes the directory and the plain files in it. */
static inline void test_dir_remove(struct test_dir *d)
{
	DIR *dir = opendir(d->path);
	struct dirent *e;
	char path[512];

	while (dir && (e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->path, e->d_name);
		unlink(path);
	}
	if (dir)
		closedir(dir);
	rmdir(d->path);
}

/* The whole file in a malloc'd buffer of exactly its size (ASan sees any overread). */
static inline unsigned char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long size;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc(size ? (size_t)size : 1);
		if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		}
		*len = buf ? (size_t)size : 0;
	}
	fclose(f);
	return buf;
}

static inline int test_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

#endif
