/*
 * The `pcie` source: PCI config-space accesses through kprobes where the
 * kernel has them, and PCIe/NVLink throughput through NVML everywhere.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include "common/clock.h"
#include "common/trusted_file.h"
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"
#include "sources/libcuda_locate.h"
#include "sources/nvml_sampler.h"
#include "sources/pcie.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_kernel.h"
#include "pcie.skel.h"

#define DEFAULT_INTERVAL_MS 100
#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe"

struct pcie_source {
	struct grt_session *session;
	struct pcie_bpf *skel;		/* NULL without kprobes */
	struct grt_bpf_source base;
	struct nvml_sampler *nvml;
};

/*
 * The NVML library to load into grtrace: GRTRACE_NVML_LIBRARY (a test double,
 * a non-standard install) or where the loader finds libnvidia-ml.so.1 — the
 * operator's choice, never the traced program's. It runs as root here, so it
 * must also be a file only root can have changed. 0 with the path, or -errno
 * with why.
 */
static int nvml_library(char *path, size_t len, char *why, size_t why_len)
{
	const char *named = getenv("GRTRACE_NVML_LIBRARY");
	int err;

	if (named && *named)
		snprintf(path, len, "%s", named);
	else if (library_find_for_launch("libnvidia-ml.so.1", NULL, path, len)) {
		snprintf(why, why_len, "libnvidia-ml.so.1 not found in %s", libcuda_search_description());
		return -ENOENT;
	}
	err = trusted_file_check(path, why, why_len);
	if (err && err != -EPERM && err != -EINVAL)
		return err;
	if (err) {
		char detail[256];

		snprintf(detail, sizeof(detail), "%s", why);
		snprintf(why, why_len, "refusing to load NVML: %.200s", detail);
	}
	return err;
}

static unsigned sample_interval_ms(void)
{
	const char *text = getenv("GRTRACE_PCIE_INTERVAL_MS");
	long ms = text ? strtol(text, NULL, 10) : 0;

	return ms > 0 && ms <= 60000 ? (unsigned)ms : DEFAULT_INTERVAL_MS;
}

static bool kprobes_available(void)
{
	return access(KPROBE_PMU, F_OK) == 0;
}

static bool nvml_loadable(char *why, size_t why_len)
{
	char path[PATH_MAX];
	void *lib;

	if (nvml_library(path, sizeof(path), why, why_len))
		return false;
	lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, why_len, "%s", dlerror());
		return false;
	}
	dlclose(lib);
	return true;
}

static int pcie_probe(char *why, size_t why_len)
{
	char nvml_why[256];

	if (kprobes_available() || nvml_loadable(nvml_why, sizeof(nvml_why)))
		return 0;
	snprintf(why, why_len,
		 "no kprobes in this kernel (CONFIG_KPROBES off) and no NVML (%s): nothing to trace or sample",
		 nvml_why);
	return -ENOTSUP;
}

/* Leaves a record of a probe this machine cannot give, so the trace says why it is missing. */
static void emit_unsupported(struct pcie_source *ps, const char *probe, int err, const char *reason)
{
	struct grt_unsupported_probe_rec rec = {
		.source = GRT_SRC_PCIE, .error = err,
		.probe_str = grt_session_intern(ps->session, probe),
		.reason_str = grt_session_intern(ps->session, reason),
	};
	struct grt_event_origin origin = { .ts_ns = grt_monotonic_ns(), .pid = getpid(), .tid = getpid() };

	grt_session_emit(ps->session, GRT_REC_UNSUPPORTED_PROBE, &origin, &rec, sizeof(rec));
}

static int on_pci_config(void *ctx, void *data, size_t len)
{
	struct pcie_source *ps = ctx;
	const struct pci_config_event *e = data;
	struct grt_pci_config_rec rec;
	struct grt_event_origin origin;

	if (len < sizeof(*e))
		return 0;
	rec = (struct grt_pci_config_rec){
		.pci = grt_pci_pack(e->domain, e->bus, e->devfn >> 3, e->devfn & 7), .where = e->where,
		.size = e->size, .write = e->write, .value = e->value,
	};
	origin = (struct grt_event_origin){ .ts_ns = e->ts_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->tid };
	grt_session_emit(ps->session, GRT_REC_PCI_CONFIG, &origin, &rec, sizeof(rec));
	return 0;
}

