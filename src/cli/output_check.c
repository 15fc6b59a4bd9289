/* The -o output of the commands, and refusing one that is the command's own input. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/output_check.h"
#include "common/log.h"

bool output_is_input(const char *out_path, const char *in_path)
{
	struct stat out, in;

	if (stat(out_path, &out) || stat(in_path, &in))
		return false;
	return out.st_dev == in.st_dev && out.st_ino == in.st_ino;
}

FILE *output_open(const char *cmd, const char *path)
{
	FILE *out;

	if (!path || !strcmp(path, "-"))
		return stdout;
	out = fopen(path, "we");
	if (!out)
		grt_error("%s: cannot create %s: %s; give -o a writable path", cmd, path,
			  strerror(errno));
	return out;
}

int output_close(const char *cmd, FILE *out, const char *path, int rc)
{
	if (out == stdout || !out)
		return rc;
	if (fclose(out) && rc == GRT_EXIT_OK) {
		grt_error("%s: writing %s failed: %s", cmd, path, strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	return rc;
}
