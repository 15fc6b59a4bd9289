/* The `xid` source: NVIDIA GPU errors (Xid) from the driver's tracepoint. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"
#include "common/pci_addr.h"
#include "sources/session.h"
#include "sources/source.h"
#include "sources/tp_format.h"
#include "sources/xid.h"
#include "trace/records_kernel.h"
#include "xid.skel.h"

struct xid_source {
	struct grt_bpf_source base;
	struct grt_session *session;
	struct xid_bpf *skel;
};

static int on_xid_event(void *ctx, void *data, size_t len)
{
	struct xid_source *xs = ctx;
	const struct xid_event *e = data;
	char dev[XID_DEV_LEN + 1], msg[XID_MSG_LEN + 1];
	struct grt_xid_rec rec;
	struct grt_event_origin origin;

	if (len < sizeof(*e))
		return 0;
	memcpy(dev, e->dev, XID_DEV_LEN);
	memcpy(msg, e->msg, XID_MSG_LEN);
	dev[XID_DEV_LEN] = msg[XID_MSG_LEN] = 0;
	rec = (struct grt_xid_rec){
		.device = grt_pci_parse(dev), .code = e->code,
		.msg_str = grt_session_intern(xs->session, msg),
		.dev_str = grt_session_intern(xs->session, dev),
	};
	origin = (struct grt_event_origin){ .ts_ns = e->ts_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->tid };
	grt_session_emit(xs->session, GRT_REC_XID, &origin, &rec, sizeof(rec));
	return 0;
}

static int xid_probe(char *why, size_t why_len)
{
	int err = grt_bpf_probe(why, why_len);

	if (err)
		return err;
	if (!grt_tracepoint_exists("nvidia", "nvidia_dev_xid")) {
		snprintf(why, why_len,
			 "no nvidia:nvidia_dev_xid tracepoint here (NVIDIA driver not loaded, or too old to have it)");
		return -ENOENT;
	}
	return 0;
}

static int load_layout(struct xid_source *xs)
{
	struct tp_field fields[TP_MAX_FIELDS];
	const struct tp_field *dev, *code, *msg;
	int n = tp_format_load("nvidia", "nvidia_dev_xid", fields, TP_MAX_FIELDS);

	if (n < 0)
		return grt_session_fail(xs->session, n, "xid: cannot read the nvidia_dev_xid format: %s",
					strerror(-n));
	dev = tp_field_find(fields, n, "dev");
	code = tp_field_find(fields, n, "error_code");
	msg = tp_field_find(fields, n, "msg");
	if (!dev || !dev->data_loc || !code || code->size != 4 || !msg || !msg->data_loc)
		return grt_session_fail(xs->session, -EINVAL,
					"xid: nvidia_dev_xid's format is not (dev, error_code, msg)");
	xs->skel->rodata->layout = (struct xid_layout){
		.dev = dev->offset, .error_code = code->offset, .msg = msg->offset,
	};
	return 0;
}

static void xid_detach(void *ctx)
{
	struct xid_source *xs = ctx;

	if (!xs)
		return;
	grt_bpf_source_detach(&xs->base, xs->skel ? xs->skel->skeleton : NULL);
	xid_bpf__destroy(xs->skel);
	free(xs);
}

static int xid_attach(struct grt_session *s, void **ctx)
{
	struct xid_source *xs = calloc(1, sizeof(*xs));
	int err;

	if (!xs)
		return -ENOMEM;
	xs->session = s;
	xs->skel = xid_bpf__open();
	if (!xs->skel) {
		err = -errno;
		goto fail;
	}
	bpf_program__set_autoload(xs->skel->progs.xid_test_event, false);
	err = load_layout(xs);
	if (err) {
		xid_detach(xs);
		return err;
	}
	err = grt_bpf_source_load_start(&xs->base, s, xs->skel->skeleton, GRT_SRC_XID,
					xs->skel->maps.xid_events,
					xs->skel->maps.dropped_events, on_xid_event, xs);
	if (err)
		goto fail;
	*ctx = xs;
	return 0;
fail:
	grt_bpf_source_fail(s, "xid", err);
	xid_detach(xs);
	return err;
}

static int xid_drain(void *ctx)
{
	grt_bpf_source_drain(&((struct xid_source *)ctx)->base);
	return 0;
}

static const struct grt_source xid_source = {
	.name = "xid",
	.id = GRT_SRC_XID,
	.summary = "NVIDIA GPU errors (Xid) from the nvidia:nvidia_dev_xid tracepoint, system-wide",
	.probe = xid_probe,
	.attach = xid_attach,
	.drain = xid_drain,
	.detach = xid_detach,
};

GRT_SOURCE_REGISTER(xid_source);
