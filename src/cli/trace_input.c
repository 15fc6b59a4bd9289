/* Reading a trace from standard input: spooled into a memory file the reader can seek. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cli/trace_input.h"
#include "common/log.h"

static int spool_stdin(int fd)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(fd, buf + done, (size_t)(n - done));

			if (w < 0 && errno != EINTR)
				return -errno;
			done += w > 0 ? w : 0;
		}
	}
	return 0;
}

const char *trace_input_path(const char *arg, const char *cmd, char *buf, size_t len)
{
	int fd, err;

	if (strcmp(arg, "-"))
		return arg;
	if (isatty(STDIN_FILENO)) {
		grt_error("%s: - reads the trace from standard input, which is a terminal; pipe a "
			  "trace in (grtrace %s - < trace.grt) or name the file", cmd, cmd);
		return NULL;
	}
	fd = memfd_create("grtrace-stdin", MFD_CLOEXEC);
	if (fd < 0) {
		grt_error("%s: cannot hold standard input in memory: %s", cmd, strerror(errno));
		return NULL;
	}
	err = spool_stdin(fd);
	if (err) {
		grt_error("%s: reading the trace from standard input failed: %s", cmd, strerror(-err));
		close(fd);
		return NULL;
	}
	snprintf(buf, len, "/proc/self/fd/%d", fd);
	return buf;
}
