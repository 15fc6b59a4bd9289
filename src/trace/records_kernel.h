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
	GRT_REC_PCI_CONFIG = GRT_REC_KERNEL_FIRST + 8,	/* a PCI config-space access (kprobe kernels) */
	GRT_REC_NVLINK_SAMPLE = GRT_REC_KERNEL_FIRST + 9, /* data over one NVLink link of one GPU */
	GRT_REC_GPU_LINK = GRT_REC_KERNEL_FIRST + 10,	/* how one GPU reaches another (NVML topology) */
};

/* Header ts_ns is when the thread left the CPU. */
struct grt_sched_offcpu_rec {
	uint64_t on_cpu_ns;	/* when it ran again */
	uint32_t prev_state;	/* task state at switch-out (0 = preempted while runnable) */
	uint32_t waker_tid;	/* 0 when unknown */
};

struct grt_xid_rec {
	uint32_t device;	/* PCI address packed by grt_pci_pack(), 0 when unparsable; see dev_str */
	uint32_t code;		/* the Xid number */
	uint32_t msg_str;
	uint32_t dev_str;
};

_Static_assert(sizeof(struct grt_sched_offcpu_rec) == 16, "offcpu layout");
_Static_assert(sizeof(struct grt_xid_rec) == 16, "xid layout");

/* A PCI address "DDDD:BB:dd.f" packed as domain<<16 | bus<<8 | device<<3 | function. */
static inline uint32_t grt_pci_pack(uint32_t domain, uint32_t bus, uint32_t dev, uint32_t fn)
{
	return (domain & 0xffff) << 16 | (bus & 0xff) << 8 | (dev & 0x1f) << 3 | (fn & 7);
}

/* A grt_pci_pack() address as "dddd:bb:dd.f" (records_kernel.c); buf needs 16 bytes. */
void grt_pci_text(uint32_t pci, char *buf, unsigned len);

/* ---- syscall ---- */

enum grt_syscall_flags {
	GRT_SYSCALL_F_NO_RETURN = 1,	/* exit/exit_group: no exit event exists, ret and exit_ns are 0 */
	GRT_SYSCALL_F_UNFINISHED = 2,	/* still in the kernel when recording stopped */
};

/*
 * Header ts_ns is the entry, pid/tid the caller. Numbers are the x86-64
 * syscall numbers (grt_syscall_name() in kernel_names.h names them).
 */
struct grt_syscall_rec {
	uint64_t call_id;	/* unique per recording; an nv_ioctl record of the same call shares it */
	uint64_t exit_ns;
	uint64_t args[6];
	int64_t ret;
	uint32_t nr;
	uint32_t flags;		/* enum grt_syscall_flags */
};

_Static_assert(sizeof(struct grt_syscall_rec) == 80, "syscall layout");

/* Which NVIDIA device file an ioctl went to. */
enum grt_nv_device {
	GRT_NV_DEV_UNKNOWN = 0,
	GRT_NV_DEV_CTL = 1,		/* /dev/nvidiactl */
	GRT_NV_DEV_GPU = 2,		/* /dev/nvidiaN */
	GRT_NV_DEV_UVM = 3,		/* /dev/nvidia-uvm */
	GRT_NV_DEV_UVM_TOOLS = 4,	/* /dev/nvidia-uvm-tools */
	GRT_NV_DEV_MODESET = 5,		/* /dev/nvidia-modeset */
	GRT_NV_DEV_OTHER = 6,		/* another nvidia* node (caps, nvswitch, ...) */
};

enum grt_nv_ioctl_flags {
	GRT_NV_F_CLASS = 1,	/* object_class is valid */
	GRT_NV_F_CMD = 2,	/* control_cmd is valid */
	GRT_NV_F_HANDLE = 4,	/* handle is valid */
	GRT_NV_F_STATUS = 8,	/* rm_status is valid */
	GRT_NV_F_XFER = 16,	/* the call came through NV_ESC_IOCTL_XFER_CMD; op is the inner escape */
	GRT_NV_F_ARG_UNREADABLE = 32, /* the argument could not be read after the call */
};

/*
 * An ioctl on an NVIDIA device file, decoded. It accompanies the syscall
 * record of the same call_id (same header). For the RM devices (ctl, GPU) op
 * is the NV_ESC_* escape number, for nvidia-uvm the UVM_* ioctl number.
 */
