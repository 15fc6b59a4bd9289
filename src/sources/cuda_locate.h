/* Finding every copy of libcuda a process maps (libcuda_locate.h finds the loader's choice). */
#ifndef GRT_CUDA_LOCATE_H
#define GRT_CUDA_LOCATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether path's file name is a libcuda.so[.N...] (not libcudart, libcudnn, ...). */
bool cuda_is_libcuda_path(const char *path);

struct proc_mapping;

/*
 * Where this process reaches the file of mapping m of pid: its
 * /proc/PID/map_files link (the very file mapped, from any mount namespace,
 * even after it was replaced on disk), else the path the process sees.
 */
void proc_mapping_open_path(pid_t pid, const struct proc_mapping *m, char *out, size_t len);

struct cuda_lib_found {
	char path[PATH_MAX];	  /* as the process sees it: for messages */
	char open_path[PATH_MAX]; /* the same file reachable from here (its /proc/PID/map_files
				     link) */
};

/*
 * Calls fn once per distinct libcuda file mapped executable in pid. Returns
 * how many were found, fn's first non-zero return, or a negative errno when
 * pid's maps cannot be read.
 */
int cuda_locate_in_pid(pid_t pid, int (*fn)(const struct cuda_lib_found *lib, void *ctx),
		       void *ctx);

#endif
