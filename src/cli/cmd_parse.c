/* `grtrace parse`: every event of a trace, one per line (the blkparse of grtrace). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "cli/option_error.h"
#include "cli/event_filter.h"
#include "common/log.h"
#include "export/event_printer.h"
#include "trace/grt_reader.h"
#include "trace/records_core.h"
#include "trace/trace_names.h"

static void parse_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace parse FILE [--format text|csv|json] [--filter EXPR] [--all]\n"
		"  --format   text (default), csv, or json (JSON Lines, one object per event)\n"
		"  --filter   type=launch,alloc  pid=N  tid=N  (comma lists; several --filter AND)\n"
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

static int print_trace(const char *path, enum grt_event_format format,
		       const struct event_filter *filter, bool all)
{
	char err[256];
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));
	struct grt_event_printer *printer;
	struct grt_record rec;
	enum grt_read_status st;
	int rc = GRT_EXIT_OK;

	if (!r) {
		grt_error("%s: %s", path, err);
		return GRT_EXIT_FAILURE;
	}
	printer = grt_event_printer_new(stdout, format, grt_reader_header(r)->start_monotonic_ns);
	if (!printer) {
		grt_reader_close(r);
		grt_error("out of memory");
		return GRT_EXIT_FAILURE;
	}
	while ((st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		if (is_hidden(rec.hdr.type, all, filter) || !event_filter_match(filter, &rec))
			continue;
		grt_event_printer_print(printer, &rec, grt_reader_strings(r));
	}
	/* a write error on stdout is caught once, for every command, by main */
	if (st == GRT_READ_ERROR) {
		grt_error("%s: %s", path, grt_reader_error(r));
		rc = GRT_EXIT_FAILURE;
	} else if (grt_reader_damage(r)) {
		/* every readable event was printed; the damage is named once */
		grt_error("%s: damaged trace: %s", path, grt_reader_damage(r));
		rc = GRT_EXIT_FAILURE;
	} else if (!grt_reader_trailer(r, NULL)) {
		grt_notice("%s: %s", path,
			   grt_reader_header(r)->flags & GRT_HDR_WRITE_ERROR
				   ? "recording stopped by a write error (disk full?); events up to it are shown"
				   : "no trailer: the recording was cut short; events up to the cut are shown");
	}
	grt_event_printer_free(printer);
	grt_reader_close(r);
	return rc;
}

struct parse_args {
	struct event_filter filter;
	int format;
	bool all;
	bool help;
	const char *path;
};

/* GRT_EXIT_OK with args filled (the filter to destroy), or the exit code after printing why. */
static int parse_options(int argc, char **argv, struct parse_args *a)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "filter", required_argument, NULL, 'F' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0; /* getopt's own message would not be the one-line "grtrace: ..." */
	while ((opt = getopt_long(argc, argv, ":f:F:ah", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			a->format = grt_event_format_parse(optarg);
			if (a->format < 0) {
				grt_error("parse: unknown format '%s' (text, csv or json)", optarg);
				return GRT_EXIT_USAGE;
			}
			break;
		case 'F':
			if (event_filter_add(&a->filter, optarg)) {
				grt_error("parse: bad filter '%s' (type=NAME[,NAME] pid=N tid=N)", optarg);
				return GRT_EXIT_USAGE;
			}
			break;
		case 'a':
			a->all = true;
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
	return GRT_EXIT_OK;
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
		rc = print_trace(a.path, a.format, &a.filter, a.all);
	event_filter_destroy(&a.filter);
	return rc;
}
