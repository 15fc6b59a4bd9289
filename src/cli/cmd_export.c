/* `grtrace export`: a trace as a Perfetto timeline (native protobuf, or trace-event JSON). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/threshold_list.h"
#include "cli/commands.h"
#include "common/log.h"
#include "export/perfetto.h"

#define OUTPUT_BUFFER (1u << 20)

/* The formats, by --format name; the first is the default. */
static const struct export_format {
	const char *name;
	const char *what;	/* for the summary line */
	bool binary;
	int (*write)(const char *trace_path, FILE *out, const struct job_thresholds *t,
		     struct perfetto_stats *stats, char *err, size_t err_len);
} formats[] = {
	{ "perfetto", "Perfetto protobuf", true, perfetto_proto_export },
	{ "json", "trace-event JSON", false, perfetto_json_export },
};

static void export_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace export TRACE -o OUT [--format perfetto|json] [--threshold LIST]\n"
		"  -o, --output OUT  where the timeline goes ('-': stdout)\n"
		"  --format FORMAT   perfetto: Perfetto's native protobuf, for ui.perfetto.dev (default)\n"
		"                    json: Chrome trace-event JSON, for chrome://tracing\n"
		"  --perfetto OUT    the same as -o OUT\n"
		"  --threshold LIST  job tag thresholds, as for report --jobs (see docs/jobs.md)\n");
}

static const struct export_format *format_named(const char *name)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

static int write_export(const char *trace, const char *out_path, const struct export_format *f,
			const struct job_thresholds *t)
{
	bool to_stdout = !strcmp(out_path, "-");
	FILE *out;
	struct perfetto_stats stats = { 0 };
	char err[512] = "";
	int rc;

	if (to_stdout && f->binary && isatty(STDOUT_FILENO)) {
		grt_error("export: %s output is binary and stdout is a terminal; give -o FILE or pipe it",
			  f->what);
		return GRT_EXIT_USAGE;
	}
	out = to_stdout ? stdout : fopen(out_path, "w");
	if (!out) {
		grt_error("export: cannot create %s: %s", out_path, strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	setvbuf(out, NULL, _IOFBF, OUTPUT_BUFFER);
	rc = f->write(trace, out, t, &stats, err, sizeof(err));
	if (out != stdout && fclose(out) && !rc) {
		snprintf(err, sizeof(err), "writing %s failed: %s", out_path, strerror(errno));
		rc = -EIO;
	}
	if (rc) {
		grt_error("export: %s: %s", trace, err);
		return GRT_EXIT_FAILURE;
	}
	if (out != stdout)
		fprintf(stderr, "grtrace: wrote %llu events (%llu jobs, %llu launch flows) as %s to %s\n",
			(unsigned long long)stats.events, (unsigned long long)stats.jobs,
			(unsigned long long)stats.flows, f->what, out_path);
	return GRT_EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "perfetto", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out_path = NULL, *thresholds = NULL;
	const struct export_format *format = &formats[0];
	struct job_thresholds t;
	char err[512];
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
		switch (opt) {
		case 'o':
		case 'p':
			if (out_path) {
				grt_error("export: more than one output; give -o OUT once");
				return GRT_EXIT_USAGE;
			}
			out_path = optarg;
			break;
		case 'f':
			format = format_named(optarg);
			if (!format) {
				grt_error("export: unknown format '%s'; use perfetto or json", optarg);
				return GRT_EXIT_USAGE;
			}
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
		grt_error("export: %s", optind != argc - 1 ? "needs one trace file" : "needs -o OUT");
		export_usage(stderr);
		return GRT_EXIT_USAGE;
	}
	job_thresholds_default(&t);
	if (threshold_list_parse(&t, thresholds, err, sizeof(err))) {
		grt_error("export: %s", err);
		return GRT_EXIT_USAGE;
	}
	return write_export(argv[optind], out_path, format, &t);
}
