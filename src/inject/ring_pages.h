/* A call ring's data area made its thread's to write before the thread's first record. */
#ifndef GRT_INJECT_RING_PAGES_H
#define GRT_INJECT_RING_PAGES_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Gives the len bytes at addr, a MAP_SHARED mapping of the rings file from
 * offset off, their memory and maps them for writing, so that no write
 * there faults later: true, or false where the file system has no room (a
 * write would have killed the application with SIGBUS). Unless taken is
 * true (an earlier owner took them: no more room is used), false too where
 * taking them would leave the file system less free than len: the traced
 * program may need /dev/shm itself.
 */
bool ring_pages_take(void *addr, uint64_t len, uint64_t off, bool taken);

/*
 * At load: the rings file's path (false when it is too long to keep) and
 * the tests' GRTRACE_INJECT_RING_PAGES (ring_pages.c).
 */
bool ring_pages_load(const char *path);

#endif
