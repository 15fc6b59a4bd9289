/* `grtrace parse`: every event of a trace, one per line (the blkparse of grtrace). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/commands.h"
#include "cli/option_error.h"
#include "cli/event_filter.h"
#include "cli/output_check.h"
#include "cli/trace_input.h"
#include "export/event_csv.h"
#include "common/log.h"
#include "export/event_printer.h"
#include "trace/grt_reader.h"
#include "trace/records_core.h"
#include "trace/trace_names.h"

static void parse_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace parse FILE|- [--format text|csv|json] [-o PATH] [--filter EXPR]... [--all]\n"
		"  FILE       the trace; - reads it from standard input\n"
		"  --format   text (default), json (JSON Lines, one object per event), or csv\n"
		"             (one table per record type: pick one with --filter type=NAME, or -o DIR)\n"
		"  -o PATH    write to PATH instead of standard output (- is standard output);\n"
		"             csv of several record types: a directory, a TYPE.csv each\n"
		"  --filter   KEY=V[,V]: type=launch,alloc  pid=N  tid=N  kernel=GLOB  api=NAME\n"
		"             time=S..S (seconds from the trace's start; either end may be left out);\n"
		"             values of one key OR, keys (in one --filter, comma-separated\n"
		"             KEY=V pairs, or several --filter) AND\n"
		"  --all      also print bookkeeping records (strings, stacks, mappings)\n");
}

/*
 * Strings, stacks, mappings and checksums exist for other records' sake: hidden unless
 * --all, or unless a type filter asks for them by name.
 */
static bool is_hidden(uint16_t type, bool all, const struct event_filter *filter)
{
	if (all || (filter->ntypes && event_filter_match_type(filter, type)))
		return false;
	return type == GRT_REC_STRING || type == GRT_REC_STACK || type == GRT_REC_MAPPING ||
	       type == GRT_REC_CHECKSUM;
}

/* Where the events go: the text or JSON printer, or the CSV tables. */
struct event_output {
	struct grt_event_printer *printer;
	struct event_csv *csv;
};

/*
 * One pass over the trace, each shown record to out. A pass that stops
 * early says why in one line and returns GRT_EXIT_FAILURE.
 */
static int read_pass(const char *path, const char *shown, struct event_output *out,
		     const struct event_filter *filter, bool all, bool learn)
{
	char err[256];
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));
	struct grt_record rec;
	enum grt_read_status st;
	int rc = GRT_EXIT_OK, werr = 0;

	if (!r) {
		grt_error("%s: %s", shown, err);
		return GRT_EXIT_FAILURE;
	}
	while (!werr && (st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		if (is_hidden(rec.hdr.type, all, filter) ||
		    !event_filter_match(filter, &rec, grt_reader_strings(r),
					grt_reader_header(r)->start_monotonic_ns))
			continue;
		if (learn)
			werr = event_csv_learn(out->csv, &rec);
		else if (out->csv)
			werr = event_csv_write(out->csv, &rec, grt_reader_strings(r));
		else
			grt_event_printer_print(out->printer, &rec, grt_reader_strings(r));
	}
	/* a write error on stdout is caught once, for every command, by main */
	if (werr) {
		grt_error("parse: %s: %s", werr == -ENOMEM ? "out of memory" :
			  event_csv_failed_path(out->csv), strerror(-werr));
		rc = GRT_EXIT_FAILURE;
	} else if (learn) {
		/* the learning pass is quiet: the writing pass reads as far and says it once */
	} else if (st == GRT_READ_ERROR) {
		grt_error("%s: %s", shown, grt_reader_error(r));
		rc = GRT_EXIT_FAILURE;
	} else if (grt_reader_damage(r)) {
		/* every readable event was printed; the damage is named once */
		grt_error("%s: damaged trace: %s", shown, grt_reader_damage(r));
		rc = GRT_EXIT_FAILURE;
	} else if (!grt_reader_trailer(r, NULL)) {
		grt_notice("%s: %s", shown,
			   grt_reader_header(r)->flags & GRT_HDR_WRITE_ERROR
				   ? "recording stopped by a write error (disk full?); events up to it are shown"
				   : "no trailer: the recording was cut short; events up to the cut are shown");
	}
	grt_reader_close(r);
	return rc;
}

static uint64_t trace_start_ns(const char *path)
{
	char err[256];
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));
	uint64_t start = r ? grt_reader_header(r)->start_monotonic_ns : 0;

	grt_reader_close(r);
	return start;
}

