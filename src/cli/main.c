/* grtrace entry point: the command table. */
#include <stdio.h>
#include <string.h>
#include "cli/commands.h"
#include "cli/tool_version.h"
#include "common/fd_limit.h"
#include "common/log.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "trace a command or a running process into a .grt file" },
	{ "parse", cmd_parse, "print a trace's events as text, CSV or JSON Lines" },
	{ "export", cmd_export, "write a trace as a Perfetto timeline (protobuf, or trace-event JSON)" },
	{ "report", cmd_report, "summarise a trace: kernels, API time, copies, leaks, drops" },
	{ "snoop", cmd_snoop, "print one source's events live" },
	{ "bpf", cmd_bpf, "verify and translate GPU eBPF programs (bpf check prog.bpf.o)" },
	{ "serve", cmd_serve, "node agent: CUDA metrics of every process for Prometheus" },
	{ "top", cmd_top, "live view of the GPU processes: launches, API time, memory, copies" },
	{ "info", cmd_info, "what this machine can record: BPF, each source (or why not), libcuda" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: grtrace COMMAND [ARGS]   (grtrace COMMAND --help for its options)\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static int dispatch(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		usage(stderr);
		return GRT_EXIT_USAGE;
	}
	/* "grtrace help record" is "grtrace record --help" */
	if (!strcmp(argv[1], "help") && argc == 3 && (cmd = find_command(argv[2]))) {
		char *help_argv[] = { argv[2], "--help", NULL };

		return cmd->run(2, help_argv);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return argc == 2 ? GRT_EXIT_OK : GRT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("grtrace %s (commit %s, trace format %d.%d)\n", GRT_TOOL_VERSION, GRT_GIT_COMMIT,
		       GRT_VERSION_MAJOR, GRT_VERSION_MINOR);
		return GRT_EXIT_OK;
	}
	cmd = find_command(argv[1]);
	if (cmd)
		return cmd->run(argc - 1, argv + 1);
	grt_error("unknown command '%s'; see grtrace --help", argv[1]);
	return GRT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	int rc;

	grt_fd_limit_raise();
	rc = dispatch(argc, argv);

	/*
	 * Every command's output ends here: a full disk or a closed pipe under
	 * stdout must not pass for a complete answer (help text included).
	 */
	if (grt_stdout_close_failed(argc > 1 ? argv[1] : NULL) && rc == GRT_EXIT_OK)
		rc = GRT_EXIT_FAILURE;
	return rc;
}
