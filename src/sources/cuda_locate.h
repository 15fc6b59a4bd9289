/* Finding libcuda: the copies a process maps, or the one the dynamic loader would pick. */
#ifndef GRT_CUDA_LOCATE_H
#define GRT_CUDA_LOCATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether path's file name is a libcuda.so[.N...] (not libcudart, libcudnn, ...). */
bool cuda_is_libcuda_path(const char *path);

struct cuda_lib_found {
	char path[PATH_MAX];	/* as the process sees it: for messages */
	char open_path[PATH_MAX]; /* the same file reachable from here (its /proc/PID/map_files link) */
};

/*
 * Calls fn once per distinct libcuda file mapped executable in pid. Returns
 * how many were found, fn's first non-zero return, or a negative errno when
 * pid's maps cannot be read.
 */
int cuda_locate_in_pid(pid_t pid, int (*fn)(const struct cuda_lib_found *lib, void *ctx), void *ctx);

/* libcuda.so.1 from the loader cache (ldconfig -p) into path; 0 or -ENOENT. */
int cuda_locate_in_loader_cache(char *path, size_t len);

#endif
