/* Renders an agent snapshot: per-process CUDA families, node-wide leaks, the agent's own health. */
#include <inttypes.h>
#include <stdio.h>
#include "serve/metrics.h"
#include "trace/records_cuda.h"
#include "trace/records_kernel.h"
#include "trace/trace_names.h"

/*
 * Log2 buckets of the kernel side: bucket i holds [2^i, 2^(i+1)) ns, so its
 * observations are all below 2^(i+1) ns. Exposed from 2^10 ns (about 1 us;
 * the buckets below fold into it) to 2^35 ns (about 34 s; above that only +Inf).
 */
#define FIRST_BOUND_LOG2 10
#define LAST_BOUND_LOG2 35
#define NBOUNDS (LAST_BOUND_LOG2 - FIRST_BOUND_LOG2 + 1)

const double *serve_duration_bounds(size_t *n)
{
	static double bounds[NBOUNDS];

	if (!bounds[0])
		for (int i = 0; i < NBOUNDS; i++)
			bounds[i] = (double)(1ull << (FIRST_BOUND_LOG2 + i)) / 1e9;
	*n = NBOUNDS;
	return bounds;
}

void serve_duration_buckets(const struct agg_api_stats *stats, uint64_t *out)
{
	for (int i = 0; i < NBOUNDS; i++)
		out[i] = 0;
	for (int b = 0; b < AGG_HIST_BUCKETS; b++) {
		int at = b + 1 - FIRST_BOUND_LOG2; /* bucket b ends at 2^(b+1) */

		if (at < 0)
			at = 0;
		if (at < NBOUNDS)
			out[at] += stats->hist[b];
	}
}

struct proc_labels {
	char pid[16];
	struct prom_label set[3]; /* pid, comm, and one of the family's own */
};

static void proc_labels_init(struct proc_labels *l, const struct serve_proc_snapshot *p)
{
	snprintf(l->pid, sizeof(l->pid), "%u", p->pid);
	l->set[0] = (struct prom_label){"pid", l->pid};
	l->set[1] = (struct prom_label){"comm", p->comm};
}

static void write_launches(struct prom_writer *w, const struct serve_snapshot *s)
{
	prom_family(w, "grtrace_cuda_launches", PROM_COUNTER,
		    "Kernel launches (cuLaunchKernel, cuLaunchKernelEx, cooperative) per kernel "
		    "name; past --kernel-labels names a process's rest are kernel=\"other\".");
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc_labels l;

		proc_labels_init(&l, &s->procs[i]);
		for (size_t k = 0; k < s->procs[i].nkernels; k++) {
			l.set[2] = (struct prom_label){"kernel", s->procs[i].kernels[k].label};
			prom_sample_u64(w, "", l.set, 3, s->procs[i].kernels[k].launches);
		}
	}
}

/* A per-API counter family from one field of struct agg_api_stats. */
static void write_api_counter(struct prom_writer *w, const struct serve_snapshot *s,
			      const char *name, const char *help, size_t field)
{
	prom_family(w, name, PROM_COUNTER, help);
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc_labels l;

		proc_labels_init(&l, &s->procs[i]);
		for (size_t a = 0; a < s->procs[i].napis; a++) {
			const char *st = (const char *)&s->procs[i].apis[a].stats;

			l.set[2] = (struct prom_label){"api", grt_cuda_api_name(s->procs[i].apis[a].api)};
			prom_sample_u64(w, "", l.set, 3, *(const uint64_t *)(st + field));
		}
	}
}

