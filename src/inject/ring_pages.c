/*
 * A call ring's data area made its thread's before the thread writes it.
 *
 * The rings file in /dev/shm is sparse: its pages get memory the first
 * time they are written, by the traced thread, in the middle of a CUDA
 * call. Where /dev/shm is full (a container's is often 64 MiB, shared with
 * the program's own shared memory) that write raises SIGBUS and the program
 * dies; where it is not, each page costs the thread a fault (1 to 10 us, one
 * per 42 short launch records) during its ring's first lap. Taken at once
 * when the thread claims the ring, the pages either all exist and are
 * mapped, or the thread records nothing and its calls are counted lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/shm_room.h"
#include "inject/ring_pages.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/*
 * GRTRACE_INJECT_RING_PAGES, for the tests: "fallocate" takes the pages as
 * a kernel without MADV_POPULATE_WRITE must, "no-margin" takes the last of
 * /dev/shm (the reservation itself then fails).
 */
static bool no_populate, no_margin;
/* The rings file, where a claimed ring's pages get their memory on kernels before 5.14. */
static char rings_path[PATH_MAX];

bool ring_pages_load(const char *path)
{
	const char *v = getenv("GRTRACE_INJECT_RING_PAGES");

	no_populate = v && strstr(v, "fallocate");
	no_margin = v && strstr(v, "no-margin");
	return (size_t)snprintf(rings_path, sizeof(rings_path), "%s", path) < sizeof(rings_path);
}

/* The pages' memory through the file: they still fault in, one by one, but never for lack of room. */
static bool allocate_in_file(uint64_t off, uint64_t len)
{
	int fd = open(rings_path, O_RDWR | O_CLOEXEC), err;

	if (fd < 0)
		return false;
	err = shm_allocate(fd, off, len);
	close(fd);
	return !err;
}

bool ring_pages_take(void *addr, uint64_t len, uint64_t off, bool taken)
{
	if (!taken && !no_margin && shm_room(rings_path) < 2 * len)
		return false;
	if (!no_populate) {
		if (!madvise(addr, len, MADV_POPULATE_WRITE))
			return true;
		/* EFAULT: a page had no room (SIGBUS, had it been written); ENOMEM, EINTR: none */
		if (errno != EINVAL)
			return false;
	}
	return allocate_in_file(off, len);
}
