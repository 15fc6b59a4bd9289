/* Writes Prometheus text 0.0.4 and OpenMetrics 1.0.0 expositions, escaping labels and help. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "export/prom_text.h"

#define OPENMETRICS_TYPE "application/openmetrics-text"

const char *prom_content_type(enum prom_format format)
{
	return format == PROM_OPENMETRICS_1
		   ? OPENMETRICS_TYPE "; version=1.0.0; charset=utf-8"
		   : "text/plain; version=0.0.4; charset=utf-8";
}

/* The q value among a media range's parameters (p at its first ';', or NULL), 1 when absent. */
static double quality(const char *p, const char *end)
{
	while (p && p < end) {
		for (p++; p < end && isspace((unsigned char)*p); p++)
			;
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
			return strtod(p + 2, NULL);
		p = memchr(p, ';', (size_t)(end - p));
	}
	return 1.0;
}

enum prom_format prom_format_for_accept(const char *accept)
{
	size_t n = strlen(OPENMETRICS_TYPE);

	for (const char *range = accept; range && *range;) {
		const char *end = strchr(range, ',');

		if (!end)
			end = range + strlen(range);
		while (range < end && isspace((unsigned char)*range))
			range++;
		if ((size_t)(end - range) >= n && !strncasecmp(range, OPENMETRICS_TYPE, n) &&
		    (range + n == end || range[n] == ';' || range[n] == ' ') &&
		    quality(memchr(range, ';', (size_t)(end - range)), end) > 0)
			return PROM_OPENMETRICS_1;
		range = *end ? end + 1 : end;
	}
	return PROM_TEXT_004;
}

static const char *type_name(enum prom_type type)
{
	return type == PROM_COUNTER ? "counter" : type == PROM_GAUGE ? "gauge" : "histogram";
}

/*
 * HELP text and label values: backslash and newline escaped (and the double
 * quote in label values and OpenMetrics help). Runs of plain bytes go out in
 * one write: a scrape of a busy node is tens of thousands of lines.
 */
static void put_escaped(FILE *out, const char *s, bool quote)
{
	while (*s) {
		size_t plain = strcspn(s, quote ? "\\\n\"" : "\\\n");

		fwrite_unlocked(s, 1, plain, out);
		s += plain;
		if (!*s)
			break;
		fputs_unlocked(*s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\", out);
		s++;
	}
}

void prom_family(struct prom_writer *w, const char *name, enum prom_type type, const char *help)
{
	/* the text format names a counter family after its sample, OpenMetrics without _total */
	const char *suffix = type == PROM_COUNTER && w->format == PROM_TEXT_004 ? "_total" : "";

	w->family = name;
	w->type = type;
	fprintf(w->out, "# HELP %s%s ", name, suffix);
	put_escaped(w->out, help, w->format == PROM_OPENMETRICS_1);
	fprintf(w->out, "\n# TYPE %s%s %s\n", name, suffix, type_name(type));
}

/* The shortest of %.15g and %.17g that reads back as the same double: "0.5", not "0.50000000000000000". */
static void format_double(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, len, "%.17g", v);
}

static void put_name_labels(struct prom_writer *w, const char *suffix,
			    const struct prom_label *labels, size_t nlabels)
{
	fputs_unlocked(w->family, w->out);
	if (w->type == PROM_COUNTER)
		fputs_unlocked("_total", w->out);
	fputs_unlocked(suffix, w->out);
	for (size_t i = 0; i < nlabels; i++) {
		fputc_unlocked(i ? ',' : '{', w->out);
		fputs_unlocked(labels[i].name, w->out);
		fputs_unlocked("=\"", w->out);
		put_escaped(w->out, labels[i].value, true);
		fputc_unlocked('"', w->out);
	}
	if (nlabels)
		fputc_unlocked('}', w->out);
}

void prom_sample(struct prom_writer *w, const char *suffix, const struct prom_label *labels,
		 size_t nlabels, double value)
{
	put_name_labels(w, suffix, labels, nlabels);
	if (isinf(value))
		fputs(value > 0 ? " +Inf\n" : " -Inf\n", w->out);
	else if (isnan(value))
		fputs(" NaN\n", w->out);
	else {
		char text[32];

		format_double(value, text, sizeof(text));
		fprintf(w->out, " %s\n", text);
	}
}

void prom_sample_u64(struct prom_writer *w, const char *suffix, const struct prom_label *labels,
		     size_t nlabels, uint64_t value)
{
	char digits[24];
	size_t at = sizeof(digits);

	put_name_labels(w, suffix, labels, nlabels);
	digits[--at] = '\n';
	do {
		digits[--at] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	digits[--at] = ' ';
	fwrite_unlocked(digits + at, 1, sizeof(digits) - at, w->out);
}

/* The bounds' le texts: formatted when they are not the previous histogram's. */
static bool bound_texts(struct prom_writer *w, const double *bounds, size_t n)
{
	if (w->le_bounds == bounds && w->le_n == n)
		return true;
	free(w->le_texts);
	w->le_bounds = NULL;
	w->le_texts = malloc((n ? n : 1) * sizeof(*w->le_texts));
	if (!w->le_texts)
		return false;
	for (size_t i = 0; i < n; i++)
		format_double(bounds[i], w->le_texts[i], sizeof(w->le_texts[i]));
	w->le_bounds = bounds;
	w->le_n = n;
	return true;
}

void prom_histogram(struct prom_writer *w, const struct prom_label *labels, size_t nlabels,
		    const double *bounds, const uint64_t *counts, size_t n, uint64_t count,
		    double sum)
{
	struct prom_label *with_le = malloc((nlabels + 1) * sizeof(*with_le));
	uint64_t cumulative = 0;

	if (!with_le || !bound_texts(w, bounds, n)) {
		free(with_le);
		return;
	}
	memcpy(with_le, labels, nlabels * sizeof(*labels));
	with_le[nlabels].name = "le";
	for (size_t i = 0; i < n; i++) {
		cumulative += counts[i];
		with_le[nlabels].value = w->le_texts[i];
		prom_sample_u64(w, "_bucket", with_le, nlabels + 1, cumulative);
	}
	with_le[nlabels].value = "+Inf";
	prom_sample_u64(w, "_bucket", with_le, nlabels + 1, count);
	prom_sample(w, "_sum", labels, nlabels, sum);
	prom_sample_u64(w, "_count", labels, nlabels, count);
	free(with_le);
}

void prom_finish(struct prom_writer *w)
{
	free(w->le_texts);
	w->le_texts = NULL;
	w->le_bounds = NULL;
	if (w->format == PROM_OPENMETRICS_1)
		fputs("# EOF\n", w->out);
}
