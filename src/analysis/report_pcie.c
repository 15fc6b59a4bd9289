/* Report section `pcie`: PCIe/NVLink throughput per GPU, config-space accesses, probes this machine lacked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/kernel_stats.h"
#include "analysis/report_section.h"
#include "trace/records_kernel.h"
#include "trace/trace_names.h"

#define MAX_GPUS 64
#define MAX_UNSUPPORTED 32

struct rate {
	uint64_t sum, max, samples;
};

struct gpu_throughput {
	bool seen;
	uint32_t pci;
	uint64_t samples;
	struct rate pcie_tx, pcie_rx, nvlink_tx, nvlink_rx;
};

struct unsupported {
	uint32_t source;
	char probe[64];
	char reason[160];
};

struct pcie_report {
	struct gpu_throughput gpus[MAX_GPUS];
	struct unsupported unsupported[MAX_UNSUPPORTED];
	size_t nunsupported;
	struct kstat_table config;	/* key pci << 1 | write: accesses */
};

static void *pcie_create(const struct report_input *in)
{
	struct pcie_report *r = calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	kstat_init(&r->config);
	return r;
}

static void rate_add(struct rate *r, uint64_t bps)
{
	r->sum += bps;
	r->samples++;
	if (bps > r->max)
		r->max = bps;
}

static void note_unsupported(struct pcie_report *r, const struct grt_record *rec, const struct grt_strings *strings)
{
	const struct grt_unsupported_probe_rec *u = rec->payload;
	const char *probe = grt_strings_get(strings, u->probe_str), *reason = grt_strings_get(strings, u->reason_str);
	struct unsupported *e;

	for (size_t i = 0; i < r->nunsupported; i++)
		if (r->unsupported[i].source == u->source && probe && !strcmp(r->unsupported[i].probe, probe))
			return;
	if (r->nunsupported == MAX_UNSUPPORTED)
		return;
	e = &r->unsupported[r->nunsupported++];
	e->source = u->source;
	snprintf(e->probe, sizeof(e->probe), "%s", probe ? probe : "?");
	snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
}

static void pcie_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct pcie_report *r = state;

	if (rec->hdr.type == GRT_REC_UNSUPPORTED_PROBE) {
		note_unsupported(r, rec, strings);
	} else if (rec->hdr.type == GRT_REC_PCI_CONFIG) {
		const struct grt_pci_config_rec *c = rec->payload;
		struct kstat *row = kstat_get(&r->config, (uint64_t)c->pci << 1 | (c->write & 1));

		if (row)
			row->count++;
	} else if (rec->hdr.type == GRT_REC_PCIE_SAMPLE) {
		const struct grt_pcie_sample_rec *p = rec->payload;
		struct gpu_throughput *g = p->device < MAX_GPUS ? &r->gpus[p->device] : NULL;

		if (!g)
			return;
		g->seen = true;
		g->pci = p->pci;
		g->samples++;
		if (p->flags & GRT_PCIE_F_PCIE) {
			rate_add(&g->pcie_tx, p->pcie_tx_bps);
			rate_add(&g->pcie_rx, p->pcie_rx_bps);
		}
		if (p->flags & GRT_PCIE_F_NVLINK) {
			rate_add(&g->nvlink_tx, p->nvlink_tx_bps);
			rate_add(&g->nvlink_rx, p->nvlink_rx_bps);
		}
	}
}

static double avg_mbs(const struct rate *r)
{
	return r->samples ? r->sum / (double)r->samples / 1e6 : 0;
}

static void print_rate_cells(FILE *out, const struct rate *r)
{
	if (r->samples)
		fprintf(out, " %12.1f %16.1f", avg_mbs(r), r->max / 1e6);
	else
		fprintf(out, " %12s %16s", "-", "-");
}