struct grt_nv_ioctl_rec {
	uint64_t call_id;
	uint64_t exit_ns;
	uint64_t arg;		/* the user pointer passed */
	int64_t ret;
	uint32_t fd;
	uint32_t request;	/* the ioctl request as passed */
	uint32_t device;	/* enum grt_nv_device */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t op;
	uint32_t object_class;	/* RM_ALLOC / RM_ALLOC_MEMORY hClass */
	uint32_t control_cmd;	/* RM_CONTROL cmd */
	uint32_t handle;	/* new object (alloc), target (control), freed object (free) */
	uint32_t rm_status;	/* NV_STATUS the driver wrote back (0 = NV_OK) */
	uint32_t flags;		/* enum grt_nv_ioctl_flags */
	uint32_t path_str;	/* the device file's name */
};

_Static_assert(sizeof(struct grt_nv_ioctl_rec) == 80, "nv_ioctl layout");

/* ---- sched ---- */

/* Header pid/tid is the waker (the running thread), ts_ns the wakeup. */
struct grt_sched_wakeup_rec {
	uint32_t target_pid;
	uint32_t target_tid;
	uint32_t target_cpu;
	int32_t prio;
};

_Static_assert(sizeof(struct grt_sched_wakeup_rec) == 16, "wakeup layout");

/* ---- fence ---- */

enum grt_fence_event {
	GRT_FENCE_INIT = 1,
	GRT_FENCE_EMIT = 2,
	GRT_FENCE_ENABLE_SIGNAL = 3,
	GRT_FENCE_SIGNALED = 4,
	GRT_FENCE_DESTROY = 5,
	GRT_FENCE_WAIT_START = 6,
	GRT_FENCE_WAIT_END = 7,
};

enum grt_fence_flags {
	GRT_FENCE_F_WAIT_MATCHED = 1,	/* wait_end: wait_ns is measured from this thread's wait_start */
};

/* One dma_fence tracepoint. Header pid/tid is the thread it fired in (an IRQ's victim for signaled). */
struct grt_fence_rec {
	uint64_t context;
	uint64_t seqno;
	uint64_t wait_ns;	/* wait_end with GRT_FENCE_F_WAIT_MATCHED: the wait's duration */
	uint32_t event;		/* enum grt_fence_event */
	uint32_t flags;		/* enum grt_fence_flags */
	uint32_t driver_str;
	uint32_t timeline_str;
};

_Static_assert(sizeof(struct grt_fence_rec) == 40, "fence layout");

/* ---- pcie / nvlink ---- */

enum grt_pcie_sample_flags {
	GRT_PCIE_F_PCIE = 1,	/* pcie_tx/rx are valid */
	GRT_PCIE_F_NVLINK = 2,	/* nvlink_tx/rx are valid */
};

/* Throughput of one GPU over the sampling interval ending at header ts_ns. */
struct grt_pcie_sample_rec {
	uint32_t device;	/* NVML device index */
	uint32_t pci;		/* grt_pci_pack() of the GPU, 0 when unknown */
	uint32_t interval_ms;	/* the sampling period */
	uint32_t flags;		/* enum grt_pcie_sample_flags */
	uint64_t pcie_tx_bps;	/* bytes per second, GPU to host */
	uint64_t pcie_rx_bps;	/* bytes per second, host to GPU */
	uint64_t nvlink_tx_bps;	/* bytes per second over all links (data, not raw) */
	uint64_t nvlink_rx_bps;
};

_Static_assert(sizeof(struct grt_pcie_sample_rec) == 48, "pcie sample layout");

/*
 * Data sent and received over one NVLink link of one GPU in the sampling
 * interval ending at header ts_ns (NVML's per-link data throughput counters,
 * payload bytes without protocol overhead).
 */
struct grt_nvlink_sample_rec {
	uint32_t device;	/* NVML device index */
	uint32_t pci;		/* grt_pci_pack() of the GPU, 0 when unknown */
	uint32_t link;		/* link number on that GPU */
	uint32_t interval_ms;
	uint64_t tx_bytes;	/* in the interval */
	uint64_t rx_bytes;
	uint64_t tx_bps;
	uint64_t rx_bps;
};

_Static_assert(sizeof(struct grt_nvlink_sample_rec) == 48, "nvlink sample layout");

/* Which fields of a gpu_link record NVML answered; a field without its flag is unknown. */
enum grt_gpu_link_flags {
	GRT_GPU_LINK_F_NVLINK_P2P = 1,	/* nvlink_p2p */
	GRT_GPU_LINK_F_PCIE_P2P = 2,	/* pcie_read_p2p and pcie_write_p2p */
	GRT_GPU_LINK_F_TOPOLOGY = 4,	/* topology */
	GRT_GPU_LINK_F_REMOTES = 8,	/* nvlink_links and nvswitch_links: every link's far end was read */
};

