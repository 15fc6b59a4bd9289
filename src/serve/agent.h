/* The node agent's core: discovery, in-kernel counters, process life, snapshots for serve and top. */
#ifndef GRT_SERVE_AGENT_H
#define GRT_SERVE_AGENT_H

#include "trace/records_kernel.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "serve/cuda_agg.h"
#include "serve/uvm_counts.h"
#include "sources/nvml_sampler.h"
#include "serve/xid_counts.h"

struct serve_agent_config {
	const pid_t *pids; /* -p: these processes and their children; none: every process */
	unsigned npids;
	const char *const *libcuda_paths; /* --libcuda: probed at start besides those found */
	unsigned nlibcuda;
	unsigned kernel_labels;	 /* kernel names per process; the rest are kernel="other" */
	double idle_timeout_s;	 /* how long an exited process's series stay */
	double rescan_s;	 /* full /proc rescans (0: the discovery default) */
	FILE *log;		 /* leak reports and notes, one line each; NULL: none */
	bool nvml;		 /* sample device gauges through NVML (-s pcie) */
	bool xid;		 /* count Xid errors (-s xid) */
	bool uvm;		 /* count UVM faults and migrations (-s uvm) */
	const char *uvm_replay;	 /* a UVM queue capture given to every process instead (tests) */
	unsigned nvml_interval_ms;
};

#define SERVE_MAX_DEVICES 16
#define SERVE_MAX_XIDS 64

/* The latest NVML sample of one GPU. */
struct serve_device {
	uint32_t device; /* NVML index */
	uint32_t pci;	 /* grt_pci_pack() */
	uint32_t flags;	 /* GRT_PCIE_F_PCIE, GRT_PCIE_F_NVLINK: which rates are valid */
	uint64_t pcie_tx_bps, pcie_rx_bps, nvlink_tx_bps, nvlink_rx_bps;
	struct nvml_gauges gauges; /* utilization, memory, power: gauges.flags says which */
};

#define SERVE_MAX_NVLINKS 144 /* 8 GPUs of 18 links */

/* Bytes over one NVLink link of one GPU since the agent started (NVML's per-link counters). */
struct serve_nvlink {
	uint32_t device; /* NVML index */
	uint32_t pci;	 /* the GPU's PCI address (grt_pci_pack), 0 when unknown */
	uint32_t link;
	uint64_t tx_bytes, rx_bytes;
};

/* Adds one per-link sample to table (n entries so far, at most SERVE_MAX_NVLINKS). */
void serve_nvlink_add(struct serve_nvlink *table, size_t *n, const struct grt_nvlink_sample_rec *s);

/* Launches of one kernel label of one process. */
struct serve_kernel_count {
	const char *label; /* owned by the agent; valid until the snapshot is freed */
	uint64_t launches;
};

struct serve_api_count {
	uint32_t api; /* enum grt_cuda_api */
	struct agg_api_stats stats;
};

struct serve_proc_snapshot {
	uint32_t pid;
	char comm[AGG_COMM_LEN + 1];
	bool exited;
	struct agg_proc_stats stats;
	bool uvm_bound; /* a UVM tracker was bound to it: uvm holds its counts */
	struct uvm_counts uvm;
	struct serve_kernel_count *kernels;
	size_t nkernels;
	struct serve_api_count *apis;
	size_t napis;
};

struct serve_health {
	uint64_t processes_tracked; /* live processes with CUDA calls */
	uint64_t processes_exited;  /* exited, kept until the idle timeout */
	uint64_t processes_seen_total;
	uint64_t libraries_probed;
	uint64_t loaders_probed;
	uint64_t lost_counts;  /* calls not counted: a counter map was full */
	uint64_t lost_events;  /* notifications lost: ring buffers full */
	uint64_t lost_allocs;  /* allocations not tracked */
	uint64_t bpf_run_ns;
	uint64_t bpf_runs;
	uint64_t refused_probes;
	uint64_t process_scans;
	uint64_t lost_samples; /* NVML samples lost */
	uint64_t lost_uvm;     /* UVM events the driver dropped or that could not be read */
	int discovery_error; /* the last library that could not be probed: negative errno */
};

struct serve_snapshot {
	uint64_t taken_ns; /* CLOCK_MONOTONIC */
	struct serve_proc_snapshot *procs;
	size_t nprocs;
	uint64_t leaked_bytes[AGG_ALLOC_KINDS]; /* by enum grt_alloc_kind, since the agent started */
	uint64_t leaking_processes;
	struct serve_device devices[SERVE_MAX_DEVICES];
	size_t ndevices;
	struct serve_nvlink nvlinks[SERVE_MAX_NVLINKS];
	size_t nnvlinks;
	bool xid_counted;			 /* -s xid is attached: the family is shown */
	bool uvm_counted;			 /* -s uvm: the UVM families are shown */
	struct xid_count xids[SERVE_MAX_XIDS]; /* per GPU and Xid code */
	size_t nxids;
	struct serve_health health;
};

struct serve_agent;

/* Loads and attaches everything. Returns 0 or a negative errno with one line in why. */
int serve_agent_start(struct serve_agent **out, const struct serve_agent_config *cfg, char *why,
		      size_t why_len);
/*
 * Waits up to timeout_ms for probe notifications, then handles them: new
 * processes, names, exits (final counts kept, leaks logged), expiry after
 * the idle timeout, discovery. Safe to call while another thread snapshots.
 */
void serve_agent_poll(struct serve_agent *a, int timeout_ms);
/* Everything as of now, sorted by pid. 0 or -ENOMEM. */
int serve_agent_snapshot(struct serve_agent *a, struct serve_snapshot *out);
void serve_snapshot_free(struct serve_snapshot *s);
/*
 * Adds each process's per-kernel launches to its launch total: the maps keep
 * launches per kernel only, beside the few no kernel's counter had room for.
 */
void serve_snapshot_total_launches(struct serve_snapshot *s);
void serve_agent_stop(struct serve_agent *a);

#endif
