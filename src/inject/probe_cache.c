/* On-disk cache of compiled instrumented modules. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "inject/probe_cache.h"

#define CACHE_MAX_IMAGE (256u << 20)

uint64_t probe_cache_hash(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

void probe_cache_path(const char *dir, const struct probe_cache_key *key, char *out, size_t out_len)
{
	snprintf(out, out_len, "%s/probe-%016llx-%llu-sm%u-drv%d.cubin", dir,
		 (unsigned long long)key->ptx_hash, (unsigned long long)key->ptx_len, key->arch,
		 key->driver_version);
}

int probe_cache_load(const char *dir, const struct probe_cache_key *key, void **image, size_t *len)
{
	char path[1024];
	struct stat sb;
	size_t got = 0;
	void *buf;
	int fd;

	probe_cache_path(dir, key, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || sb.st_size <= 0 || (uint64_t)sb.st_size > CACHE_MAX_IMAGE) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)sb.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t n = read(fd, (char *)buf + got, (size_t)sb.st_size - got);

		if (n <= 0) {
			free(buf);
			close(fd);
			return n < 0 ? -errno : -EIO;
		}
		got += (size_t)n;
	}
	close(fd);
	*image = buf;
	*len = got;
	return 0;
}

static int make_dirs(const char *dir)
{
	char path[1024];
	size_t len = strlen(dir);

	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int probe_cache_store(const char *dir, const struct probe_cache_key *key, const void *image,
		      size_t len)
{
	char path[1024], tmp[1100];
	size_t done = 0;
	int fd, err;

	if ((err = make_dirs(dir)))
		return err;
	probe_cache_path(dir, key, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, (const char *)image + done, len - done);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			close(fd);
			unlink(tmp);
			return err;
		}
		done += (size_t)n;
	}
	if (close(fd) || rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	return 0;
}