/* NVML's P2P status (nvmlGpuP2PStatus_t) for one capability between two GPUs. */
enum grt_p2p_status {
	GRT_P2P_OK = 0,
	GRT_P2P_CHIPSET_NOT_SUPPORTED = 1,
	GRT_P2P_GPU_NOT_SUPPORTED = 2,
	GRT_P2P_TOPOLOGY_NOT_SUPPORTED = 3,
	GRT_P2P_DISABLED_BY_REGKEY = 4,
	GRT_P2P_NOT_SUPPORTED = 5,
	GRT_P2P_UNKNOWN = 6,
};

/* NVML's closest common ancestor of two GPUs (nvmlGpuTopologyLevel_t), nvidia-smi's names. */
enum grt_gpu_topology {
	GRT_TOPO_BOARD = 0,	/* one board (a dual-GPU card) */
	GRT_TOPO_PIX = 10,	/* one PCIe switch */
	GRT_TOPO_PXB = 20,	/* several PCIe switches, no host bridge */
	GRT_TOPO_PHB = 30,	/* one PCIe host bridge */
	GRT_TOPO_NODE = 40,	/* host bridges of one NUMA node */
	GRT_TOPO_SYS = 50,	/* across NUMA nodes */
};

/*
 * How GPU device reaches GPU peer_device, as NVML said when recording
 * started: one record per ordered pair of GPUs NVML sees. Link bits count
 * the links of device, whichever way the data flows.
 */
struct grt_gpu_link_rec {
	uint32_t device;	/* NVML device index */
	uint32_t pci;		/* grt_pci_pack() of the GPU, 0 when unknown */
	uint32_t peer_device;
	uint32_t peer_pci;
	uint32_t flags;		/* enum grt_gpu_link_flags */
	uint32_t topology;	/* enum grt_gpu_topology */
	uint8_t nvlink_p2p;	/* enum grt_p2p_status of P2P over NVLink */
	uint8_t pcie_read_p2p;	/* of P2P reads and writes (over PCIe when not over NVLink) */
	uint8_t pcie_write_p2p;
	uint8_t reserved;
	uint32_t nvlink_links;	/* a bit per link of device whose far end is peer's GPU */
	uint32_t nvswitch_links; /* a bit per link of device whose far end is an NVSwitch */
	uint32_t reserved2;
};

_Static_assert(sizeof(struct grt_gpu_link_rec) == 40, "gpu link layout");

/* "ok", "not_supported", ...; NULL for a value NVML does not define. */
const char *grt_p2p_status_name(uint32_t status);
/* "PIX", "SYS", ... as nvidia-smi topo -m prints them; NULL for a value NVML does not define. */
const char *grt_gpu_topology_name(uint32_t topology);

/* A probe a source wanted but this kernel or machine cannot give; the source went on without it. */
struct grt_unsupported_probe_rec {
	uint32_t source;	/* enum grt_source_id */
	int32_t error;		/* negative errno */
	uint32_t probe_str;	/* what was not attached: "kprobe:pci_bus_read_config_*" */
	uint32_t reason_str;	/* why, one line */
};

_Static_assert(sizeof(struct grt_unsupported_probe_rec) == 16, "unsupported probe layout");

enum grt_pci_config_flags {
	GRT_PCI_CONFIG_F_VALUE = 1,	/* value is what was read or written (else: a write's value only) */
	GRT_PCI_CONFIG_F_USER = 2,	/* through pci_user_*: a process's sysfs or procfs config file */
	GRT_PCI_CONFIG_F_FAILED = 4,	/* the access returned an error; value is the error response */
};

/*
 * A PCI config-space read or write (fexit or kprobes on pci_{bus,user}_{read,write}_config_*),
 * stamped when it completed.
 */
struct grt_pci_config_rec {
	uint32_t pci;		/* grt_pci_pack() of the target function */
	uint32_t where;		/* config-space offset */
	uint32_t size;		/* 1, 2 or 4 bytes */
	uint32_t write;		/* 1 for writes */
	uint32_t value;		/* see GRT_PCI_CONFIG_F_VALUE; traces before it: writes only */
	uint32_t flags;		/* enum grt_pci_config_flags */
};

_Static_assert(sizeof(struct grt_pci_config_rec) == 24, "pci config layout");

#endif
