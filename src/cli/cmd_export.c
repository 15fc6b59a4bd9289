/* `grtrace export`: a trace as a Chrome/Perfetto trace-event JSON timeline. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/threshold_list.h"
#include "cli/commands.h"
#include "common/log.h"
#include "export/perfetto.h"

#define OUTPUT_BUFFER (1u << 20)

static void export_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace export FILE --perfetto OUT.json [--threshold LIST]\n"
		"  --perfetto OUT  trace-event JSON for ui.perfetto.dev or chrome://tracing ('-': stdout)\n"
		"  --threshold     job tag thresholds, as for report --jobs (see docs/jobs.md)\n");
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
	rc = perfetto_json_export(trace, out, t, &stats, err, sizeof(err));
	if (out != stdout && fclose(out) && !rc) {
		snprintf(err, sizeof(err), "writing %s failed: %s", out_path, strerror(errno));
		rc = -EIO;
	}
	if (rc) {
		grt_error("export: %s: %s", trace, err);
		return GRT_EXIT_FAILURE;
	}
	if (out != stdout)
		fprintf(stderr, "grtrace: wrote %llu events (%llu jobs, %llu launch flows) to %s\n",
			(unsigned long long)stats.events, (unsigned long long)stats.jobs,
			(unsigned long long)stats.flows, out_path);
	return GRT_EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
	static const struct option options[] = {
		{ "perfetto", required_argument, NULL, 'p' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out_path = NULL, *thresholds = NULL;
	struct job_thresholds t;
	char err[512];
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
			out_path = optarg;
			break;
		case 'T':
			thresholds = optarg;
			break;
		case 'h':
			export_usage(stdout);
			return GRT_EXIT_OK;
		default:
			grt_error("export: unknown or incomplete option '%s'", argv[optind - 1]);
			export_usage(stderr);
			return GRT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !out_path) {
		grt_error("export: %s", optind != argc - 1 ? "needs one trace file" : "needs --perfetto OUT.json");
		export_usage(stderr);
		return GRT_EXIT_USAGE;
	}
	job_thresholds_default(&t);
	if (threshold_list_parse(&t, thresholds, err, sizeof(err))) {
		grt_error("export: %s", err);
		return GRT_EXIT_USAGE;
	}
	return write_export(argv[optind], out_path, &t);
}
