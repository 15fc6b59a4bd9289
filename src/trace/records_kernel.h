/* Payloads of the kernel-side sources: syscall, sched, fence, xid, pcie. */
#ifndef GRT_RECORDS_KERNEL_H
#define GRT_RECORDS_KERNEL_H

#include <stdint.h>
#include "grt_format.h"

enum grt_kernel_record_type {
	GRT_REC_SYSCALL = GRT_REC_KERNEL_FIRST,		/* one syscall, entry and exit paired */
	GRT_REC_NV_IOCTL = GRT_REC_KERNEL_FIRST + 1,	/* an ioctl on an NVIDIA device, decoded */
	GRT_REC_SCHED_OFFCPU = GRT_REC_KERNEL_FIRST + 2, /* a traced thread was off-CPU */
	GRT_REC_SCHED_WAKEUP = GRT_REC_KERNEL_FIRST + 3,
	GRT_REC_FENCE = GRT_REC_KERNEL_FIRST + 4,
	GRT_REC_XID = GRT_REC_KERNEL_FIRST + 5,
	GRT_REC_PCIE_SAMPLE = GRT_REC_KERNEL_FIRST + 6,
	GRT_REC_UNSUPPORTED_PROBE = GRT_REC_KERNEL_FIRST + 7,
};

/* Header ts_ns is when the thread left the CPU. */
struct grt_sched_offcpu_rec {
	uint64_t on_cpu_ns;	/* when it ran again */
	uint32_t prev_state;	/* task state at switch-out (0 = preempted while runnable) */
	uint32_t waker_tid;	/* 0 when unknown */
};

struct grt_xid_rec {
	uint32_t device;	/* PCI bus id as the driver reports it, packed; see msg */
	uint32_t code;		/* the Xid number */
	uint32_t msg_str;
	uint32_t dev_str;
};

_Static_assert(sizeof(struct grt_sched_offcpu_rec) == 16, "offcpu layout");
_Static_assert(sizeof(struct grt_xid_rec) == 16, "xid layout");

/* Further payloads (syscall, nv_ioctl, fence, pcie sample) are defined below as they land. */

#endif
