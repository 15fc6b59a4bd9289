/* Report section `devices`: each GPU the program used, its PCI bus id and UUID, and the host calls sent to it. */
#include <inttypes.h>
#include <stdlib.h>
#include "analysis/device_map.h"
#include "analysis/gpu_links.h"
#include "analysis/report_section.h"
#include "trace/records_cuda.h"
#include "trace/trace_names.h"

#define DEVICES_INCOMPLETE "out of memory while following contexts; some calls have no device"
#define DEVICE_ROWS 64		/* ordinals 0..63; calls to others count as unknown */
#define PIDS_PER_DEVICE 16	/* distinct processes counted per device; more show as 16+ */

enum call_group { CALL_LAUNCH, CALL_COPY, CALL_MEMSET, CALL_SYNC, CALL_GROUPS };

struct device_row {
	uint64_t calls[CALL_GROUPS];
	uint32_t pids[PIDS_PER_DEVICE];
	uint32_t n_pids;
	bool more_pids;
};

struct devices_report {
	struct device_map *map;
	struct gpu_links *links;	/* NVML's topology, from the pcie source */
	struct device_row rows[DEVICE_ROWS];
	uint64_t unknown[CALL_GROUPS];	/* calls of threads whose context is unknown */
};

static void devices_destroy(void *state)
{
	struct devices_report *r = state;

	device_map_free(r->map);
	gpu_links_free(r->links);
	free(r);
}

static void *devices_create(const struct report_input *in)
{
	struct devices_report *r = calloc(1, sizeof(*r));

	if (r && (!(r->map = device_map_new()) || !(r->links = gpu_links_new()))) {
		devices_destroy(r);
		return NULL;
	}
	return r;
}

static void note_pid(struct device_row *row, uint32_t pid)
{
	for (uint32_t i = 0; i < row->n_pids; i++)
		if (row->pids[i] == pid)
			return;
	if (row->n_pids == PIDS_PER_DEVICE)
		row->more_pids = true;
	else
		row->pids[row->n_pids++] = pid;
}

static int group_of(const struct grt_record *rec)
{
	switch (rec->hdr.type) {
	case GRT_REC_CUDA_LAUNCH:
	case GRT_REC_CUDA_GRAPH_LAUNCH:
		return CALL_LAUNCH;
	case GRT_REC_CUDA_MEMCPY:
		return CALL_COPY;
	case GRT_REC_CUDA_MEMSET:
		return CALL_MEMSET;
	case GRT_REC_CUDA_SYNC: {
		uint32_t kind = ((const struct grt_cuda_sync_rec *)rec->payload)->kind;

		return kind == GRT_SYNC_CTX || kind == GRT_SYNC_STREAM || kind == GRT_SYNC_EVENT
			       ? CALL_SYNC
			       : -1;
	}
	}
	return -1;
}

static void devices_on_record(void *state, const struct grt_record *rec,
			      const struct grt_strings *strings)
{
	struct devices_report *r = state;
	int group = group_of(rec);
	int32_t d;

	if (rec->hdr.type == GRT_REC_CUDA_CONTEXT || rec->hdr.type == GRT_REC_CUDA_DEVICE) {
		device_map_record(r->map, rec, strings);
		return;
	}
	if (rec->hdr.type == GRT_REC_GPU_LINK) {
		gpu_links_record(r->links, rec);
		return;
	}
	if (group < 0)
		return;
	d = device_map_of_thread(r->map, rec->hdr.tid);
	if (d < 0 || d >= DEVICE_ROWS) {
		r->unknown[group]++;
		return;
	}
	r->rows[d].calls[group]++;
	note_pid(&r->rows[d], rec->hdr.pid);
}

static const struct device_row *row_of(const struct devices_report *r, int32_t device)
{
	static const struct device_row none;

	return device >= 0 && device < DEVICE_ROWS ? &r->rows[device] : &none;
}

/* The devices with a bus id, as NVML's topology joins them (like nvidia-smi topo -m). */
static void print_topology(const struct devices_report *r, FILE *out)
{
	uint32_t n = device_map_count(r->map);
	char cell[16];

	if (!gpu_links_any(r->links) || n < 2)
		return;
	fprintf(out, "links between devices (NVML at recording start; NV<n>: n NVLink links, NV: "
		     "NVLink through NVSwitches, PIX/PXB/PHB/NODE/SYS: the PCIe path, ?: unknown):\n");
	fprintf(out, "  %-6s", "");
	for (uint32_t j = 0; j < n; j++)
		fprintf(out, j + 1 < n ? " %-5d" : " %d", device_map_at(r->map, j)->device);
	fprintf(out, "\n");
	for (uint32_t i = 0; i < n; i++) {
		const struct device_desc *a = device_map_at(r->map, i);

		fprintf(out, "  %-6d", a->device);
		for (uint32_t j = 0; j < n; j++) {
			const struct device_desc *b = device_map_at(r->map, j);

			fprintf(out, j + 1 < n ? " %-5s" : " %s", i == j ? "X" :
				gpu_links_cell(r->links, device_map_pci(r->map, a->device),
					       device_map_pci(r->map, b->device), cell, sizeof(cell)));
		}
		fprintf(out, "\n");
	}
}

