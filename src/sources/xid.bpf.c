// SPDX-License-Identifier: GPL-2.0
/* GPU errors from the NVIDIA driver's nvidia:nvidia_dev_xid tracepoint (device, Xid code, message). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "drop_counter.bpf.h"
#include "xid.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Offsets from the running driver's format file. The defaults are those of
 * TRACE_EVENT(nvidia_dev_xid, __string(dev) __field(u32 error_code) __string(msg)).
 */
const volatile struct xid_layout layout = { .dev = 8, .error_code = 12, .msg = 16 };

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} xid_events SEC(".maps");

static __always_inline void read_loc_string(const void *entry, __u32 off, char *out, __u32 len)
{
	__u32 loc = 0;

	out[0] = 0;
	if (bpf_probe_read_kernel(&loc, sizeof(loc), entry + off))
		return;
	bpf_probe_read_kernel_str(out, len, entry + (loc & 0xffff));
}

/*
 * Every Xid is recorded, whoever is running: the error belongs to the GPU,
 * and the driver reports it from its own context, not the application's.
 */
static __always_inline int handle_xid(const void *entry)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct xid_event *e = bpf_ringbuf_reserve(&xid_events, sizeof(*e), 0);

	if (!e) {
		count_dropped_event();
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->code = 0;
	bpf_probe_read_kernel(&e->code, sizeof(e->code), entry + layout.error_code);
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->cpu = bpf_get_smp_processor_id();
	read_loc_string(entry, layout.dev, e->dev, XID_DEV_LEN);
	read_loc_string(entry, layout.msg, e->msg, XID_MSG_LEN);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tracepoint/nvidia/nvidia_dev_xid")
int xid_tracepoint(void *ctx) { return handle_xid(ctx); }

/* The same handler as a raw tracepoint program for BPF_PROG_TEST_RUN on a synthetic entry (tests). */
SEC("raw_tp")
int xid_test_event(void *ctx) { return handle_xid(ctx); }
