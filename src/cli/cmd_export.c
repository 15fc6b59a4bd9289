/* `grtrace export`: a trace as a Perfetto timeline (native protobuf, or trace-event JSON). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/jobs/threshold_list.h"
#include "cli/commands.h"
#include "cli/option_error.h"
#include "cli/output_check.h"
#include "common/log.h"
#include "export/perfetto.h"
#include "trace/trace_verify.h"

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
		"usage: grtrace export TRACE -o OUT [--format perfetto|json] [--threshold LIST] [--own]\n"
		"  -o, --output OUT  where the timeline goes ('-': stdout)\n"
		"  --format FORMAT   perfetto: Perfetto's native protobuf, for ui.perfetto.dev (default)\n"
		"                    json: Chrome trace-event JSON, for chrome://tracing\n"
		"  --perfetto OUT    the same as -o OUT\n"
		"  --threshold LIST  job tag thresholds, as for report --jobs (see docs/jobs.md)\n"
		"  --own             draw grtrace's own work in the target (left out by default)\n");
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
	/* the timeline is written from what could be read; a damaged trace still fails the command */
	if (grt_trace_verify(trace, err, sizeof(err))) {
		grt_error("export: %s: damaged trace: %s", trace, err);
		return GRT_EXIT_FAILURE;
	}
	if (out != stdout)
		fprintf(stderr, "grtrace: wrote %llu events (%llu jobs, %llu launch flows) as %s to %s\n",
			(unsigned long long)stats.events, (unsigned long long)stats.jobs,
			(unsigned long long)stats.flows, f->what, out_path);
	return GRT_EXIT_OK;
}

struct export_args {
	const char *trace;
	const char *out_path;
	const struct export_format *format;
	struct job_thresholds thresholds;
	bool help;
};

/* GRT_EXIT_OK with args filled, or the exit code after printing why. Touches no file. */
static int parse_export_args(int argc, char **argv, struct export_args *a)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "perfetto", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "own", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *thresholds = NULL;
	bool show_own = false;
	char err[512];
	int opt;

	a->format = &formats[0];
	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		switch (opt) {
		case 'o':
		case 'p':
			if (a->out_path) {
				grt_error("export: more than one output; give -o OUT once");
				return GRT_EXIT_USAGE;
			}
			a->out_path = optarg;
			break;
		case 'f':
			a->format = format_named(optarg);
			if (!a->format) {
				grt_error("export: unknown format '%s'; use perfetto or json", optarg);
				return GRT_EXIT_USAGE;
			}
			break;
		case 'T':
			thresholds = optarg;
			break;
		case 'O':
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
			  optind != argc - 1 ? "needs one trace file" : "needs -o OUT");
		return GRT_EXIT_USAGE;
	}
	a->trace = argv[optind];
	if (strcmp(a->out_path, "-") && output_is_input(a->out_path, a->trace)) {
		grt_error("export: output %s is the input trace itself; writing it would destroy "
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
	return write_export(a.trace, a.out_path, a.format, &a.thresholds);
}
