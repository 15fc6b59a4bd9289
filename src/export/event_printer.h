/* Prints single events as text lines or JSON Lines (parse, snoop). */
#ifndef GRT_EVENT_PRINTER_H
#define GRT_EVENT_PRINTER_H

#include <stdint.h>
#include <stdio.h>
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

enum grt_event_format {
	GRT_FORMAT_TEXT,
	GRT_FORMAT_CSV,
	GRT_FORMAT_JSON,
};

/* Parses "text", "csv" or "json"; -1 when unknown. */
int grt_event_format_parse(const char *name);

struct grt_event_printer;

/*
 * time_base_ns is subtracted from timestamps in text output (the trace's
 * start). CSV is a table per record type (event_csv.h): NULL for it.
 */
struct grt_event_printer *grt_event_printer_new(FILE *out, enum grt_event_format format,
						uint64_t time_base_ns);
void grt_event_printer_free(struct grt_event_printer *p);
/* Prints one record; records without a description print their type number only. */
void grt_event_printer_print(struct grt_event_printer *p, const struct grt_record *rec,
			     const struct grt_strings *strings);

#endif
