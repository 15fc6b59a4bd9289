/* `grtrace report`: summarise a trace through the registered report sections (the btt of grtrace). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report.h"
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "cli/commands.h"
#include "cli/option_error.h"
#include "cli/output_check.h"
#include "cli/trace_input.h"
#include "common/log.h"
#include "common/num_parse.h"

/* getopt values of the per-section flags: SECTION_FLAG_BASE + index in the registry */
#define SECTION_FLAG_BASE 256

enum report_flag {
	FLAG_FORMAT = 'f',
	FLAG_TOP = 't',
	FLAG_THRESHOLD = 'T',
	FLAG_OWN = 'W',
	FLAG_OUTPUT = 'o',
	FLAG_TABLE = 'b',
	FLAG_HELP = 'h',
};

static void report_usage(FILE *out)
{
	fprintf(out, "usage: grtrace report FILE|- [--format text|json|csv] [-o PATH] [--table NAME]\n"
		     "                      [--top N] [--threshold LIST] [--own]");
	for (const struct report_section *s = report_section_next(NULL); s; s = report_section_next(s))
		fprintf(out, " [--%s]", s->name);
	fprintf(out,
		"\n"
		"  FILE         the trace; - reads it from standard input\n"
		"  --format     text (default), json (one object: {\"trace\": {...}, SECTION: ...}),\n"
		"               or csv (one table per output: every list of the JSON is a table)\n"
		"  -o PATH      write to PATH instead of standard output (- is standard output);\n"
		"               csv: a file for one table, a directory (a TABLE.csv each) for several\n"
		"  --table NAME csv: only this table (the error for several tables lists them)\n"
		"  --top N      rows per list in text output (default %d, 0 for all)\n"
		"  --threshold  KEY=VALUE[,KEY=VALUE] passed to the sections (see docs/report.md)\n"
		"  --own        count grtrace's own work in the target (calibration, probe collection)\n"
		"               as the program's; by default it is left out\n"
		"sections (default: those marked *; naming any shows only the named ones):\n",
		REPORT_DEFAULT_TOP);
	for (const struct report_section *s = report_section_next(NULL); s; s = report_section_next(s))
		fprintf(out, "  %c --%-12s %s\n", s->default_on ? '*' : ' ', s->name, s->summary);
}

static size_t count_sections(void)
{
	size_t n = 0;

	for (const struct report_section *s = report_section_next(NULL); s; s = report_section_next(s))
		n++;
	return n;
}

/* The fixed options followed by one flag per registered section. */
static struct option *build_options(size_t nsections)
{
	static const struct option fixed[] = {
		{ "format", required_argument, NULL, FLAG_FORMAT },
		{ "top", required_argument, NULL, FLAG_TOP },
		{ "threshold", required_argument, NULL, FLAG_THRESHOLD },
		{ "own", no_argument, NULL, FLAG_OWN },
		{ "output", required_argument, NULL, FLAG_OUTPUT },
		{ "table", required_argument, NULL, FLAG_TABLE },
		{ "help", no_argument, NULL, FLAG_HELP },
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]), i = 0;
	struct option *options = calloc(nfixed + nsections + 1, sizeof(*options));

	if (!options)
		return NULL;
	memcpy(options, fixed, sizeof(fixed));
	for (const struct report_section *s = report_section_next(NULL); s;
	     s = report_section_next(s), i++)
		options[nfixed + i] = (struct option){ s->name, no_argument, NULL,
						       SECTION_FLAG_BASE + (int)i };
	return options;
}

static int parse_top(const char *text, unsigned *top)
{
	uint64_t v;
	int err = num_parse_u64(text, 0, 1000000, &v);

	if (!err)
		*top = (unsigned)v;
	return err;
}

/* Fills opt->sections: the flagged ones, or every default one when none was flagged. */
static int select_sections(const bool *flagged, size_t nsections, struct report_options *opt)
{
	bool any = false;
	size_t i = 0;

	for (size_t k = 0; k < nsections; k++)
		any |= flagged[k];
	opt->chosen = any;
	opt->sections = calloc(nsections ? nsections : 1, sizeof(*opt->sections));
	if (!opt->sections)
		return -ENOMEM;
	for (const struct report_section *s = report_section_next(NULL); s;
	     s = report_section_next(s), i++)
		if (any ? flagged[i] : s->default_on)
			opt->sections[opt->nsections++] = s;
	return 0;
}

struct report_args {
	struct report_options opt;
	bool *flagged;
	const char *path;
	const char *output;	/* -o: a file, or with --format csv a file or directory */
	bool help;
};

