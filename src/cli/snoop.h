/* `grtrace snoop` views: one per source family, each printing its records as live lines. */
#ifndef GRT_SNOOP_H
#define GRT_SNOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

struct snoop_view {
	const char *name;    /* grtrace snoop NAME */
	const char *sources; /* what the session attaches, as for record -s */
	const char *summary; /* one line for the usage text */
	const char *header;  /* column titles after TIME(s) PID TID, or NULL */
	/*
	 * Prints rec as one line when it is one of this view's records (start it
	 * with snoop_line_start). t0_ns is when snooping started.
	 */
	void (*print)(FILE *out, const struct grt_record *rec, const struct grt_strings *strings,
		      uint64_t t0_ns);
	/*
	 * Optional, for views that keep state or own their layout: open() makes
	 * the per-run state handed to print_state() (used instead of print) and
	 * prints the view's own header (the default header is then not printed);
	 * csv is --csv. close() frees it.
	 */
	void *(*open)(FILE *out, bool csv);
	void (*print_state)(void *state, const struct grt_record *rec,
			    const struct grt_strings *strings, uint64_t t0_ns);
	void (*close)(void *state);
	bool has_csv;		/* accepts --csv */
	/* needs a command to launch (-- CMD ARGS, never -p), and takes --bpf */
	bool launches;
};

/*
 * Registers a view: adding `grtrace snoop X` is adding a file with a view
 * and this line, nothing else.
 */
#define GRT_SNOOP_VIEW(var)                                                                        \
	static const struct snoop_view *const var##_entry                                          \
	    __attribute__((used, section("grt_snoop_views"), aligned(sizeof(void *)))) = &var

/* The common start of every line: seconds since t0, pid, tid. */
void snoop_line_start(FILE *out, const struct grt_record *rec, uint64_t t0_ns);

#endif