static int print_trace(const char *path, const char *shown, enum grt_event_format format,
		       const struct event_filter *filter, bool all, FILE *file, const char *dir)
{
	struct event_output out = { 0 };
	int rc;

	if (format == GRT_FORMAT_CSV) {
		out.csv = event_csv_new(file, dir);
		/* CSV columns are known only after every record of a type was seen: two passes */
		rc = out.csv ? read_pass(path, shown, &out, filter, all, true) : GRT_EXIT_FAILURE;
		if (rc == GRT_EXIT_OK)
			rc = read_pass(path, shown, &out, filter, all, false);
		if (event_csv_free(out.csv) && rc == GRT_EXIT_OK) {
			grt_error("parse: writing the CSV files under %s failed", dir);
			rc = GRT_EXIT_FAILURE;
		}
		return rc;
	}
	out.printer = grt_event_printer_new(file, format, trace_start_ns(path));
	if (!out.printer) {
		grt_error("parse: out of memory");
		return GRT_EXIT_FAILURE;
	}
	rc = read_pass(path, shown, &out, filter, all, false);
	grt_event_printer_free(out.printer);
	return rc;
}

struct parse_args {
	struct event_filter filter;
	int format;
	bool all;
	bool help;
	const char *path;
	const char *output;	/* -o: a file; csv of several types: a directory */
};

/* GRT_EXIT_OK with args filled (the filter to destroy), or the exit code after printing why. */
static int parse_options(int argc, char **argv, struct parse_args *a)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "filter", required_argument, NULL, 'F' },
		{ "all", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0; /* getopt's own message would not be the one-line "grtrace: ..." */
	while ((opt = getopt_long(argc, argv, ":f:F:aho:", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			a->format = grt_event_format_parse(optarg);
			if (a->format < 0) {
				grt_error("parse: unknown format '%s'; use text, csv or json", optarg);
				return GRT_EXIT_USAGE;
			}
			break;
		case 'F':
			if (event_filter_add(&a->filter, optarg)) {
				grt_error("parse: bad filter '%s'; give %s", optarg, EVENT_FILTER_KEYS);
				return GRT_EXIT_USAGE;
			}
			break;
		case 'a':
			a->all = true;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'h':
			a->help = true;
			return GRT_EXIT_OK;
		default: /* ':' and '?' */
			return option_error("parse", opt, argv);
		}
	}
	if (optind != argc - 1) {
		grt_error("parse: %s; see grtrace parse --help",
			  optind == argc ? "no trace file given" : "one trace file only");
		return GRT_EXIT_USAGE;
	}
	a->path = argv[optind];
	if (a->output && !strcmp(a->output, "-"))
		a->output = NULL;
	if (a->format == GRT_FORMAT_CSV && a->filter.ntypes != 1 && !a->output) {
		grt_error("parse: --format csv writes one table per output, and each record type "
			  "has its own columns; pick one type with --filter type=NAME, or give -o DIR "
			  "for a file per type");
		return GRT_EXIT_USAGE;
	}
	if (a->output && strcmp(a->path, "-") && output_is_input(a->output, a->path)) {
		grt_error("parse: -o %s is the input trace itself; name another output", a->output);
		return GRT_EXIT_USAGE;
	}
	return GRT_EXIT_OK;
}

/* Text, JSON and one CSV table go to -o FILE or stdout; several CSV tables to -o DIR. */
static int run_parse(const struct parse_args *a)
{
	bool to_dir = a->format == GRT_FORMAT_CSV && a->filter.ntypes != 1;
	char trace[64];
	const char *path = trace_input_path(a->path, "parse", trace, sizeof(trace));
	FILE *file = stdout;
	int rc;

	if (!path)
		return GRT_EXIT_FAILURE;
	if (to_dir && mkdir(a->output, 0777) && errno != EEXIST) {
		grt_error("parse: cannot create the directory %s: %s; give -o a writable directory",
			  a->output, strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	if (!to_dir && !(file = output_open("parse", a->output)))
		return GRT_EXIT_FAILURE;
	rc = print_trace(path, a->path, (enum grt_event_format)a->format, &a->filter, a->all,
			 to_dir ? NULL : file, to_dir ? a->output : NULL);
	return to_dir ? rc : output_close("parse", file, a->output, rc);
}

int parse_parse_args(int argc, char **argv)
{
	struct parse_args a = { .format = GRT_FORMAT_TEXT };
	int rc;

	event_filter_init(&a.filter);
	rc = parse_options(argc, argv, &a);
	event_filter_destroy(&a.filter);
	return rc;
}

int cmd_parse(int argc, char **argv)
{
	struct parse_args a = { .format = GRT_FORMAT_TEXT };
	int rc;

	event_filter_init(&a.filter);
	rc = parse_options(argc, argv, &a);
	if (rc == GRT_EXIT_OK && a.help)
		parse_usage(stdout);
	else if (rc == GRT_EXIT_OK)
		rc = run_parse(&a);
	event_filter_destroy(&a.filter);
	return rc;
}