/* Returns GRT_EXIT_OK with args filled, or the exit code after printing the problem. */
static int parse_args(int argc, char **argv, struct option *options, size_t nsections,
		      struct report_args *args)
{
	int opt;

	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		if (opt >= SECTION_FLAG_BASE && (size_t)(opt - SECTION_FLAG_BASE) < nsections) {
			args->flagged[opt - SECTION_FLAG_BASE] = true;
			continue;
		}
		switch (opt) {
		case FLAG_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "csv")) {
				grt_error("report: unknown format '%s' (text, json or csv)", optarg);
				return GRT_EXIT_USAGE;
			}
			args->opt.json = !strcmp(optarg, "json");
			args->opt.csv = !strcmp(optarg, "csv");
			break;
		case FLAG_TOP:
			if (parse_top(optarg, &args->opt.top_n)) {
				grt_error("report: bad value '%s' for --top: give a number of rows from 0 "
					  "to 1000000", optarg);
				return GRT_EXIT_USAGE;
			}
			break;
		case FLAG_THRESHOLD:
			if (report_threshold_check(optarg)) {
				grt_error("report: bad --threshold '%s': give KEY=VALUE[,VALUE][,KEY=VALUE], "
					  "each number from 0 to %g", optarg, REPORT_THRESHOLD_MAX);
				return GRT_EXIT_USAGE;
			}
			args->opt.thresholds = optarg;
			break;
		case FLAG_OWN:
			args->opt.show_own = true;
			break;
		case FLAG_OUTPUT:
			args->output = optarg;
			break;
		case FLAG_TABLE:
			args->opt.csv_table = optarg;
			break;
		case FLAG_HELP:
			args->help = true;
			return GRT_EXIT_OK;
		default: /* ':' and '?' */
			return option_error("report", opt, argv);
		}
	}
	if (optind != argc - 1) {
		grt_error("report: %s; see grtrace report --help",
			  optind == argc ? "no trace file given" : "one trace file only");
		return GRT_EXIT_USAGE;
	}
	args->path = argv[optind];
	if (args->opt.csv_table && !args->opt.csv) {
		grt_error("report: --table picks one CSV table; give it with --format csv");
		return GRT_EXIT_USAGE;
	}
	if (args->output && strcmp(args->output, "-") && strcmp(args->path, "-") &&
	    output_is_input(args->output, args->path)) {
		grt_error("report: -o %s is the input trace itself; name another output", args->output);
		return GRT_EXIT_USAGE;
	}
	args->opt.csv_path = args->output;
	return GRT_EXIT_OK;
}

int report_parse_args(int argc, char **argv)
{
	size_t nsections = count_sections();
	struct option *options = build_options(nsections);
	struct report_args args = { .opt = { .top_n = REPORT_DEFAULT_TOP } };
	int rc = GRT_EXIT_FAILURE;

	args.flagged = calloc(nsections ? nsections : 1, sizeof(*args.flagged));
	if (options && args.flagged)
		rc = parse_args(argc, argv, options, nsections, &args);
	free(args.flagged);
	free(options);
	return rc;
}

/* Text and JSON to -o FILE or stdout; CSV places its tables itself. */
static int run_to_output(struct report_args *args)
{
	char trace[64];
	const char *path = trace_input_path(args->path, "report", trace, sizeof(trace));
	FILE *out = stdout;
	int rc;

	if (!path)
		return GRT_EXIT_FAILURE;
	args->opt.shown_path = args->path;
	if (!args->opt.csv && !(out = output_open("report", args->output)))
		return GRT_EXIT_FAILURE;
	rc = report_run(path, &args->opt, out);
	return args->opt.csv ? rc : output_close("report", out, args->output, rc);
}

int cmd_report(int argc, char **argv)
{
	size_t nsections = count_sections();
	struct option *options = build_options(nsections);
	struct report_args args = { .opt = { .top_n = REPORT_DEFAULT_TOP } };
	int rc;

	args.flagged = calloc(nsections ? nsections : 1, sizeof(*args.flagged));
	if (!options || !args.flagged) {
		free(options);
		free(args.flagged);
		grt_error("out of memory");
		return GRT_EXIT_FAILURE;
	}
	rc = parse_args(argc, argv, options, nsections, &args);
	if (rc == GRT_EXIT_OK && args.help) {
		report_usage(stdout);
	} else if (rc == GRT_EXIT_OK && select_sections(args.flagged, nsections, &args.opt)) {
		grt_error("out of memory");
		rc = GRT_EXIT_FAILURE;
	} else if (rc == GRT_EXIT_OK) {
		rc = run_to_output(&args);
	}
	free(args.opt.sections);
	free(args.flagged);
	free(options);
	return rc;
}
