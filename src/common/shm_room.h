/*
 * Memory for shared files in /dev/shm, said once for the recorder (the rings it makes) and the
 * inject library (the ring pages a thread takes): how much room is free, and giving a file's
 * pages their memory before anyone writes them.
 */
#ifndef GRT_SHM_ROOM_H
#define GRT_SHM_ROOM_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/statvfs.h>

/* Bytes free for an unprivileged writer on the file system of path, or UINT64_MAX when unknown. */
static inline uint64_t shm_room(const char *path)
{
	struct statvfs fs;

	if (statvfs(path, &fs))
		return UINT64_MAX;
	return (uint64_t)fs.f_bavail * fs.f_frsize;
}

/*
 * Gives len bytes of fd from off their memory now: 0, or -errno (-ENOSPC where there is no
 * room). A file system without fallocate (not tmpfs) gives memory as it is written: 0.
 */
static inline int shm_allocate(int fd, uint64_t off, uint64_t len)
{
	if (fallocate(fd, 0, (off_t)off, (off_t)len) && errno != EOPNOTSUPP)
		return -errno;
	return 0;
}

#endif
