/* Whether a library may be loaded into grtrace (root): only files only root can have changed. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/trusted_file.h"

/* Root-owned and not writable by group or others: nobody but root changed or replaced it. */
static int check_one(const char *path, const struct stat *st, char *why, size_t why_len)
{
	if (st->st_uid != 0) {
		snprintf(why, why_len, "%s is owned by uid %u, not root", path, (unsigned)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, why_len, "%s is writable by %s", path,
			 st->st_mode & S_IWOTH ? "everyone" : "its group");
		return -EPERM;
	}
	return 0;
}

int trusted_file_check(const char *path, char *why, size_t why_len)
{
	char resolved[PATH_MAX], *slash;
	struct stat st;
	int err;

	if (!realpath(path, resolved) || stat(resolved, &st)) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "%s is not a regular file", resolved);
		return -EINVAL;
	}
	err = check_one(resolved, &st, why, why_len);
	/* every directory above it: a writable one lets its file be swapped */
	while (!err && (slash = strrchr(resolved, '/'))) {
		slash[slash == resolved] = 0;
		if (stat(resolved, &st)) {
			snprintf(why, why_len, "%s: %s", resolved, strerror(errno));
			return -errno;
		}
		err = check_one(resolved, &st, why, why_len);
		if (slash == resolved)
			break;
	}
	return err;
}
