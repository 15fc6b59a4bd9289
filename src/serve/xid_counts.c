/* Runs the xid source in a live session and keeps a count per (GPU, Xid) for the agent. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/live_sink.h"
#include "serve/xid_counts.h"
#include "sources/session.h"
#include "trace/records_kernel.h"

#define MAX_XID_SERIES 256

struct xid_counts {
	struct grt_live_sink sink;
	bool sink_ready;
	struct grt_session *session;
	struct xid_count counts[MAX_XID_SERIES];
	size_t n;
};

struct xid_counts *xid_counts_new(void)
{
	return calloc(1, sizeof(struct xid_counts));
}

void xid_counts_on_record(void *ctx, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct xid_counts *x = ctx;
	const struct grt_xid_rec *r = rec->payload;
	const char *device;
	size_t i;

	if (rec->hdr.type != GRT_REC_XID || rec->hdr.payload_len < sizeof(*r))
		return;
	device = grt_strings_get(strings, r->dev_str);
	if (!device || !*device)
		device = "unknown";
	for (i = 0; i < x->n; i++)
		if (x->counts[i].xid == r->code && !strncmp(x->counts[i].device, device,
							       sizeof(x->counts[i].device) - 1))
			break;
	if (i == x->n) {
		if (x->n == MAX_XID_SERIES)
			return;
		x->n++;
		snprintf(x->counts[i].device, sizeof(x->counts[i].device), "%s", device);
		x->counts[i].xid = r->code;
	}
	x->counts[i].count++;
}

int xid_counts_start(struct xid_counts **out, char *why, size_t why_len)
{
	const struct grt_session_config cfg = {0}; /* every process: Xids belong to GPUs */
	struct xid_counts *x = xid_counts_new();
	int err;

	if (!x)
		return -ENOMEM;
	err = grt_live_sink_init(&x->sink, xid_counts_on_record, x);
	x->sink_ready = !err;
	if (!err) {
		x->session = grt_session_new(&cfg, &x->sink.sink);
		err = x->session ? 0 : -ENOMEM;
	}
	if (!err && (err = grt_session_attach(x->session, "xid")))
		snprintf(why, why_len, "xid: %s", grt_session_error(x->session));
	if (err) {
		xid_counts_stop(x);
		return err;
	}
	*out = x;
	return 0;
}

void xid_counts_poll(struct xid_counts *x)
{
	if (x && x->session)
		grt_session_poll(x->session, 0);
}

size_t xid_counts_get(const struct xid_counts *x, struct xid_count *out, size_t max)
{
	size_t n = x ? x->n : 0;

	if (n)
		memcpy(out, x->counts, (n < max ? n : max) * sizeof(*out));
	return n;
}

void xid_counts_stop(struct xid_counts *x)
{
	if (!x)
		return;
	grt_session_free(x->session);
	if (x->sink_ready)
		grt_live_sink_destroy(&x->sink);
	free(x);
}
