/* One-line messages to the user on stderr. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include "common/log.h"

static void vsay(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "grtrace: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void grt_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

void grt_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("note: ", fmt, ap);
	va_end(ap);
}

bool grt_stdout_close_failed(const char *command)
{
	int err = 0;

	if (fflush(stdout) || ferror(stdout))
		err = errno ? errno : EIO;
	else if (fclose(stdout))
		err = errno ? errno : EIO;
	if (!err || err == EPIPE) /* a reader that went away on purpose (head) is not a failure */
		return false;
	if (command)
		grt_error("%s: writing the output failed: %s", command, strerror(err));
	else
		grt_error("writing the output failed: %s", strerror(err));
	return true;
}
