/* The NVIDIA driver and CUDA versions, read as data: never by loading or running libcuda. */
#ifndef GRT_LIBCUDA_VERSION_H
#define GRT_LIBCUDA_VERSION_H

#include <stddef.h>

/*
 * The version in a line of /proc/driver/nvidia/version ("NVRM version: NVIDIA
 * UNIX x86_64 Kernel Module  580.159.04  ..."): 0 with out filled, or -ENOENT.
 */
int driver_version_from_proc_line(const char *line, char *out, size_t len);

/*
 * The driver version in a libcuda file name: the driver installs
 * libcuda.so.<version> and links libcuda.so.1 to it, so libcuda_path (a link
 * or the file) is resolved as a path and its name read. 0 or -ENOENT.
 */
int driver_version_from_libcuda_name(const char *libcuda_path, char *out, size_t len);

/*
 * The CUDA driver API version ("13.0") a libcuda file states about itself in
 * its read-only data, read as bytes (the file is never loaded). 0, -ENOENT
 * when the file does not say (the field then stays empty, never guessed),
 * -ENOEXEC for a file that is not a valid ELF library, or another -errno.
 */
int cuda_version_from_libcuda(const char *libcuda_path, char *out, size_t len);

/* Both versions for a new trace's header ("" where unknown): kernel module first, then libcuda's name. */
void versions_read(const char *libcuda_path, char *driver, size_t driver_len, char *cuda,
		   size_t cuda_len);

#endif
