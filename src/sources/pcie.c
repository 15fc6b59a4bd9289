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
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"
#include "sources/nvml_sampler.h"
#include "sources/pcie.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_kernel.h"
#include "pcie.skel.h"

#define DEFAULT_INTERVAL_MS 100
#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe"
#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"
/* what the probes of pcie.bpf.c attach to */
#define PROBED_FUNCTIONS "pci_{bus,user}_{read,write}_config_{byte,word,dword}"

struct pcie_source {
	struct grt_session *session;
	struct pcie_bpf *skel;		/* NULL without kprobes */
	struct grt_bpf_source base;
	struct nvml_sampler *nvml;
};

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

	if (nvml_library_path(path, sizeof(path), why, why_len))
		return false;
	lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, why_len, "%s", dlerror());
		return false;
	}
	dlclose(lib);
	return true;
}

/*
 * fexit needs kernel BTF, which the probe can see; whether the kernel can attach BPF tracing
 * programs at all is only known by trying, at attach.
 */
static int pcie_probe(char *why, size_t why_len)
{
	char nvml_why[256];

	if (kprobes_available() || access(VMLINUX_BTF, R_OK) == 0 ||
	    nvml_loadable(nvml_why, sizeof(nvml_why)))
		return 0;
	snprintf(why, why_len,
		 "no kprobes in this kernel (CONFIG_KPROBES off), no kernel BTF for fexit and no NVML (%s): nothing to trace or sample",
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
		.size = e->size, .write = e->write, .value = e->value, .flags = e->flags,
	};
	origin = (struct grt_event_origin){ .ts_ns = e->ts_ns, .cpu = e->cpu, .pid = e->pid, .tid = e->tid };
	grt_session_emit(ps->session, GRT_REC_PCI_CONFIG, &origin, &rec, sizeof(rec));
	return 0;
}

/* The variants of the config-space probes, in the order they are tried. */
enum pcie_probes { PROBES_FEXIT, PROBES_KPROBE, PROBES_COUNT };

static const char *const probes_name[PROBES_COUNT] = {
	[PROBES_FEXIT] = "fexit:" PROBED_FUNCTIONS,
	[PROBES_KPROBE] = "kprobe:" PROBED_FUNCTIONS,
};

/* GRTRACE_PCIE_PROBES=fexit|kprobe|none keeps only that variant (tests, a kernel that misbehaves). */
static bool probes_wanted(enum pcie_probes which)
{
	const char *only = getenv("GRTRACE_PCIE_PROBES");

	if (!only || !*only)
		return true;
	return !strcmp(only, which == PROBES_FEXIT ? "fexit" : "kprobe");
}

static int load_probes(struct pcie_source *ps, enum pcie_probes which)
{
	struct bpf_program *prog;
	int err;

	ps->skel = pcie_bpf__open();
	if (!ps->skel)
		return -errno;
	bpf_object__for_each_program(prog, ps->skel->obj)
		bpf_program__set_autoload(prog, (bpf_program__type(prog) == BPF_PROG_TYPE_TRACING) ==
							(which == PROBES_FEXIT));
	err = grt_bpf_source_load_start(&ps->base, ps->session, ps->skel->skeleton, GRT_SRC_PCIE,
					ps->skel->maps.pci_config_events, ps->skel->maps.dropped_events,
					on_pci_config, ps);
	if (err) {
		grt_bpf_source_detach(&ps->base, ps->skel->skeleton);
		pcie_bpf__destroy(ps->skel);
		ps->skel = NULL;
	}
	return err;
}

/*
 * Config accesses through fexit where the kernel attaches BPF tracing programs, else kprobes;
 * every variant not used leaves an unsupported_probe record that says why. Returns the one
 * attached or PROBES_COUNT; why gets the reasons when none was.
 */
static enum pcie_probes attach_config_probes(struct pcie_source *ps, char *why, size_t why_len)
{
	char reason[PROBES_COUNT][300];

