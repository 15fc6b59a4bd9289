/* One-line messages to the user on stderr. */
#include <stdarg.h>
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
