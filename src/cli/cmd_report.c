/* `grtrace report` (placeholder until the command lands). */
#include "cli/commands.h"
#include "common/log.h"

int cmd_report(int argc, char **argv)
{
	grt_error("report: not built yet");
	return GRT_EXIT_FAILURE;
}
