/* `grtrace record` (placeholder until the command lands). */
#include "cli/commands.h"
#include "common/log.h"

int cmd_record(int argc, char **argv)
{
	grt_error("record: not built yet");
	return GRT_EXIT_FAILURE;
}
