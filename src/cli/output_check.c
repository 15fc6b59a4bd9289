/* Refusing an output file that is one of the command's inputs (it would be truncated first). */
#include <sys/stat.h>
#include "cli/output_check.h"

bool output_is_input(const char *out_path, const char *in_path)
{
	struct stat out, in;

	if (stat(out_path, &out) || stat(in_path, &in))
		return false;
	return out.st_dev == in.st_dev && out.st_ino == in.st_ino;
}
