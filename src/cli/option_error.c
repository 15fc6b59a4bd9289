/* The one-line message for an option getopt could not take, shared by every command. */
#include <getopt.h>
#include "cli/option_error.h"
#include "common/log.h"

int option_error(const char *cmd, int opt, char **argv)
{
	/* optind has moved past the option, or (a short one inside a group) stays on it */
	const char *arg = argv[optind - 1];

	if (opt == ':')
		grt_error("%s: option '%s' needs a value; see grtrace %s --help", cmd, arg, cmd);
	else if (optopt && arg[0] == '-' && arg[1] != '-')
		grt_error("%s: unknown option '-%c'; see grtrace %s --help", cmd, optopt, cmd);
	else
		grt_error("%s: unknown option '%s'; see grtrace %s --help", cmd, arg, cmd);
	return GRT_EXIT_USAGE;
}