static void attach_kprobes(struct pcie_source *ps)
{
	int err;

	if (!kprobes_available()) {
		emit_unsupported(ps, "kprobe:pci_bus_{read,write}_config_*", -ENOTSUP,
				 "this kernel has no kprobes (CONFIG_KPROBES off): PCIe traffic is sampled through NVML instead");
		return;
	}
	ps->skel = pcie_bpf__open_and_load();
	err = ps->skel ? pcie_bpf__attach(ps->skel) : -errno;
	if (!err)
		err = grt_bpf_source_start(&ps->base, ps->session, GRT_SRC_PCIE, ps->skel->maps.pci_config_events,
					   ps->skel->maps.dropped_events, on_pci_config, ps);
	if (err) {
		const char *why = grt_bpf_last_message();

		emit_unsupported(ps, "kprobe:pci_bus_{read,write}_config_*", err, why[0] ? why : strerror(-err));
		grt_bpf_source_stop(&ps->base);
		pcie_bpf__destroy(ps->skel);
		ps->skel = NULL;
	}
}

static void pcie_detach(void *ctx)
{
	struct pcie_source *ps = ctx;

	if (!ps)
		return;
	nvml_sampler_stop(ps->nvml);
	grt_bpf_source_detach(&ps->base, ps->skel ? ps->skel->skeleton : NULL);
	pcie_bpf__destroy(ps->skel);
	free(ps);
}

static int pcie_attach(struct grt_session *s, void **ctx)
{
	struct pcie_source *ps = calloc(1, sizeof(*ps));
	char why[256] = "", nvml_path[PATH_MAX];

	if (!ps)
		return -ENOMEM;
	ps->session = s;
	ps->base.drops_fd = -1;
	attach_kprobes(ps);
	/* NVLink counters come from NVML on every kernel; no kprobe tracer of the nvlink_* functions exists */
	emit_unsupported(ps, "kprobe:nvlink_*", -ENOTSUP,
			 "NVLink is not traced through kprobes: its throughput is sampled through NVML");
	ps->nvml = nvml_library(nvml_path, sizeof(nvml_path), why, sizeof(why))
			   ? NULL
			   : nvml_sampler_start(nvml_path, sample_interval_ms(), why, sizeof(why));
	if (!ps->nvml) {
		emit_unsupported(ps, "nvml:pcie,nvlink throughput", -ENOTSUP, why);
		if (!ps->skel) {
			grt_session_fail(s, -ENOTSUP, "pcie: %s, and no kprobes to trace with", why);
			pcie_detach(ps);
			return -ENOTSUP;
		}
	}
	*ctx = ps;
	return 0;
}

static int pcie_drain(void *ctx)
{
	struct pcie_source *ps = ctx;
	struct nvml_sample samples[64];
	size_t n;

	if (ps->nvml) {
		while ((n = nvml_sampler_take(ps->nvml, samples, 64)) > 0)
			for (size_t i = 0; i < n; i++) {
				struct grt_event_origin origin = { .ts_ns = samples[i].ts_ns };

				grt_session_emit(ps->session, GRT_REC_PCIE_SAMPLE, &origin, &samples[i].rec,
						 sizeof(samples[i].rec));
			}
		grt_session_count_drop(ps->session, GRT_SRC_PCIE, nvml_sampler_lost(ps->nvml));
	}
	grt_bpf_source_count_drops(&ps->base);
	return 0;
}

static const struct grt_source pcie_source = {
	.name = "pcie",
	.id = GRT_SRC_PCIE,
	.summary = "PCIe/NVLink throughput per GPU (NVML), PCI config accesses (kprobes, where present)",
	.probe = pcie_probe,
	.attach = pcie_attach,
	.drain = pcie_drain,
	.detach = pcie_detach,
};

GRT_SOURCE_REGISTER(pcie_source);
