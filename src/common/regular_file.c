/* Opening a file a user or a traced program named: a regular file, never a FIFO or a device. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "common/regular_file.h"

int regular_file_open(const char *path, struct stat *st)
{
	struct stat own;
	int fd, flags;

	if (!st)
		st = &own;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return REGULAR_FILE_NOT_REGULAR;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

const char *regular_file_error(int err)
{
	return err == REGULAR_FILE_NOT_REGULAR ? "not a regular file" : strerror(-err);
}