static void devices_print_text(void *state, FILE *out)
{
	struct devices_report *r = state;
	uint32_t n = device_map_count(r->map);
	uint64_t unknown = 0;
	char uuid[48];

	if (!n) {
		fprintf(out, "no device named in this trace (no context or device query was recorded)\n");
	} else {
		fprintf(out, "  %-6s %-14s %-41s %5s %9s %7s %8s %6s\n", "device", "pci_bus_id", "uuid",
			"pids", "launches", "copies", "memsets", "syncs");
		for (uint32_t i = 0; i < n; i++) {
			const struct device_desc *d = device_map_at(r->map, i);
			const struct device_row *row = row_of(r, d->device);
			char pids[8];

			snprintf(pids, sizeof(pids), "%u%s", row->n_pids, row->more_pids ? "+" : "");
			fprintf(out, "  %-6d %-14s %-41s %5s %9" PRIu64 " %7" PRIu64 " %8" PRIu64
				     " %6" PRIu64 "\n",
				d->device, d->pci_bus_id[0] ? d->pci_bus_id : "-",
				d->has_uuid ? grt_uuid_text(d->uuid, uuid, sizeof(uuid)) : "-", pids,
				row->calls[CALL_LAUNCH], row->calls[CALL_COPY], row->calls[CALL_MEMSET],
				row->calls[CALL_SYNC]);
		}
	}
	for (int g = 0; g < CALL_GROUPS; g++)
		unknown += r->unknown[g];
	if (unknown)
		fprintf(out, "  %" PRIu64 " calls on no known device (their thread's context was not "
			     "seen being created, retained or made current)\n", unknown);
	print_topology(r, out);
	if (device_map_incomplete(r->map))
		fprintf(out, "WARNING: %s\n", DEVICES_INCOMPLETE);
}

static void json_calls(struct json_writer *w, const uint64_t *calls)
{
	jw_field_u64(w, "launches", calls[CALL_LAUNCH]);
	jw_field_u64(w, "copies", calls[CALL_COPY]);
	jw_field_u64(w, "memsets", calls[CALL_MEMSET]);
	jw_field_u64(w, "syncs", calls[CALL_SYNC]);
}

/* Every ordered pair of devices: the link P2P takes and the matrix cell. */
static void json_topology(const struct devices_report *r, struct json_writer *w)
{
	uint32_t n = device_map_count(r->map);
	char cell[16];

	jw_key(w, "links");
	jw_begin_array(w);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			int32_t a = device_map_at(r->map, i)->device, b = device_map_at(r->map, j)->device;
			uint32_t pa = device_map_pci(r->map, a), pb = device_map_pci(r->map, b);
			enum peer_link link = gpu_links_between(r->links, pa, pb);

			if (i == j)
				continue;
			jw_begin_object(w);
			jw_field_u64(w, "src_device", (uint64_t)a);
			jw_field_u64(w, "dst_device", (uint64_t)b);
			jw_field_string(w, "link", link == PEER_LINK_UNKNOWN ? NULL : peer_link_name(link));
			jw_field_string(w, "topo", gpu_links_cell(r->links, pa, pb, cell, sizeof(cell)));
			jw_end_object(w);
		}
	jw_end_array(w);
}

static void devices_print_json(void *state, struct json_writer *w)
{
	struct devices_report *r = state;
	char uuid[48];

	jw_begin_object(w);
	jw_key(w, "devices");
	jw_begin_array(w);
	for (uint32_t i = 0; i < device_map_count(r->map); i++) {
		const struct device_desc *d = device_map_at(r->map, i);
		const struct device_row *row = row_of(r, d->device);

		jw_begin_object(w);
		jw_field_u64(w, "device", (uint64_t)d->device);
		jw_field_string(w, "pci_bus_id", d->pci_bus_id[0] ? d->pci_bus_id : NULL);
		jw_field_string(w, "uuid", d->has_uuid ? grt_uuid_text(d->uuid, uuid, sizeof(uuid)) : NULL);
		jw_field_u64(w, "pids", row->n_pids);
		json_calls(w, row->calls);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "unknown_device");
	jw_begin_object(w);
	json_calls(w, r->unknown);
	jw_end_object(w);
	if (gpu_links_any(r->links))
		json_topology(r, w);
	jw_end_object(w);
}

static const char *devices_incomplete(void *state)
{
	const struct devices_report *r = state;

	return device_map_incomplete(r->map) ? DEVICES_INCOMPLETE : NULL;
}

GRT_REPORT_SECTION(devices_section) = {
	.name = "devices",
	.summary = "GPUs used (ordinal, PCI bus id, UUID) and the launches, copies and syncs sent to each",
	.default_on = false,
	.sources = 1u << GRT_SRC_CUDA,
	.order = 15,
	.create = devices_create,
	.on_record = devices_on_record,
	.print_text = devices_print_text,
	.print_json = devices_print_json,
	.incomplete = devices_incomplete,
	.destroy = devices_destroy,
};
