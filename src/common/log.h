/* One-line messages to the user, and the exit codes every command uses. */
#ifndef GRT_LOG_H
#define GRT_LOG_H

enum grt_exit {
	GRT_EXIT_OK = 0,
	GRT_EXIT_FAILURE = 1,	/* runtime failure: permissions, missing driver, bad trace */
	GRT_EXIT_USAGE = 2,	/* bad command line */
};

/* "grtrace: <message>" on stderr. */
void grt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "grtrace: note: <message>" on stderr, for things the user should know but that do not fail. */
void grt_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#include <stdbool.h>

/*
 * Flushes and closes stdout at the end of a command; on a write error prints
 * "grtrace: COMMAND: writing the output failed: ..." once and returns true.
 * EPIPE (a reader that stopped reading, like head) is not a failure.
 */
bool grt_stdout_close_failed(const char *command);

#endif
