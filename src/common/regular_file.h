/* Opening a file a user or a traced program named: a regular file, never a FIFO or a device. */
#ifndef GRT_REGULAR_FILE_H
#define GRT_REGULAR_FILE_H

#include <errno.h>
#include <sys/stat.h>

/* What regular_file_open returns for a FIFO, device, socket or directory. */
#define REGULAR_FILE_NOT_REGULAR (-EINVAL)

/*
 * Opens path read-only without blocking (a FIFO with no writer would hang a
 * plain open), checks with fstat that it is a regular file, then turns
 * O_NONBLOCK off again. Fills st when given. Returns the fd (O_CLOEXEC) or a
 * negative errno: REGULAR_FILE_NOT_REGULAR for anything but a regular file.
 */
int regular_file_open(const char *path, struct stat *st);

/* The one-line reason for a regular_file_open error ("not a regular file", strerror otherwise). */
const char *regular_file_error(int err);

#endif
