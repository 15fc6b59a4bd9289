// SPDX-License-Identifier: GPL-2.0
/*
 * DRM job events from the drivers' tracepoints (DRM scheduler, amdgpu, i915, xe, virtio-gpu),
 * decoded through layouts read from tracefs at run time. Recorded whoever runs: completions
 * fire in the drivers' threads and interrupts, and the submitter is in the submit event.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drop_counter.bpf.h"
#include "drm.h"

char LICENSE[] SEC("license") = "GPL";

/* One layout per tracepoint, from its format file (drm.c); unused ones stay empty. */
const volatile struct drm_layout layouts[DRM_TP_COUNT];

/* The tracepoint drm_test_event() decodes; set by the tests only. */
__u32 test_tracepoint = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} drm_events SEC(".maps");

static __always_inline __u64 read_int(const void *entry, __u16 offset, __u8 size, __u8 kind)
{
	__u64 v = 0;

	if (kind != DRM_FIELD_INT)
		return 0;
	if (size == 1)
		bpf_probe_read_kernel(&v, 1, entry + offset);
	else if (size == 2)
		bpf_probe_read_kernel(&v, 2, entry + offset);
	else if (size == 4)
		bpf_probe_read_kernel(&v, 4, entry + offset);
	else if (size == 8)
		bpf_probe_read_kernel(&v, 8, entry + offset);
	return v;
}

static __always_inline void read_string(const void *entry, __u16 offset, __u8 kind, char *out)
{
	__u64 where = 0;
	__u32 loc = 0;

	out[0] = 0;
	if (kind == DRM_FIELD_LOC_STRING) {
		if (bpf_probe_read_kernel(&loc, sizeof(loc), entry + offset))
			return;
		bpf_probe_read_kernel_str(out, DRM_RING_LEN, entry + (loc & 0xffff));
	} else if (kind == DRM_FIELD_PTR_STRING) {
		if (bpf_probe_read_kernel(&where, sizeof(where), entry + offset) || !where)
			return;
		bpf_probe_read_kernel_str(out, DRM_RING_LEN, (const void *)where);
	}
}

#define READ_INT(entry, f) read_int(entry, (f).offset, (f).size, (f).kind)

static __always_inline int handle_drm(const void *entry, __u32 tp)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	const volatile struct drm_layout *l;
	struct drm_event *e;

	if (tp >= DRM_TP_COUNT)
		return 0;
	l = &layouts[tp];
	e = bpf_ringbuf_reserve(&drm_events, sizeof(*e), 0);
	if (!e) {
		count_dropped_event();
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->job = READ_INT(entry, l->job);
	e->fence = READ_INT(entry, l->fence);
	e->context = READ_INT(entry, l->context);
	e->seqno = READ_INT(entry, l->seqno);
	e->arg0 = READ_INT(entry, l->arg0);
	e->arg1 = READ_INT(entry, l->arg1);
	e->tracepoint = tp;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->cpu = bpf_get_smp_processor_id();
	read_string(entry, l->ring.offset, l->ring.kind, e->ring);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

#define DRM_TP_PROGRAM(id, group, name)                                                            \
	SEC("tracepoint/" #group "/" #name)                                                        \
	int name(void *ctx)                                                                        \
	{                                                                                          \
		return handle_drm(ctx, DRM_TP_##id);                                               \
	}
DRM_TRACEPOINTS(DRM_TP_PROGRAM)

/*
 * The same handler behind a raw tracepoint program, for BPF_PROG_TEST_RUN on entries built
 * from real format files (tests): tracepoint programs cannot be test-run. Never attached.
 */
SEC("raw_tp")
int drm_test_event(void *ctx) { return handle_drm(ctx, test_tracepoint); }
