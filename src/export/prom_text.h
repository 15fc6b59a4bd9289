/* Prometheus exposition: the text format 0.0.4 and OpenMetrics 1.0.0, one writer for both. */
#ifndef GRT_PROM_TEXT_H
#define GRT_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum prom_format {
	PROM_TEXT_004,	    /* text/plain; version=0.0.4 */
	PROM_OPENMETRICS_1, /* application/openmetrics-text; version=1.0.0 */
};

enum prom_type {
	PROM_COUNTER,
	PROM_GAUGE,
	PROM_HISTOGRAM,
};

/* The Content-Type header value of a format. */
const char *prom_content_type(enum prom_format format);
/*
 * The format an Accept header asks for: OpenMetrics when it names
 * application/openmetrics-text with a q above 0, else the text format.
 */
enum prom_format prom_format_for_accept(const char *accept);

struct prom_writer {
	FILE *out;
	enum prom_format format;
	const char *family; /* the current family's name, counters without "_total" */
	enum prom_type type;
	/* the last histogram bounds, formatted once for every histogram that shares them */
	const double *le_bounds;
	size_t le_n;
	char (*le_texts)[32];
};

static inline void prom_writer_init(struct prom_writer *w, FILE *out, enum prom_format format)
{
	*w = (struct prom_writer){.out = out, .format = format};
}

/*
 * Starts a family: its HELP and TYPE lines. name is the base name; counter
 * samples get "_total" appended, histogram samples "_bucket", "_sum", "_count".
 */
void prom_family(struct prom_writer *w, const char *name, enum prom_type type, const char *help);

/* A label: name and value (escaped on output). */
struct prom_label {
	const char *name;
	const char *value;
};

/*
 * One sample of the current family: suffix "" for gauges ("_total" is added
 * for counters by the writer), labels as given, then value.
 */
void prom_sample(struct prom_writer *w, const char *suffix, const struct prom_label *labels,
		 size_t nlabels, double value);
void prom_sample_u64(struct prom_writer *w, const char *suffix, const struct prom_label *labels,
		     size_t nlabels, uint64_t value);

/*
 * A whole histogram sample set from cumulative-able bucket counts: counts[i]
 * observations with values up to bounds[i] (ascending, finite), n of them,
 * then +Inf (= count), _sum and _count. The writer formats a bounds array
 * once and reuses the texts while the same array comes again: its values must
 * not change until prom_finish().
 */
void prom_histogram(struct prom_writer *w, const struct prom_label *labels, size_t nlabels,
		    const double *bounds, const uint64_t *counts, size_t n, uint64_t count,
		    double sum);

/* Ends the exposition ("# EOF" for OpenMetrics) and frees what the writer kept. */
void prom_finish(struct prom_writer *w);

#endif
