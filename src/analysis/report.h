/* Running a report: one pass over a trace feeding the selected sections, then their output. */
#ifndef GRT_REPORT_H
#define GRT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "analysis/report_section.h"

struct report_options {
	const struct report_section **sections; /* the selected sections, any order */
	size_t nsections;
	unsigned top_n;		/* 0: no limit */
	const char *thresholds;	/* --threshold list or NULL */
	bool json;
	bool csv;		/* every table of the sections' JSON (csv_tables.h) */
	/*
	 * --format csv: -o PATH (NULL or "-": out). One table goes to a file,
	 * several (or PATH an existing directory) to PATH/TABLE.csv each.
	 */
	const char *csv_path;
	const char *csv_table;	/* --table NAME: only this one */
	const char *shown_path;	/* the trace as the user named it ("-"), NULL: path */
	bool chosen;		/* sections were named: show them even without their source */
	bool show_own;		/* --own: grtrace's own work shown as the program's */
};

/*
 * Reads path once, feeding every record to the header block and to each
 * section, then prints the header and the sections in their `order` to out.
 * Problems go to stderr as one "grtrace: ..." line. Returns an enum grt_exit:
 * a trace that cannot be opened prints nothing; a trace that breaks part-way
 * still prints what was read and returns GRT_EXIT_FAILURE; a section refusing
 * the thresholds returns GRT_EXIT_USAGE.
 */
int report_run(const char *path, const struct report_options *opt, FILE *out);

#endif