	for (enum pcie_probes p = 0; p < PROBES_COUNT; p++) {
		int err = -ENOTSUP;

		if (!probes_wanted(p))
			snprintf(reason[p], sizeof(reason[p]), "left out (GRTRACE_PCIE_PROBES=%s)",
				 getenv("GRTRACE_PCIE_PROBES"));
		else if (p == PROBES_KPROBE && !kprobes_available())
			snprintf(reason[p], sizeof(reason[p]), "no kprobes in this kernel (CONFIG_KPROBES off)");
		else if (p == PROBES_FEXIT && access(VMLINUX_BTF, R_OK))
			snprintf(reason[p], sizeof(reason[p]), "no kernel BTF (%s) to attach fexit programs with",
				 VMLINUX_BTF);
		else if ((err = load_probes(ps, p)) == 0)
			return p;
		else
			snprintf(reason[p], sizeof(reason[p]), "this kernel cannot attach them (%s)",
				 strerror(-err));
		emit_unsupported(ps, probes_name[p], err, reason[p]);
	}
	snprintf(why, why_len, "fexit: %s; kprobe: %s", reason[PROBES_FEXIT], reason[PROBES_KPROBE]);
	return PROBES_COUNT;
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

/*
 * The GPU-to-GPU topology, once at start (report --copies names the link of
 * each peer copy from it); a driver without the topology functions leaves
 * the fields unknown and says so in an unsupported_probe record.
 */
static void emit_topology(struct pcie_source *ps)
{
	const struct grt_gpu_link_rec *links;
	size_t n = nvml_sampler_topology(ps->nvml, &links);
	struct grt_event_origin origin = { .ts_ns = grt_monotonic_ns(), .pid = getpid(), .tid = getpid() };

	for (size_t i = 0; i < n; i++)
		grt_session_emit(ps->session, GRT_REC_GPU_LINK, &origin, &links[i], sizeof(links[i]));
	if (!nvml_sampler_topology_known(ps->nvml))
		emit_unsupported(ps, "nvml:gpu topology", -ENOTSUP,
				 "this NVML has no nvmlDeviceGetP2PStatus or nvmlDeviceGetTopologyCommonAncestor (driver too old): the link of peer copies is unknown");
}

static int pcie_attach(struct grt_session *s, void **ctx)
{
	struct pcie_source *ps = calloc(1, sizeof(*ps));
	char probes_why[700] = "", why[256] = "", nvml_path[PATH_MAX];
	enum pcie_probes used;

	if (!ps)
		return -ENOMEM;
	ps->session = s;
	ps->base.drops_fd = -1;
	used = attach_config_probes(ps, probes_why, sizeof(probes_why));
	if (used != PROBES_COUNT)
		grt_session_attached_how(s, probes_name[used]);
	/* NVLink counters come from NVML on every kernel; no kprobe tracer of the nvlink_* functions exists */
	emit_unsupported(ps, "kprobe:nvlink_*", -ENOTSUP,
			 "NVLink is not traced through kprobes: its throughput is sampled through NVML");
	ps->nvml = nvml_library_path(nvml_path, sizeof(nvml_path), why, sizeof(why))
			   ? NULL
			   : nvml_sampler_start(nvml_path, sample_interval_ms(), false, why, sizeof(why));
	if (!ps->nvml) {
		emit_unsupported(ps, "nvml:pcie,nvlink throughput", -ENOTSUP, why);
		if (!ps->skel) {
			grt_session_fail(s, -ENOTSUP, "no PCI config probe (%s) and no NVML (%s)", probes_why,
					 why);
			pcie_detach(ps);
			return -ENOTSUP;
		}
	} else {
		emit_topology(ps);
	}
	if (ps->nvml && !nvml_sampler_nvlinks(ps->nvml)) {
		emit_unsupported(ps, "nvml:nvlink per link", -ENODEV,
				 "no NVLink on this machine: NVML reports no link on any GPU");
		fprintf(stderr, "grtrace: record: pcie: no NVLink on this machine (NVML reports no "
				"link on any GPU): PCIe throughput only\n");
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

				if (samples[i].type == GRT_REC_NVLINK_SAMPLE)
					grt_session_emit(ps->session, GRT_REC_NVLINK_SAMPLE, &origin,
							 &samples[i].link, sizeof(samples[i].link));
				else
					grt_session_emit(ps->session, GRT_REC_PCIE_SAMPLE, &origin,
							 &samples[i].rec, sizeof(samples[i].rec));
			}
		grt_session_count_drop(ps->session, GRT_SRC_PCIE, nvml_sampler_lost(ps->nvml));
	}
	grt_bpf_source_count_drops(&ps->base);
	return 0;
}

static const struct grt_source pcie_source = {
	.name = "pcie",
	.id = GRT_SRC_PCIE,
	.summary = "PCIe/NVLink throughput per GPU (NVML), PCI config accesses (fexit or kprobes, where present)",
	.probe = pcie_probe,
	.attach = pcie_attach,
	.drain = pcie_drain,
	.detach = pcie_detach,
};

GRT_SOURCE_REGISTER(pcie_source);
