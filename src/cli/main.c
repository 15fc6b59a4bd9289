/* grtrace entry point: the command table. */
#include <stdio.h>
#include <string.h>
#include "cli/commands.h"
#include "common/log.h"
#include "trace/grt_format.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "trace a command or a running process into a .grt file" },
	{ "parse", cmd_parse, "print a trace's events as text, CSV or JSON Lines" },
	{ "export", cmd_export, "write a trace as a Perfetto / Chrome trace-event timeline" },
	{ "report", cmd_report, "summarise a trace: kernels, API time, copies, leaks, drops" },
	{ "snoop", cmd_snoop, "print one source's events live" },
	{ "bpf", cmd_bpf, "verify and translate GPU eBPF programs (bpf check prog.bpf.o)" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: grtrace COMMAND [ARGS]   (grtrace COMMAND --help for its options)\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return GRT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return GRT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("grtrace (trace format %d.%d)\n", GRT_VERSION_MAJOR, GRT_VERSION_MINOR);
		return GRT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	grt_error("unknown command '%s'", argv[1]);
	usage(stderr);
	return GRT_EXIT_USAGE;
}