static void write_apis(struct prom_writer *w, const struct serve_snapshot *s)
{
	size_t nbounds;
	const double *bounds = serve_duration_bounds(&nbounds);
	uint64_t counts[NBOUNDS];

	write_api_counter(w, s, "grtrace_cuda_api_calls",
			  "CUDA driver API calls per entry point, counted at entry.",
			  offsetof(struct agg_api_stats, calls));
	write_api_counter(w, s, "grtrace_cuda_api_errors",
			  "CUDA driver API calls that returned an error (a CUresult other than 0).",
			  offsetof(struct agg_api_stats, errors));
	prom_family(w, "grtrace_cuda_api_duration_seconds", PROM_HISTOGRAM,
		    "Host time from a CUDA driver API call's entry to its return.");
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc_labels l;

		proc_labels_init(&l, &s->procs[i]);
		for (size_t a = 0; a < s->procs[i].napis; a++) {
			const struct agg_api_stats *st = &s->procs[i].apis[a].stats;

			l.set[2] = (struct prom_label){"api", grt_cuda_api_name(s->procs[i].apis[a].api)};
			serve_duration_buckets(st, counts);
			prom_histogram(w, l.set, 3, bounds, counts, nbounds, st->returns,
				       (double)st->duration_ns / 1e9);
		}
	}
}

/* One sample per allocation kind (or copy direction) the process used. */
static void write_by_kind(struct prom_writer *w, const struct serve_snapshot *s, size_t field,
			  size_t used_field, const char *label, const char *(*name_of)(uint32_t))
{
	for (size_t i = 0; i < s->nprocs; i++) {
		const char *base = (const char *)&s->procs[i].stats;
		const uint64_t *values = (const uint64_t *)(base + field);
		const uint64_t *used = (const uint64_t *)(base + used_field);
		struct proc_labels l;

		proc_labels_init(&l, &s->procs[i]);
		for (uint32_t k = 0; k < AGG_ALLOC_KINDS; k++) {
			if (!used[k])
				continue;
			l.set[2] = (struct prom_label){label, name_of(k)};
			prom_sample_u64(w, "", l.set, 3, values[k]);
		}
	}
}

static const char *copy_direction(uint32_t kind)
{
	static const char *const names[] = {
	    [GRT_COPY_UNKNOWN] = "unknown", [GRT_COPY_HTOD] = "htod", [GRT_COPY_DTOH] = "dtoh",
	    [GRT_COPY_DTOD] = "dtod",	    [GRT_COPY_HTOH] = "htoh", [GRT_COPY_PEER] = "peer",
	    [GRT_COPY_DEFAULT] = "unified",
	};

	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "unknown";
}

#define STAT_OFFSET(field) offsetof(struct agg_proc_stats, field)

static void write_memory(struct prom_writer *w, const struct serve_snapshot *s)
{
	prom_family(w, "grtrace_cuda_memory_in_use_bytes", PROM_GAUGE,
		    "CUDA memory allocated and not freed yet; after the process exited, what it "
		    "never freed.");
	write_by_kind(w, s, STAT_OFFSET(in_use_bytes), STAT_OFFSET(alloc_bytes), "kind",
		      grt_alloc_kind_name);
	prom_family(w, "grtrace_cuda_alloc_bytes", PROM_COUNTER,
		    "Bytes of CUDA memory allocated (successful allocations).");
	write_by_kind(w, s, STAT_OFFSET(alloc_bytes), STAT_OFFSET(alloc_bytes), "kind",
		      grt_alloc_kind_name);
	prom_family(w, "grtrace_cuda_memcpy_bytes", PROM_COUNTER,
		    "Bytes copied by successful cuMemcpy* calls, by direction.");
	write_by_kind(w, s, STAT_OFFSET(copy_bytes), STAT_OFFSET(copies), "direction",
		      copy_direction);
	prom_family(w, "grtrace_cuda_memcpy_calls", PROM_COUNTER,
		    "Successful cuMemcpy* calls, by direction.");
	write_by_kind(w, s, STAT_OFFSET(copies), STAT_OFFSET(copies), "direction",
		      copy_direction);
}

static void write_process_totals(struct prom_writer *w, const struct serve_snapshot *s)
{
	prom_family(w, "grtrace_cuda_sync_wait_seconds", PROM_COUNTER,
		    "Host time spent waiting in cuCtxSynchronize, cuStreamSynchronize and "
		    "cuEventSynchronize.");
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc_labels l;

		proc_labels_init(&l, &s->procs[i]);
		prom_sample(w, "", l.set, 2, (double)s->procs[i].stats.sync_wait_ns / 1e9);
	}
	prom_family(w, "grtrace_cuda_process_exited", PROM_GAUGE,
		    "1 once the process exited: its series stay for --idle-timeout seconds.");
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc_labels l;

		proc_labels_init(&l, &s->procs[i]);
		prom_sample_u64(w, "", l.set, 2, s->procs[i].exited);
	}
}

