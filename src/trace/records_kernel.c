/* Descriptions of the kernel-side record types: syscall, nv_ioctl, sched, fence, xid, pcie. */
#include <stdbool.h>
#include <stdio.h>
#include "trace/grt_format.h"
#include "trace/kernel_names.h"
#include "trace/record_desc.h"
#include "trace/records_kernel.h"
#include "trace/trace_names.h"

void grt_pci_text(uint32_t pci, char *buf, unsigned len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%x", pci >> 16, (pci >> 8) & 0xff, (pci >> 3) & 0x1f, pci & 7);
}

static void describe_syscall(const struct grt_record *rec, const struct grt_strings *strings,
			     struct grt_fields *out)
{
	const struct grt_syscall_rec *s = rec->payload;
	const char *name = grt_syscall_name(s->nr);
	char unnamed[32];

	if (!name) {
		snprintf(unnamed, sizeof(unnamed), "syscall_%u", s->nr);
		name = unnamed;
	}
	grt_field_str(out, "name", name);
	grt_field_u64(out, "nr", s->nr);
	grt_field_u64(out, "call_id", s->call_id);
	grt_field_hex_list(out, "args", s->args, 6);
	if (s->flags & (GRT_SYSCALL_F_NO_RETURN | GRT_SYSCALL_F_UNFINISHED)) {
		grt_field_str(out, "ret", NULL);
		grt_field_str(out, "duration_ns", NULL);
		grt_field_str(out, "state", s->flags & GRT_SYSCALL_F_NO_RETURN ? "no-return" : "unfinished");
		return;
	}
	grt_field_i64(out, "ret", s->ret);
	grt_field_u64(out, "duration_ns", s->exit_ns - rec->hdr.ts_ns);
	grt_field_str(out, "state", "returned");
}

GRT_RECORD_DESC(syscall_desc) = {
	.type = GRT_REC_SYSCALL,
	.name = "syscall",
	.min_len = sizeof(struct grt_syscall_rec),
	.describe = describe_syscall,
};

static void describe_nv_ioctl(const struct grt_record *rec, const struct grt_strings *strings,
			      struct grt_fields *out)
{
	const struct grt_nv_ioctl_rec *n = rec->payload;
	const char *op = grt_nv_op_name(n->device, n->op);
	char unnamed[32];

	if (!op) {
		snprintf(unnamed, sizeof(unnamed), "0x%x", n->op);
		op = unnamed;
	}
	grt_field_u64(out, "call_id", n->call_id);
	grt_field_str(out, "device", grt_nv_device_name(n->device));
	grt_field_str(out, "path", grt_strings_get(strings, n->path_str));
	grt_field_u64(out, "fd", n->fd);
	grt_field_hex(out, "request", n->request);
	grt_field_str(out, "op", op);
	if (n->flags & GRT_NV_F_CLASS)
		grt_field_hex(out, "class", n->object_class);
	if (n->flags & GRT_NV_F_CMD)
		grt_field_hex(out, "cmd", n->control_cmd);
	if (n->flags & GRT_NV_F_HANDLE)
		grt_field_hex(out, "handle", n->handle);
	if (n->flags & GRT_NV_F_STATUS)
		grt_field_hex(out, "rm_status", n->rm_status);
	grt_field_u64(out, "xfer", !!(n->flags & GRT_NV_F_XFER));
	grt_field_i64(out, "ret", n->ret);
	grt_field_u64(out, "duration_ns", n->exit_ns - rec->hdr.ts_ns);
}

GRT_RECORD_DESC(nv_ioctl_desc) = {
	.type = GRT_REC_NV_IOCTL,
	.name = "nv_ioctl",
	.min_len = sizeof(struct grt_nv_ioctl_rec),
	.describe = describe_nv_ioctl,
};

static void describe_offcpu(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_sched_offcpu_rec *o = rec->payload;

	grt_field_u64(out, "offcpu_ns", o->on_cpu_ns - rec->hdr.ts_ns);
	grt_field_u64(out, "prev_state", o->prev_state);
	grt_field_u64(out, "waker_tid", o->waker_tid);
}

GRT_RECORD_DESC(offcpu_desc) = {
	.type = GRT_REC_SCHED_OFFCPU,
	.name = "offcpu",
	.min_len = sizeof(struct grt_sched_offcpu_rec),
	.describe = describe_offcpu,
};

static void describe_wakeup(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_sched_wakeup_rec *w = rec->payload;

	grt_field_u64(out, "target_pid", w->target_pid);
	grt_field_u64(out, "target_tid", w->target_tid);
	grt_field_u64(out, "target_cpu", w->target_cpu);
	grt_field_i64(out, "prio", w->prio);
}

