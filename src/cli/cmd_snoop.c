/* `grtrace snoop` (placeholder until the command lands). */
#include "cli/commands.h"
#include "common/log.h"

int cmd_snoop(int argc, char **argv)
{
	grt_error("snoop: not built yet");
	return GRT_EXIT_FAILURE;
}
