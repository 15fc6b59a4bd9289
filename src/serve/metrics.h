/* The agent's snapshot as Prometheus metric families: names, labels and help in one place. */
#ifndef GRT_SERVE_METRICS_H
#define GRT_SERVE_METRICS_H

#include <stdio.h>
#include "export/prom_text.h"
#include "serve/agent.h"

/* Writes every family of the snapshot to out in format. */
void serve_metrics_write(FILE *out, enum prom_format format, const struct serve_snapshot *s);

/* The upper bounds (seconds) of the API duration histogram's finite buckets, and their count. */
const double *serve_duration_bounds(size_t *n);
/* The finite buckets' counts of stats folded onto those bounds (out: n entries). */
void serve_duration_buckets(const struct agg_api_stats *stats, uint64_t *out);

#endif
