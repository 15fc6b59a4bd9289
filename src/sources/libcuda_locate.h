/* Finding the libcuda.so.1 a process uses, or will use, the way the dynamic loader would. */
#ifndef GRT_LIBCUDA_LOCATE_H
#define GRT_LIBCUDA_LOCATE_H

#include <stddef.h>
#include <sys/types.h>

#define LIBCUDA_SONAME "libcuda.so.1"

/*
 * The path of the libcuda.so.1 mapped into pid, reachable from this process
 * (through /proc/PID/root when the target lives in another mount namespace).
 * Returns 0, -ENOENT when none is mapped, or -ESRCH when pid does not exist.
 */
int libcuda_find_in_process(pid_t pid, char *out, size_t len);

/*
 * The libcuda.so.1 a command started with environment env (NULL: ours) would
 * load: LD_LIBRARY_PATH, then the loader cache (ldconfig -p), then the
 * default directories. Returns 0 or -ENOENT.
 */
int libcuda_find_for_launch(const char *const *env, char *out, size_t len);

/* Every directory searched by libcuda_find_for_launch, for the error message. */
const char *libcuda_search_description(void);

/*
 * Where the dynamic loader would find soname for a program with environment
 * env (NULL: this process's): LD_LIBRARY_PATH, the loader cache, the default
 * directories. A path, never a load. 0 or -ENOENT.
 */
int library_find_for_launch(const char *soname, const char *const *env, char *out, size_t len);

#endif