/* One UVM family: a sample per value of label for each process with a UVM tracker. */
static void write_uvm_family(struct prom_writer *w, const struct serve_snapshot *s,
			     const char *name, const char *help, const char *label, unsigned n,
			     const char *(*name_of)(unsigned), size_t field)
{
	prom_family(w, name, PROM_COUNTER, help);
	for (size_t i = 0; i < s->nprocs; i++) {
		const uint64_t *values =
		    (const uint64_t *)((const char *)&s->procs[i].uvm + field);
		struct proc_labels l;

		if (!s->procs[i].uvm_bound)
			continue;
		proc_labels_init(&l, &s->procs[i]);
		for (unsigned v = 0; v < n; v++) {
			/* what the driver does not count is left out, not shown as 0 */
			if (field == offsetof(struct uvm_counts, migrated_bytes) &&
			    (s->procs[i].uvm.uncounted_directions & (1u << v)))
				continue;
			l.set[2] = (struct prom_label){label, name_of(v)};
			prom_sample_u64(w, "", l.set, 3, values[v]);
		}
	}
}

/* Per process with a UVM tracker: faults by the side that faulted, bytes migrated by direction. */
static void write_uvm(struct prom_writer *w, const struct serve_snapshot *s)
{
	if (!s->uvm_counted)
		return;
	write_uvm_family(w, s, "grtrace_uvm_faults",
			 "Unified-memory page faults: processor=\"cpu\" the CPU touched pages a GPU "
			 "held, \"gpu\" a GPU touched pages it did not hold (replays not counted "
			 "again).",
			 "processor", UVM_FAULT_SIDES, uvm_fault_side_name,
			 offsetof(struct uvm_counts, faults));
	write_uvm_family(w, s, "grtrace_uvm_migrated_bytes",
			 "Bytes the UVM driver migrated for the process, by direction (dtod, "
			 "between GPUs, only where the driver's events are read: its counters have "
			 "none).",
			 "direction",
			 UVM_DIRECTIONS, uvm_direction_name,
			 offsetof(struct uvm_counts, migrated_bytes));
}

static void write_leaks(struct prom_writer *w, const struct serve_snapshot *s)
{
	prom_family(w, "grtrace_cuda_leaked_bytes", PROM_COUNTER,
		    "CUDA memory still allocated when its process exited, over every process since "
		    "the agent started.");
	for (uint32_t k = 1; k < AGG_ALLOC_KINDS; k++) {
		struct prom_label kind = {"kind", grt_alloc_kind_name(k)};

		prom_sample_u64(w, "", &kind, 1, s->leaked_bytes[k]);
	}
	prom_family(w, "grtrace_cuda_leaking_processes", PROM_COUNTER,
		    "Processes that exited with CUDA memory still allocated.");
	prom_sample_u64(w, "", NULL, 0, s->leaking_processes);
}

