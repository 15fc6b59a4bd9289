/* Whether a library may be loaded into grtrace (root): only files only root can have changed. */
#ifndef GRT_TRUSTED_FILE_H
#define GRT_TRUSTED_FILE_H

#include <stddef.h>

/*
 * 0 when path (absolute) is a regular file owned by root and writable by
 * nobody else, in directories (up to /) of which the same holds; else a
 * negative errno and one line in why saying which part is not. Symbolic
 * links are resolved first and the file they reach is what is checked.
 */
int trusted_file_check(const char *path, char *why, size_t why_len);

#endif
