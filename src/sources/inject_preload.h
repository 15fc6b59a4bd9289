/* Puts libgrtrace-inject.so into a launched command, once, for whichever sources need it. */
#ifndef GRT_INJECT_PRELOAD_H
#define GRT_INJECT_PRELOAD_H

#include <stddef.h>
#include <stdint.h>

struct grt_session;

/* Where the library is: beside grtrace, ../lib/grtrace/, or $GRTRACE_INJECT_LIB. 0 or -ENOENT. */
int gpu_find_inject_lib(char *out, size_t len);

/*
 * LD_PRELOAD of the launched command names the library ahead of what the
 * user set; a second source asking again changes nothing. 0 or -errno.
 */
int inject_preload(struct grt_session *s, const char *lib);

/*
 * A new shared file /dev/shm/grtrace-KIND-PID-XXXXXX of len bytes, mapped:
 * its name in path, its mapping in *map. Its first `reserve` bytes are
 * given their memory now: a page of a full /dev/shm (a container's is often
 * 64 MiB) has none the first time it is written, and whoever writes it, the
 * traced program included, is killed by SIGBUS. 0 or -errno, -ENOSPC where
 * there is no room (path[0] is 0 when no file was made; otherwise the caller
 * unlinks it).
 */
int inject_shm_create(const char *kind, uint64_t len, uint64_t reserve, char *path,
		      size_t path_len, void **map);

/* K=V in the launched command's environment. 0 or -errno. */
int inject_add_env(struct grt_session *s, const char *key, const char *value);

#endif