/* The NVML gauge families: which flag says a device has the reading, and where it is. */
static const struct {
	const char *name, *help;
	bool gauge;    /* flag is of gauges.flags (enum nvml_gauge_flags), not of flags */
	uint32_t flag;
	size_t field;  /* in struct serve_device */
	bool narrow;   /* a uint32_t, else a uint64_t */
	double scale;  /* 0: the integer as is */
} device_families[] = {
    {"grtrace_gpu_utilization_ratio",
     "Share of the last NVML sample period in which a kernel ran on the GPU.", true,
     NVML_G_UTILIZATION, offsetof(struct serve_device, gauges.gpu_util_pct), true, 0.01},
    {"grtrace_gpu_memory_utilization_ratio",
     "Share of the last NVML sample period in which device memory was read or written.", true,
     NVML_G_UTILIZATION, offsetof(struct serve_device, gauges.mem_util_pct), true, 0.01},
    {"grtrace_gpu_memory_used_bytes", "Device memory in use on the GPU, all processes (NVML).",
     true, NVML_G_MEMORY, offsetof(struct serve_device, gauges.mem_used_bytes), false, 0},
    {"grtrace_gpu_memory_total_bytes", "Device memory of the GPU (NVML).", true, NVML_G_MEMORY,
     offsetof(struct serve_device, gauges.mem_total_bytes), false, 0},
    {"grtrace_gpu_power_watts", "Power the GPU draws (NVML).", true, NVML_G_POWER,
     offsetof(struct serve_device, gauges.power_mw), true, 0.001},
    {"grtrace_gpu_pcie_tx_bytes_per_second",
     "PCIe throughput from the GPU to the host over the last NVML interval.", false,
     GRT_PCIE_F_PCIE, offsetof(struct serve_device, pcie_tx_bps), false, 0},
    {"grtrace_gpu_pcie_rx_bytes_per_second",
     "PCIe throughput from the host to the GPU over the last NVML interval.", false,
     GRT_PCIE_F_PCIE, offsetof(struct serve_device, pcie_rx_bps), false, 0},
    {"grtrace_gpu_nvlink_tx_bytes_per_second",
     "NVLink data sent by the GPU over all links, last NVML interval.", false, GRT_PCIE_F_NVLINK,
     offsetof(struct serve_device, nvlink_tx_bps), false, 0},
    {"grtrace_gpu_nvlink_rx_bytes_per_second",
     "NVLink data received by the GPU over all links, last NVML interval.", false,
     GRT_PCIE_F_NVLINK, offsetof(struct serve_device, nvlink_rx_bps), false, 0},
};

/* Per NVLink link and direction, the bytes since the agent started; GPUs labelled as the gauges are. */
static void write_nvlinks(struct prom_writer *w, const struct serve_snapshot *s)
{
	if (!s->nnvlinks)
		return;
	prom_family(w, "grtrace_nvlink_bytes", PROM_COUNTER,
		    "Data bytes over one NVLink link of one GPU (NVML per-link counters).");
	for (size_t i = 0; i < s->nnvlinks; i++) {
		char device[16], pci[32], link[16];

		snprintf(device, sizeof(device), "%u", s->nvlinks[i].device);
		grt_pci_text(s->nvlinks[i].pci, pci, sizeof(pci));
		snprintf(link, sizeof(link), "%u", s->nvlinks[i].link);
		for (int rx = 0; rx < 2; rx++) {
			struct prom_label labels[] = {
				{"device", device}, {"pci", pci}, {"link", link},
				{"direction", rx ? "rx" : "tx"}};

			prom_sample_u64(w, "", labels, 4,
					rx ? s->nvlinks[i].rx_bytes : s->nvlinks[i].tx_bytes);
		}
	}
}

/* Every device family one of the GPUs has; each GPU by NVML index and PCI address. */
static void write_devices(struct prom_writer *w, const struct serve_snapshot *s)
{
	write_nvlinks(w, s);
	for (size_t f = 0; f < sizeof(device_families) / sizeof(device_families[0]); f++) {
		bool family = false;

		for (size_t i = 0; i < s->ndevices; i++) {
			const struct serve_device *d = &s->devices[i];
			const char *field = (const char *)d + device_families[f].field;
			uint32_t flags = device_families[f].gauge ? d->gauges.flags : d->flags;
			char index[16], pci[32];
			struct prom_label labels[] = {{"device", index}, {"pci", pci}};
			uint64_t v;

			if (!(flags & device_families[f].flag))
				continue;
			if (!family)
				prom_family(w, device_families[f].name, PROM_GAUGE,
					    device_families[f].help);
			family = true;
			snprintf(index, sizeof(index), "%u", d->device);
			grt_pci_text(d->pci, pci, sizeof(pci));
			v = device_families[f].narrow ? *(const uint32_t *)field
						      : *(const uint64_t *)field;
			if (device_families[f].scale)
				prom_sample(w, "", labels, 2, (double)v * device_families[f].scale);
			else
				prom_sample_u64(w, "", labels, 2, v);
		}
	}
}

