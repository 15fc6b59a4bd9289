/* Per-device verdicts: one line each, from the device's idle gaps and the devices its host waited for. */
#include <inttypes.h>
#include <string.h>
#include "analysis/jobs/device_verdict.h"
#include "analysis/jobs/summary.h"
#include "trace/trace_names.h"

#define STARVED_SHARE 0.5	/* idle more than this of its span: the device was starved */

struct device_judgement {
	uint64_t span;
	uint64_t idle;
	int cause;		/* enum gap_class of the largest idle part, -1 when not starved */
};

static struct device_judgement judge(const struct device_idle *dv)
{
	struct device_judgement j = { .span = dv->last_end - dv->first_start, .cause = -1 };
	int top = GAP_HOST_BOUND;

	for (int c = 0; c < GAP_CLASSES; c++) {
		j.idle += dv->idle[c];
		if (dv->idle[c] > dv->idle[top])
			top = c;
	}
	if (j.span && (double)j.idle > STARVED_SHARE * (double)j.span)
		j.cause = top;
	return j;
}

static const struct device_desc *desc_of(const struct device_map *m, uint32_t device)
{
	for (uint32_t i = 0; m && i < device_map_count(m); i++)
		if (device_map_at(m, i)->device == (int32_t)device)
			return device_map_at(m, i);
	return NULL;
}

/* The i-th device of g with a known ordinal, judged; false for the device-less entry. */
static bool device_at(const struct idle_gaps *g, const struct device_map *m, uint32_t i,
		      const struct device_idle **dv, struct device_judgement *j,
		      const struct device_desc **d)
{
	*dv = idle_gaps_device(g, i);
	if ((*dv)->device == JOB_NO_DEVICE)
		return false;
	*j = judge(*dv);
	*d = desc_of(m, (*dv)->device);
	return true;
}

/* Whether g has a line for device (one with device timing). */
static bool has_timing(const struct idle_gaps *g, uint32_t device)
{
	for (uint32_t i = 0; i < idle_gaps_devices(g); i++)
		if (idle_gaps_device(g, i)->device == device)
			return true;
	return false;
}

static bool worth_printing(const struct idle_gaps *g, const struct collective_waits *cw)
{
	uint32_t known = 0;

	if (collective_waits_device_at(cw, 0) != JOB_NO_DEVICE)
		return true;
	for (uint32_t i = 0; i < idle_gaps_devices(g); i++) {
		const struct device_idle *dv = idle_gaps_device(g, i);

		known += dv->device != JOB_NO_DEVICE;
		if (dv->n_waits_for)
			return true;
	}
	return known > 1;
}

/* "  device 1 (0000:29:00.0)" */
static void device_head(uint32_t device, const struct device_desc *d, FILE *out)
{
	fprintf(out, "  device %u", device);
	if (d && d->pci_bus_id[0])
		fprintf(out, " (%s)", d->pci_bus_id);
}

void device_verdict_print_text(const struct idle_gaps *g, const struct device_map *m,
			       const struct collective_waits *cw, FILE *out)
{
	char a[24], b[24];
	uint32_t device;

	if (!worth_printing(g, cw))
		return;
	fprintf(out, "\nverdict per device:\n");
	for (uint32_t i = 0; i < idle_gaps_devices(g); i++) {
		const struct device_idle *dv;
		struct device_judgement j;
		const struct device_desc *d;

		if (!device_at(g, m, i, &dv, &j, &d))
			continue;
		device_head(dv->device, d, out);
		fprintf(out, ": busy %.1f%% of %s", j.span ? 100.0 * (double)dv->busy / (double)j.span : 0.0,
			job_format_ns(j.span, a, sizeof(a)));
		if (j.cause >= 0)
			fprintf(out, ", starved: mostly %s (%s idle)",
				gap_class_name((enum gap_class)j.cause),
				job_format_ns(dv->idle[j.cause], b, sizeof(b)));
		else
			fprintf(out, ", not starved");
		fprintf(out, "\n");
		for (uint32_t w = 0; w < dv->n_waits_for; w++)
			fprintf(out, "    device %u waited %s for device %u (%u gaps: the host was "
				     "synchronizing with device %u while device %u ran dry)\n",
				dv->device, job_format_ns(dv->waits_for[w].ns, a, sizeof(a)),
				dv->waits_for[w].device, dv->waits_for[w].gaps, dv->waits_for[w].device,
				dv->device);
		if (dv->waits_for_other_ns)
			fprintf(out, "    and %s for further devices\n",
				job_format_ns(dv->waits_for_other_ns, a, sizeof(a)));
		if (cw)
			collective_waits_print_device_text(cw, dv->device, out);
	}
	for (uint32_t i = 0; (device = collective_waits_device_at(cw, i)) != JOB_NO_DEVICE; i++) {
		if (has_timing(g, device))
			continue;
		device_head(device, desc_of(m, device), out);
		fprintf(out, ": no device timing\n");
		collective_waits_print_device_text(cw, device, out);
	}
}

/* Bus id and UUID of a device object. */
static void desc_json(const struct device_desc *d, struct json_writer *w)
{
	char uuid[48];

	jw_field_string(w, "pci_bus_id", d && d->pci_bus_id[0] ? d->pci_bus_id : NULL);
	jw_field_string(w, "uuid", d && d->has_uuid ? grt_uuid_text(d->uuid, uuid, sizeof(uuid)) : NULL);
}

void device_verdict_print_json(const struct idle_gaps *g, const struct device_map *m,
			       const struct collective_waits *cw, struct json_writer *w)
{
	uint32_t device;

	jw_begin_array(w);
	for (uint32_t i = 0; i < idle_gaps_devices(g); i++) {
		const struct device_idle *dv;
		struct device_judgement j;
		const struct device_desc *d;

		if (!device_at(g, m, i, &dv, &j, &d))
			continue;
		jw_begin_object(w);
		jw_field_u64(w, "device", dv->device);
		desc_json(d, w);
		jw_key(w, "device_timing");
		jw_bool(w, true);
		jw_field_u64(w, "span_ns", j.span);
		jw_field_u64(w, "busy_ns", dv->busy);
		jw_field_u64(w, "idle_ns", j.idle);
		jw_field_string(w, "starved_by", j.cause >= 0 ? gap_class_name((enum gap_class)j.cause)
							      : NULL);
		jw_key(w, "waits_for");
		jw_begin_array(w);
		for (uint32_t k = 0; k < dv->n_waits_for; k++) {
			jw_begin_object(w);
			jw_field_u64(w, "device", dv->waits_for[k].device);
			jw_field_u64(w, "ns", dv->waits_for[k].ns);
			jw_field_u64(w, "gaps", dv->waits_for[k].gaps);
			jw_end_object(w);
		}
		jw_end_array(w);
		jw_field_u64(w, "waits_for_other_ns", dv->waits_for_other_ns);
		jw_key(w, "collective_waits");
		collective_waits_print_device_json(cw, dv->device, w);
		jw_end_object(w);
	}
	/* devices known only from their NCCL kernels' jobs: no span, busy or idle time */
	for (uint32_t i = 0; (device = collective_waits_device_at(cw, i)) != JOB_NO_DEVICE; i++) {
		if (has_timing(g, device))
			continue;
		jw_begin_object(w);
		jw_field_u64(w, "device", device);
		desc_json(desc_of(m, device), w);
		jw_key(w, "device_timing");
		jw_bool(w, false);
		jw_key(w, "collective_waits");
		collective_waits_print_device_json(cw, device, w);
		jw_end_object(w);
	}
	jw_end_array(w);
}
