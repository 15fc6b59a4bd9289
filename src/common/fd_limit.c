/* The open-file limit raised for grtrace, and put back for the programs it runs. */
#include <stdbool.h>
#include <sys/resource.h>
#include "common/fd_limit.h"

static struct rlimit original;
static bool raised;

void grt_fd_limit_raise(void)
{
	struct rlimit wanted;

	if (raised || getrlimit(RLIMIT_NOFILE, &original))
		return;
	wanted = original;
	wanted.rlim_cur = original.rlim_max;
	raised = wanted.rlim_cur != original.rlim_cur && !setrlimit(RLIMIT_NOFILE, &wanted);
}

void grt_fd_limit_restore(void)
{
	if (raised && !setrlimit(RLIMIT_NOFILE, &original))
		raised = false;
}