/* The agent's single-sample health families: name, type, help, and the field they show. */
static const struct {
	const char *name;
	enum prom_type type;
	const char *help;
	size_t field;
	bool seconds; /* the field is in ns */
} health[] = {
    {"grtrace_processes_tracked", PROM_GAUGE, "Running processes the agent has seen calling CUDA.",
     offsetof(struct serve_health, processes_tracked)},
    {"grtrace_processes_exited", PROM_GAUGE,
     "Exited processes whose series are kept until the idle timeout.",
     offsetof(struct serve_health, processes_exited)},
    {"grtrace_processes_seen", PROM_COUNTER, "Processes seen calling CUDA since the agent started.",
     offsetof(struct serve_health, processes_seen_total)},
    {"grtrace_libcuda_files_probed", PROM_GAUGE, "Distinct libcuda files whose entry points are probed.",
     offsetof(struct serve_health, libraries_probed)},
    {"grtrace_probes_refused", PROM_GAUGE, "libcuda entry points the kernel refused to probe.",
     offsetof(struct serve_health, refused_probes)},
    {"grtrace_bpf_run_seconds", PROM_COUNTER,
     "Time spent in the agent's BPF programs (kernel BPF statistics).",
     offsetof(struct serve_health, bpf_run_ns), true},
    {"grtrace_bpf_runs", PROM_COUNTER, "Runs of the agent's BPF programs.",
     offsetof(struct serve_health, bpf_runs)},
};

static void write_xids(struct prom_writer *w, const struct serve_snapshot *s)
{
	if (!s->xid_counted)
		return;
	prom_family(w, "grtrace_xid_errors", PROM_COUNTER,
		    "NVIDIA Xid errors (nvidia:nvidia_dev_xid) per GPU and Xid code.");
	for (size_t i = 0; i < s->nxids; i++) {
		char code[16];
		struct prom_label labels[] = {{"device", s->xids[i].device}, {"xid", code}};

		snprintf(code, sizeof(code), "%u", s->xids[i].xid);
		prom_sample_u64(w, "", labels, 2, s->xids[i].count);
	}
}

static void write_health(struct prom_writer *w, const struct serve_snapshot *s)
{
	const struct serve_health *h = &s->health;
	struct prom_label source;

	prom_family(w, "grtrace_events_lost", PROM_COUNTER,
		    "What the agent could not count: calls (full counter maps, or inside four other "
		    "calls of their thread: counted, not timed), allocations (full "
		    "allocation table), notifications (full ring buffers), nvml (samples), uvm (driver "
		    "drops, unreadable entries).");
	source = (struct prom_label){"source", "cuda"};
	prom_sample_u64(w, "", &source, 1, h->lost_counts + h->lost_allocs);
	source = (struct prom_label){"source", "notifications"};
	prom_sample_u64(w, "", &source, 1, h->lost_events);
	source = (struct prom_label){"source", "nvml"};
	prom_sample_u64(w, "", &source, 1, h->lost_samples);
	if (s->uvm_counted) {
		source = (struct prom_label){"source", "uvm"};
		prom_sample_u64(w, "", &source, 1, h->lost_uvm);
	}
	for (size_t i = 0; i < sizeof(health) / sizeof(health[0]); i++) {
		const uint64_t *value = (const uint64_t *)((const char *)h + health[i].field);

		prom_family(w, health[i].name, health[i].type, health[i].help);
		if (health[i].seconds)
			prom_sample(w, "", NULL, 0, (double)*value / 1e9);
		else
			prom_sample_u64(w, "", NULL, 0, *value);
	}
}

void serve_metrics_write(FILE *out, enum prom_format format, const struct serve_snapshot *s)
{
	struct prom_writer w;

	prom_writer_init(&w, out, format);
	write_launches(&w, s);
	write_apis(&w, s);
	write_memory(&w, s);
	write_process_totals(&w, s);
	write_uvm(&w, s);
	write_leaks(&w, s);
	write_devices(&w, s);
	write_xids(&w, s);
	write_health(&w, s);
	prom_finish(&w);
}
