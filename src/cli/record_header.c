/* Fills the .grt header with what describes the machine and the recording. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "common/clock.h"
#include "cli/record_header.h"
#include "sources/libcuda_version.h"

static void join_command(char *out, size_t len, pid_t pid, char *const *argv)
{
	size_t used = 0;

	out[0] = 0;
	if (!argv) {
		snprintf(out, len, "pid %d", (int)pid);
		return;
	}
	for (; *argv && used + 1 < len; argv++) {
		int n = snprintf(out + used, len - used, "%s%s", used ? " " : "", *argv);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

void record_header_fill(struct grt_file_header *h, const char *libcuda_path, pid_t pid,
			char *const *argv, uint32_t sources_mask)
{
	struct utsname uts;

	memset(h, 0, sizeof(*h));
	h->start_monotonic_ns = grt_clock_ns(CLOCK_MONOTONIC);
	h->start_realtime_ns = grt_clock_ns(CLOCK_REALTIME);
	h->clock_id = GRT_CLOCK_MONOTONIC;
	h->sources_mask = sources_mask;
	h->target_pid = (uint32_t)pid;
	if (uname(&uts) == 0) {
		snprintf(h->hostname, sizeof(h->hostname), "%.63s", uts.nodename);
		snprintf(h->kernel_release, sizeof(h->kernel_release), "%.63s", uts.release);
	}
	/* as data only: loading the target's libcuda would run its constructors as root */
	versions_read(libcuda_path, h->driver_version, sizeof(h->driver_version), h->cuda_version,
		      sizeof(h->cuda_version));
	join_command(h->command_line, sizeof(h->command_line), pid, argv);
}
