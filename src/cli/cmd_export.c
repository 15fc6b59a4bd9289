/* `grtrace export`: a trace as a Chrome/Perfetto trace-event JSON timeline. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/threshold_list.h"
#include "cli/commands.h"
#include "cli/option_error.h"
#include "cli/output_check.h"
#include "common/log.h"
#include "export/perfetto.h"
#include "trace/trace_verify.h"

#define OUTPUT_BUFFER (1u << 20)

static void export_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace export FILE --perfetto OUT.json [--threshold LIST] [--own]\n"
		"  --perfetto OUT  trace-event JSON for ui.perfetto.dev or chrome://tracing ('-': stdout)\n"
		"  --threshold     job tag thresholds, as for report --jobs (see docs/jobs.md)\n"
		"  --own           draw grtrace's own work in the target (left out by default)\n");
}

static int write_export(const char *trace, const char *out_path, const struct job_thresholds *t)
{
	FILE *out = strcmp(out_path, "-") ? fopen(out_path, "w") : stdout;
	struct perfetto_stats stats;
	char err[512] = "";
	int rc;

	if (!out) {
		grt_error("export: cannot create %s: %s", out_path, strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	setvbuf(out, NULL, _IOFBF, OUTPUT_BUFFER);
	rc = perfetto_export(trace, out, t, &stats, err, sizeof(err));
	if (out != stdout && fclose(out) && !rc) {
		snprintf(err, sizeof(err), "writing %s failed: %s", out_path, strerror(errno));
		rc = -EIO;
	}
	if (rc) {
		grt_error("export: %s: %s", trace, err);
		return GRT_EXIT_FAILURE;
	}
	/* the timeline is written from what could be read; a damaged trace still fails the command */
	if (grt_trace_verify(trace, err, sizeof(err))) {
		grt_error("export: %s: damaged trace: %s", trace, err);
		return GRT_EXIT_FAILURE;
	}
	if (out != stdout)
		fprintf(stderr, "grtrace: wrote %llu events (%llu jobs, %llu launch flows) to %s\n",
			(unsigned long long)stats.events, (unsigned long long)stats.jobs,
			(unsigned long long)stats.flows, out_path);
	return GRT_EXIT_OK;
}

struct export_args {
	const char *trace;
	const char *out_path;
	struct job_thresholds thresholds;
	bool help;
};

/* GRT_EXIT_OK with args filled, or the exit code after printing why. Touches no file. */
static int parse_export_args(int argc, char **argv, struct export_args *a)
{
	static const struct option options[] = {
		{ "perfetto", required_argument, NULL, 'p' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "own", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *thresholds = NULL;
	bool show_own = false;
	char err[512];
	int opt;

	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
			a->out_path = optarg;
			break;
		case 'T':
			thresholds = optarg;
			break;
		case 'o':
			show_own = true;
			break;
		case 'h':
			a->help = true;
			return GRT_EXIT_OK;
		default: /* ':' and '?' */
			return option_error("export", opt, argv);
		}
	}
	if (optind != argc - 1 || !a->out_path) {
		grt_error("export: %s; see grtrace export --help",
			  optind != argc - 1 ? "needs one trace file" : "needs --perfetto OUT.json");
		return GRT_EXIT_USAGE;
	}
	a->trace = argv[optind];
	if (strcmp(a->out_path, "-") && output_is_input(a->out_path, a->trace)) {
		grt_error("export: --perfetto %s is the input trace itself; writing it would destroy "
			  "the trace: name another file", a->out_path);
		return GRT_EXIT_USAGE;
	}
	job_thresholds_default(&a->thresholds);
	if (threshold_list_parse(&a->thresholds, thresholds, err, sizeof(err))) {
		grt_error("export: %s", err);
		return GRT_EXIT_USAGE;
	}
	a->thresholds.show_own = show_own;
	return GRT_EXIT_OK;
}

int export_parse_args(int argc, char **argv)
{
	struct export_args a = { 0 };

	return parse_export_args(argc, argv, &a);
}

int cmd_export(int argc, char **argv)
{
	struct export_args a = { 0 };
	int rc = parse_export_args(argc, argv, &a);

	if (rc != GRT_EXIT_OK)
		return rc;
	if (a.help) {
		export_usage(stdout);
		return GRT_EXIT_OK;
	}
	return write_export(a.trace, a.out_path, &a.thresholds);
}