static void pcie_print_text(void *state, FILE *out)
{
	struct pcie_report *r = state;
	bool any = false;
	char pci[32];

	for (int i = 0; i < MAX_GPUS; i++)
		any |= r->gpus[i].seen;
	if (!any && !r->nunsupported && !r->config.count) {
		fprintf(out, "no PCIe/NVLink samples in this trace (record with -s pcie)\n");
		return;
	}
	fprintf(out, "PCIe / NVLink throughput (MB/s: 10^6 bytes per second)\n");
	if (any)
		fprintf(out, "  %4s %-13s %7s %12s %16s %12s %16s %12s %16s %12s %16s\n", "gpu", "pci",
			"samples", "pcie_tx_MB/s", "pcie_tx_max_MB/s", "pcie_rx_MB/s", "pcie_rx_max_MB/s",
			"nvl_tx_MB/s", "nvl_tx_max_MB/s", "nvl_rx_MB/s", "nvl_rx_max_MB/s");
	for (int i = 0; i < MAX_GPUS; i++) {
		const struct gpu_throughput *g = &r->gpus[i];

		if (!g->seen)
			continue;
		grt_pci_text(g->pci, pci, sizeof(pci));
		fprintf(out, "  %4d %-13s %7llu", i, g->pci ? pci : "-", (unsigned long long)g->samples);
		print_rate_cells(out, &g->pcie_tx);
		print_rate_cells(out, &g->pcie_rx);
		print_rate_cells(out, &g->nvlink_tx);
		print_rate_cells(out, &g->nvlink_rx);
		fputc('\n', out);
	}
	for (size_t i = 0; i < r->config.count; i++) {
		const struct kstat *c = &r->config.rows[i];

		grt_pci_text(c->key >> 1, pci, sizeof(pci));
		fprintf(out, "  config space %s %s: %llu\n", pci, c->key & 1 ? "writes" : "reads",
			(unsigned long long)c->count);
	}
	for (size_t i = 0; i < r->nunsupported; i++)
		fprintf(out, "  not available: %s (%s): %s\n", r->unsupported[i].probe,
			grt_source_name(r->unsupported[i].source), r->unsupported[i].reason);
}

static void json_rate(struct json_writer *w, const char *key, const struct rate *r)
{
	jw_key(w, key);
	if (!r->samples) {
		jw_null(w);
		return;
	}
	jw_begin_object(w);
	jw_field_u64(w, "avg_bps", r->sum / r->samples);
	jw_field_u64(w, "max_bps", r->max);
	jw_end_object(w);
}

static void pcie_print_json(void *state, struct json_writer *w)
{
	struct pcie_report *r = state;
	char pci[32];

	jw_begin_object(w);
	jw_key(w, "gpus");
	jw_begin_array(w);
	for (int i = 0; i < MAX_GPUS; i++) {
		const struct gpu_throughput *g = &r->gpus[i];

		if (!g->seen)
			continue;
		grt_pci_text(g->pci, pci, sizeof(pci));
		jw_begin_object(w);
		jw_field_u64(w, "device", i);
		jw_field_string(w, "pci", g->pci ? pci : NULL);
		jw_field_u64(w, "samples", g->samples);
		json_rate(w, "pcie_tx", &g->pcie_tx);
		json_rate(w, "pcie_rx", &g->pcie_rx);
		json_rate(w, "nvlink_tx", &g->nvlink_tx);
		json_rate(w, "nvlink_rx", &g->nvlink_rx);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "config_accesses");
	jw_begin_array(w);
	for (size_t i = 0; i < r->config.count; i++) {
		grt_pci_text(r->config.rows[i].key >> 1, pci, sizeof(pci));
		jw_begin_object(w);
		jw_field_string(w, "pci", pci);
		jw_field_string(w, "access", r->config.rows[i].key & 1 ? "write" : "read");
		jw_field_u64(w, "count", r->config.rows[i].count);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "unsupported");
	jw_begin_array(w);
	for (size_t i = 0; i < r->nunsupported; i++) {
		jw_begin_object(w);
		jw_field_string(w, "source", grt_source_name(r->unsupported[i].source));
		jw_field_string(w, "probe", r->unsupported[i].probe);
		jw_field_string(w, "reason", r->unsupported[i].reason);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void pcie_destroy(void *state)
{
	struct pcie_report *r = state;

	kstat_free(&r->config);
	free(r);
}

GRT_REPORT_SECTION(pcie_section) = {
	.name = "pcie",
	.summary = "PCIe/NVLink throughput per GPU, config-space accesses, probes unavailable here (pcie source)",
	.default_on = true,
	.sources = 1u << GRT_SRC_PCIE,
	.order = 65,
	.create = pcie_create,
	.on_record = pcie_on_record,
	.print_text = pcie_print_text,
	.print_json = pcie_print_json,
	.destroy = pcie_destroy,
};
