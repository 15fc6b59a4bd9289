/* Whether a library may be loaded into grtrace (root): only files only root can have changed. */
#ifndef GRT_TRUSTED_FILE_H
#define GRT_TRUSTED_FILE_H

#include <stddef.h>

/*
 * 0 when path is a regular file owned by root and writable by
 * nobody else, in directories (up to /) of which the same holds; else a
 * negative errno and one line in why saying which part is not. Symbolic
 * links (and a relative path) are resolved first: the file they reach, and the
 * directories above it, are what is checked.
 */
int trusted_file_check(const char *path, char *why, size_t why_len);

#endif