GRT_RECORD_DESC(wakeup_desc) = {
	.type = GRT_REC_SCHED_WAKEUP,
	.name = "wakeup",
	.min_len = sizeof(struct grt_sched_wakeup_rec),
	.describe = describe_wakeup,
};

static void describe_fence(const struct grt_record *rec, const struct grt_strings *strings,
			   struct grt_fields *out)
{
	const struct grt_fence_rec *f = rec->payload;

	grt_field_str(out, "event", grt_fence_event_name(f->event));
	grt_field_str(out, "driver", grt_strings_get(strings, f->driver_str));
	grt_field_str(out, "timeline", grt_strings_get(strings, f->timeline_str));
	grt_field_u64(out, "context", f->context);
	grt_field_u64(out, "seqno", f->seqno);
	if (f->event == GRT_FENCE_WAIT_END) {
		if (f->flags & GRT_FENCE_F_WAIT_MATCHED)
			grt_field_u64(out, "wait_ns", f->wait_ns);
		else
			grt_field_str(out, "wait_ns", NULL);
	}
}

GRT_RECORD_DESC(fence_desc) = {
	.type = GRT_REC_FENCE,
	.name = "fence",
	.min_len = sizeof(struct grt_fence_rec),
	.describe = describe_fence,
};

static void describe_xid(const struct grt_record *rec, const struct grt_strings *strings,
			 struct grt_fields *out)
{
	const struct grt_xid_rec *x = rec->payload;

	grt_field_u64(out, "xid", x->code);
	grt_field_str(out, "dev", grt_strings_get(strings, x->dev_str));
	grt_field_hex(out, "pci", x->device);
	grt_field_str(out, "msg", grt_strings_get(strings, x->msg_str));
}

GRT_RECORD_DESC(xid_desc) = {
	.type = GRT_REC_XID,
	.name = "xid",
	.min_len = sizeof(struct grt_xid_rec),
	.describe = describe_xid,
};

static void describe_pcie_sample(const struct grt_record *rec, const struct grt_strings *strings,
				 struct grt_fields *out)
{
	const struct grt_pcie_sample_rec *p = rec->payload;
	char pci[32];

	grt_pci_text(p->pci, pci, sizeof(pci));
	grt_field_u64(out, "device", p->device);
	grt_field_str(out, "pci", p->pci ? pci : NULL);
	grt_field_u64(out, "interval_ms", p->interval_ms);
	if (p->flags & GRT_PCIE_F_PCIE) {
		grt_field_u64(out, "pcie_tx_bps", p->pcie_tx_bps);
		grt_field_u64(out, "pcie_rx_bps", p->pcie_rx_bps);
	}
	if (p->flags & GRT_PCIE_F_NVLINK) {
		grt_field_u64(out, "nvlink_tx_bps", p->nvlink_tx_bps);
		grt_field_u64(out, "nvlink_rx_bps", p->nvlink_rx_bps);
	}
}

GRT_RECORD_DESC(pcie_sample_desc) = {
	.type = GRT_REC_PCIE_SAMPLE,
	.name = "pcie_sample",
	.min_len = sizeof(struct grt_pcie_sample_rec),
	.describe = describe_pcie_sample,
};

static void describe_nvlink_sample(const struct grt_record *rec, const struct grt_strings *strings,
				   struct grt_fields *out)
{
	const struct grt_nvlink_sample_rec *n = rec->payload;
	char pci[32];

	grt_pci_text(n->pci, pci, sizeof(pci));
	grt_field_u64(out, "device", n->device);
	grt_field_str(out, "pci", n->pci ? pci : NULL);
	grt_field_u64(out, "link", n->link);
	grt_field_u64(out, "interval_ms", n->interval_ms);
	grt_field_u64(out, "tx_bytes", n->tx_bytes);
	grt_field_u64(out, "rx_bytes", n->rx_bytes);
	grt_field_u64(out, "tx_bps", n->tx_bps);
	grt_field_u64(out, "rx_bps", n->rx_bps);
}

GRT_RECORD_DESC(nvlink_sample_desc) = {
	.type = GRT_REC_NVLINK_SAMPLE,
	.name = "nvlink_sample",
	.min_len = sizeof(struct grt_nvlink_sample_rec),
	.describe = describe_nvlink_sample,
};

const char *grt_p2p_status_name(uint32_t status)
{
	static const char *const names[] = {
		[GRT_P2P_OK] = "ok",
		[GRT_P2P_CHIPSET_NOT_SUPPORTED] = "chipset_not_supported",
		[GRT_P2P_GPU_NOT_SUPPORTED] = "gpu_not_supported",
		[GRT_P2P_TOPOLOGY_NOT_SUPPORTED] = "topology_not_supported",
		[GRT_P2P_DISABLED_BY_REGKEY] = "disabled_by_regkey",
		[GRT_P2P_NOT_SUPPORTED] = "not_supported",
		[GRT_P2P_UNKNOWN] = "unknown",
	};

	return status < sizeof(names) / sizeof(names[0]) ? names[status] : NULL;
}

