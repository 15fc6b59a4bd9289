/* Report section `xid`: NVIDIA GPU errors counted by device and Xid code (xid source). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_section.h"
#include "trace/records_kernel.h"

#define MAX_XID_KINDS 256

struct xid_kind {
	char dev[32];
	uint32_t code;
	uint64_t count;
	uint64_t first_ns, last_ns;
	char last_msg[160];
};

struct xid_report {
	uint64_t start_ns;
	bool recorded;		/* the trace had the xid source on */
	struct xid_kind kinds[MAX_XID_KINDS];
	size_t nkinds;
	uint64_t total, untracked;
};

static void *xid_create(const struct report_input *in)
{
	struct xid_report *r = calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->start_ns = in->header ? in->header->start_monotonic_ns : 0;
	r->recorded = in->header && (in->header->sources_mask & (1u << GRT_SRC_XID));
	return r;
}

static struct xid_kind *kind_of(struct xid_report *r, const char *dev, uint32_t code)
{
	for (size_t i = 0; i < r->nkinds; i++)
		if (r->kinds[i].code == code && !strcmp(r->kinds[i].dev, dev))
			return &r->kinds[i];
	if (r->nkinds == MAX_XID_KINDS)
		return NULL;
	struct xid_kind *k = &r->kinds[r->nkinds++];
	snprintf(k->dev, sizeof(k->dev), "%s", dev);
	k->code = code;
	return k;
}

static void xid_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct xid_report *r = state;
	const struct grt_xid_rec *x = rec->payload;
	const char *dev, *msg;
	struct xid_kind *k;

	if (rec->hdr.type != GRT_REC_XID)
		return;
	r->total++;
	dev = grt_strings_get(strings, x->dev_str);
	k = kind_of(r, dev ? dev : "?", x->code);
	if (!k) {
		r->untracked++;
		return;
	}
	if (!k->count++)
		k->first_ns = rec->hdr.ts_ns;
	k->last_ns = rec->hdr.ts_ns;
	msg = grt_strings_get(strings, x->msg_str);
	snprintf(k->last_msg, sizeof(k->last_msg), "%s", msg ? msg : "");
}

static double rel_s(const struct xid_report *r, uint64_t ns)
{
	return ns >= r->start_ns ? (ns - r->start_ns) / 1e9 : 0;
}

static void xid_print_text(void *state, FILE *out)
{
	struct xid_report *r = state;

	if (!r->total) {
		fprintf(out, r->recorded ? "no GPU errors (Xid) during the recording\n"
					 : "no GPU errors (Xid) in this trace (record with -s xid)\n");
		return;
	}
	fprintf(out, "GPU errors (Xid): %llu\n", (unsigned long long)r->total);
	fprintf(out, "  %-14s %5s %7s %10s %10s  %s\n", "device", "xid", "count", "first_s", "last_s", "last_message");
	for (size_t i = 0; i < r->nkinds; i++) {
		const struct xid_kind *k = &r->kinds[i];

		fprintf(out, "  %-14s %5u %7llu %10.3f %10.3f  %s\n", k->dev, k->code, (unsigned long long)k->count,
			rel_s(r, k->first_ns), rel_s(r, k->last_ns), k->last_msg);
	}
	if (r->untracked)
		fprintf(out, "  (%llu more of further kinds)\n", (unsigned long long)r->untracked);
}

static void xid_print_json(void *state, struct json_writer *w)
{
	struct xid_report *r = state;

	jw_begin_array(w);
	for (size_t i = 0; i < r->nkinds; i++) {
		const struct xid_kind *k = &r->kinds[i];

		jw_begin_object(w);
		jw_key(w, "dev");
		jw_string(w, k->dev);
		jw_key(w, "xid");
		jw_u64(w, k->code);
		jw_key(w, "count");
		jw_u64(w, k->count);
		jw_key(w, "first_ns");
		jw_u64(w, k->first_ns);
		jw_key(w, "last_ns");
		jw_u64(w, k->last_ns);
		jw_key(w, "last_msg");
		jw_string(w, k->last_msg);
		jw_end_object(w);
	}
	jw_end_array(w);
}

GRT_REPORT_SECTION(xid_section) = {
	.name = "xid",
	.summary = "NVIDIA GPU errors (Xid) by device and code (xid source)",
	.default_on = true,
	.sources = 1u << GRT_SRC_XID,
	.order = 64,
	.create = xid_create,
	.on_record = xid_on_record,
	.print_text = xid_print_text,
	.print_json = xid_print_json,
	.destroy = free,
};
