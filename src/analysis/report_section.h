/* The pieces `grtrace report` is made of: each section reads the trace once and prints its part. */
#ifndef GRT_REPORT_SECTION_H
#define GRT_REPORT_SECTION_H

#include <stdbool.h>
#include <stdio.h>
#include "common/json_writer.h"
#include "trace/grt_reader.h"

/* What every section gets at creation: the trace's header and the user's options. */
struct report_input {
	const struct grt_file_header *header;
	unsigned top_n;		 /* --top N: rows in "worst"/"top" lists */
	const char *thresholds;	 /* --threshold list, NULL for defaults; sections parse their own keys */
	bool json;
	bool csv;
	/*
	 * --own: show grtrace's own work (calibration, probe collection) as the
	 * application's. Without it, sections never see own records (see
	 * sees_own), and the jobs section leaves own jobs out.
	 */
	bool show_own;
	const char *path;	 /* the trace, for sections that read it more than once; may be NULL */
	char *error;		 /* create() may explain a failure here (one line); may be NULL */
	size_t error_len;
};

/*
 * A report section. cmd_report creates the selected sections, streams every
 * record through on_record (memory stays proportional to what a section keeps,
 * not to the trace), then asks each for its text or JSON.
 */
struct report_section {
	const char *name;	/* JSON key of the section and its --NAME flag: "kernels", "leaks" */
	const char *summary;	/* one line for --help */
	bool default_on;	/* shown when no section flag is given */
	/*
	 * Sources that feed it (1 << enum grt_source_id); a default section is
	 * left out of a trace that recorded none of them. 0: always shown.
	 */
	uint32_t sources;
	int order;		/* print order, low first */
	/*
	 * The section gets grtrace's own records too and keeps them apart
	 * itself (the jobs section: own device work still keeps the GPU busy).
	 */
	bool sees_own;
	/* Returns the section's state, or NULL with errno set (bad threshold: EINVAL). */
	void *(*create)(const struct report_input *in);
	void (*on_record)(void *state, const struct grt_record *rec, const struct grt_strings *strings);
	void (*print_text)(void *state, FILE *out);
	/*
	 * Writes the section's value (the key is already written). --format csv
	 * is made from it: every array of objects a table, every key a column
	 * (export/csv_tables.h), so keys carry their unit (_ns, _bytes).
	 */
	void (*print_json)(void *state, struct json_writer *w);
	/*
	 * Optional, asked after printing: NULL when the section is whole, else
	 * one line on what it lacks ("out of memory while counting; some
	 * launches are missing"). The report then exits 1 with that line, in
	 * every format.
	 */
	const char *(*incomplete)(void *state);
	void (*destroy)(void *state);
};

#define GRT_REPORT_SECTION(var)                                                                     \
	static const struct report_section var;                                                    \
	static const struct report_section *const var##_entry                                      \
		__attribute__((used, section("grt_report_sections"), aligned(sizeof(void *)))) = &var; \
	static const struct report_section var

/* Iterates registered sections: pass NULL first, then the previous result. */
const struct report_section *report_section_next(const struct report_section *prev);
const struct report_section *report_section_find(const char *name);

#endif