const char *grt_gpu_topology_name(uint32_t topology)
{
	switch (topology) {
	case GRT_TOPO_BOARD: return "board";
	case GRT_TOPO_PIX: return "PIX";
	case GRT_TOPO_PXB: return "PXB";
	case GRT_TOPO_PHB: return "PHB";
	case GRT_TOPO_NODE: return "NODE";
	case GRT_TOPO_SYS: return "SYS";
	}
	return NULL;
}

/* A field NVML did not answer, or answered with a value it does not define, is null. */
static void describe_gpu_link(const struct grt_record *rec, const struct grt_strings *strings,
			      struct grt_fields *out)
{
	const struct grt_gpu_link_rec *g = rec->payload;
	bool p2p = g->flags & GRT_GPU_LINK_F_PCIE_P2P, remotes = g->flags & GRT_GPU_LINK_F_REMOTES;
	char pci[32], peer_pci[32];

	grt_pci_text(g->pci, pci, sizeof(pci));
	grt_pci_text(g->peer_pci, peer_pci, sizeof(peer_pci));
	grt_field_u64(out, "device", g->device);
	grt_field_str(out, "pci", g->pci ? pci : NULL);
	grt_field_u64(out, "peer_device", g->peer_device);
	grt_field_str(out, "peer_pci", g->peer_pci ? peer_pci : NULL);
	grt_field_str(out, "nvlink_p2p", g->flags & GRT_GPU_LINK_F_NVLINK_P2P ?
					       grt_p2p_status_name(g->nvlink_p2p) : NULL);
	grt_field_str(out, "pcie_read_p2p", p2p ? grt_p2p_status_name(g->pcie_read_p2p) : NULL);
	grt_field_str(out, "pcie_write_p2p", p2p ? grt_p2p_status_name(g->pcie_write_p2p) : NULL);
	grt_field_str(out, "topology", g->flags & GRT_GPU_LINK_F_TOPOLOGY ?
					     grt_gpu_topology_name(g->topology) : NULL);
	if (remotes) {
		grt_field_u64(out, "nvlinks", (uint64_t)__builtin_popcount(g->nvlink_links));
		grt_field_hex(out, "nvlink_mask", g->nvlink_links);
		grt_field_u64(out, "nvswitch_links", (uint64_t)__builtin_popcount(g->nvswitch_links));
	} else {
		grt_field_str(out, "nvlinks", NULL);
		grt_field_str(out, "nvlink_mask", NULL);
		grt_field_str(out, "nvswitch_links", NULL);
	}
}

GRT_RECORD_DESC(gpu_link_desc) = {
	.type = GRT_REC_GPU_LINK,
	.name = "gpu_link",
	.min_len = sizeof(struct grt_gpu_link_rec),
	.describe = describe_gpu_link,
};

static void describe_unsupported(const struct grt_record *rec, const struct grt_strings *strings,
				 struct grt_fields *out)
{
	const struct grt_unsupported_probe_rec *u = rec->payload;

	grt_field_str(out, "source", grt_source_name(u->source));
	grt_field_str(out, "probe", grt_strings_get(strings, u->probe_str));
	grt_field_i64(out, "error", u->error);
	grt_field_str(out, "reason", grt_strings_get(strings, u->reason_str));
}

GRT_RECORD_DESC(unsupported_probe_desc) = {
	.type = GRT_REC_UNSUPPORTED_PROBE,
	.name = "unsupported_probe",
	.min_len = sizeof(struct grt_unsupported_probe_rec),
	.describe = describe_unsupported,
};

static void describe_pci_config(const struct grt_record *rec, const struct grt_strings *strings,
				struct grt_fields *out)
{
	const struct grt_pci_config_rec *c = rec->payload;
	char pci[32];

	grt_pci_text(c->pci, pci, sizeof(pci));
	grt_field_str(out, "pci", pci);
	grt_field_str(out, "access", c->write ? "write" : "read");
	grt_field_hex(out, "where", c->where);
	grt_field_u64(out, "size", c->size);
	if (c->write || (c->flags & GRT_PCI_CONFIG_F_VALUE))
		grt_field_hex(out, "value", c->value);
	grt_field_str(out, "via", c->flags & GRT_PCI_CONFIG_F_USER ? "user" : "kernel");
	if (c->flags & GRT_PCI_CONFIG_F_FAILED)
		grt_field_u64(out, "failed", 1);
}

GRT_RECORD_DESC(pci_config_desc) = {
	.type = GRT_REC_PCI_CONFIG,
	.name = "pci_config",
	.min_len = sizeof(struct grt_pci_config_rec),
	.describe = describe_pci_config,
};
