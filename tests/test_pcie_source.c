/* The pcie source here: kprobes reported unsupported, NVML sampled through a stand-in library. */
#include <stdio.h>
#include <time.h>
#include "test_util.h"
#include "kernel_test_session.h"
#include "trace/records_kernel.h"

static char fake_nvml[PATH_MAX], old_nvml[PATH_MAX];

static struct grt_session *attach_pcie(struct mem_sink *m, int *rc)
{
	struct grt_session *s = mem_session_new(m);

	*rc = s ? grt_session_attach(s, "pcie") : -ENOMEM;
	return s;
}

/* Attaches the pcie source on library with only the probe variant named (GRTRACE_PCIE_PROBES), and detaches it. */
static void attach_detach(struct mem_sink *m, const char *library, const char *probes)
{
	struct grt_session *s;
	int rc;

	setenv("GRTRACE_NVML_LIBRARY", library, 1);
	setenv("GRTRACE_PCIE_PROBES", probes, 1);
	s = attach_pcie(m, &rc);
	unsetenv("GRTRACE_PCIE_PROBES");
	CHECK_EQ_U64(rc, 0);
	grt_session_detach_all(s);
	grt_session_free(s);
}

static void run_for_ms(struct grt_session *s, long ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		grt_session_poll(s, 10);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

static bool within(uint64_t v, uint64_t want, double tolerance)
{
	return v >= want * (1 - tolerance) && v <= want * (1 + tolerance);
}

static void test_nvml_samples_and_unsupported_kprobes(void)
{
	struct mem_sink m;
	size_t samples[2] = { 0 }, nvlink_rated = 0, unsupported = 0, link_samples[2] = { 0 };
	uint64_t link_tx[2] = { 0 }, link_rx[2] = { 0 };
	bool fexit_pci = false, kprobe_pci = false, kprobe_nvlink = false;
	int rc;
	struct grt_session *s;

	setenv("GRTRACE_NVML_LIBRARY", fake_nvml, 1);
	setenv("GRTRACE_PCIE_INTERVAL_MS", "20", 1);
	s = attach_pcie(&m, &rc);
	CHECK_EQ_U64(rc, 0);
	if (rc)
		printf("  %s\n", grt_session_error(s));
	run_for_ms(s, 400);
	grt_session_detach_all(s);
	grt_session_free(s);
	for (size_t i = 0; i < m.count; i++) {
		const struct mem_record *r = &m.recs[i];

		if (r->type == GRT_REC_UNSUPPORTED_PROBE) {
			const struct grt_unsupported_probe_rec *u = (const void *)r->payload;
			const char *probe = mem_string(&m, u->probe_str), *reason = mem_string(&m, u->reason_str);

			unsupported++;
			CHECK_EQ_U64(u->source, GRT_SRC_PCIE);
			CHECK(reason && strlen(reason) > 10 && !strchr(reason, '\n'));
			fexit_pci |= probe &&
				     !strcmp(probe, "fexit:pci_{bus,user}_{read,write}_config_{byte,word,dword}") &&
				     strstr(reason, "this kernel cannot attach them");
			kprobe_pci |= probe &&
				      !strcmp(probe, "kprobe:pci_{bus,user}_{read,write}_config_{byte,word,dword}") &&
				      strstr(reason, "no kprobes");
			kprobe_nvlink |= probe && !strcmp(probe, "kprobe:nvlink_*");
		} else if (r->type == GRT_REC_NVLINK_SAMPLE) {
			const struct grt_nvlink_sample_rec *n = (const void *)r->payload;

			/* GPU 1's two links: 48 and 16 KiB/ms out, 12 and 4 KiB/ms in */
			CHECK_EQ_U64(n->device, 1);
			CHECK(n->link < 2);
			if (n->device != 1 || n->link >= 2)
				continue;
			link_samples[n->link]++;
			CHECK_EQ_U64(n->pci, grt_pci_pack(0, 0x86, 0, 0));
			link_tx[n->link] += n->tx_bytes;
			link_rx[n->link] += n->rx_bytes;
		} else if (r->type == GRT_REC_PCIE_SAMPLE) {
			const struct grt_pcie_sample_rec *p = (const void *)r->payload;

			CHECK(p->device < 2);
			if (p->device >= 2)
				continue;
			samples[p->device]++;
			CHECK_EQ_U64(p->pci, p->device ? grt_pci_pack(0, 0x86, 0, 0) : grt_pci_pack(0, 0x3b, 0, 0));
			CHECK(p->flags & GRT_PCIE_F_PCIE);
			CHECK_EQ_U64(p->pcie_tx_bps, (p->device ? 5 : 1000) * 1024ULL);
			CHECK_EQ_U64(p->pcie_rx_bps, (p->device ? 7 : 250000) * 1024ULL);
			if (p->device == 0)
				CHECK_EQ_U64(p->flags & GRT_PCIE_F_NVLINK, 0);
			if (p->flags & GRT_PCIE_F_NVLINK) {
				/* 64 KiB and 16 KiB per ms; ms-granular counters over ~20 ms intervals */
				nvlink_rated++;
				CHECK(within(p->nvlink_tx_bps, 64 * 1024 * 1000ULL, 0.15));
				CHECK(within(p->nvlink_rx_bps, 16 * 1024 * 1000ULL, 0.15));
			}
		}
	}
	CHECK(fexit_pci);
	CHECK(kprobe_pci);
	CHECK(kprobe_nvlink);
	CHECK_EQ_U64(unsupported, 3);
	/* 400 ms at 20 ms: allow for a slow VM, but there must be a steady stream */
	CHECK(samples[0] >= 8 && samples[0] <= 21);
	CHECK(samples[1] >= 8 && samples[1] <= 21);
	CHECK(nvlink_rated + 1 >= samples[1]);	/* every GPU-1 sample but the first has a rate */
	/* per link: every sample but the first reading of each link */
	CHECK(link_samples[0] + 1 >= samples[1] && link_samples[0] >= 7);
	CHECK_EQ_U64(link_samples[0], link_samples[1]);
	/*
	 * One NVML call reads every link: whatever the scheduling, link 0 moved
	 * three times link 1's bytes, and each link sent four times what it got
	 * (the fake's clock is read per value: a millisecond may tick in between).
	 */
	CHECK(link_tx[1] > 0 && within(link_tx[0], 3 * link_tx[1], 0.05));
	CHECK(link_rx[0] > 0 && within(link_tx[0], 4 * link_rx[0], 0.05));
	CHECK(link_rx[1] > 0 && within(link_tx[1], 4 * link_rx[1], 0.05));
	mem_sink_free(&m);
}

static void test_no_kprobes_no_nvml_is_one_line_skip(void)
{
	struct mem_sink m;
	int rc;
	struct grt_session *s;

	setenv("GRTRACE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	s = attach_pcie(&m, &rc);
	CHECK_EQ_U64(rc, (uint64_t)-ENOTSUP);
	CHECK(strstr(grt_session_error(s), "source pcie unavailable: no PCI config probe (fexit: ") != NULL);
	CHECK(strstr(grt_session_error(s), "no kprobes in this kernel") != NULL);
	CHECK(strstr(grt_session_error(s), "no NVML") != NULL);
	CHECK(strchr(grt_session_error(s), '\n') == NULL);
	grt_session_free(s);
	mem_sink_free(&m);
}

/* Which variant is tried follows GRTRACE_PCIE_PROBES; the one left out says so. */
static void test_probe_variant_left_out_by_name(void)
{
	struct mem_sink m;
	int fexit_left_out = 0, others = 0;

	attach_detach(&m, fake_nvml, "kprobe");
	for (size_t i = 0; i < m.count; i++) {
		const struct grt_unsupported_probe_rec *u = (const void *)m.recs[i].payload;
		const char *probe, *reason;

		if (m.recs[i].type != GRT_REC_UNSUPPORTED_PROBE)
			continue;
		probe = mem_string(&m, u->probe_str);
		reason = mem_string(&m, u->reason_str);
		if (probe && !strncmp(probe, "fexit:", 6))
			fexit_left_out += reason && !strcmp(reason, "left out (GRTRACE_PCIE_PROBES=kprobe)");
		else
			others++;
	}
	CHECK_EQ_U64(fexit_left_out, 1);
	CHECK_EQ_U64(others, 2);	/* kprobes (none here) and NVLink */
	mem_sink_free(&m);
}

/* Attaches and detaches the pcie source on library; the gpu_link records and topology complaints it wrote. */
static size_t topology_of(const char *library, struct grt_gpu_link_rec *out, size_t max,
			  int *complaints)
{
	struct mem_sink m;
	size_t n = 0;

	attach_detach(&m, library, "none"); /* NVML alone, with or without kprobes */
	*complaints = 0;
	for (size_t i = 0; i < m.count; i++) {
		const struct mem_record *r = &m.recs[i];

		if (r->type == GRT_REC_GPU_LINK && n < max) {
			CHECK_EQ_U64(r->len, sizeof(*out));
			memcpy(&out[n++], r->payload, sizeof(*out));
		} else if (r->type == GRT_REC_UNSUPPORTED_PROBE) {
			const struct grt_unsupported_probe_rec *u = (const void *)r->payload;
			const char *probe = mem_string(&m, u->probe_str);

			*complaints += probe && !strcmp(probe, "nvml:gpu topology");
		}
	}
	mem_sink_free(&m);
	return n;
}

/* The same with the fake's three-GPU topology; expects the six ordered pairs. */
static size_t topology_of_three(const char *library, struct grt_gpu_link_rec *out, int *complaints)
{
	size_t n;

	setenv("FAKE_NVML_TOPOLOGY", "three", 1);
	n = topology_of(library, out, 8, complaints);
	unsetenv("FAKE_NVML_TOPOLOGY");
	CHECK_EQ_U64(n, 6);
	return n;
}

#define ANSWERED (GRT_GPU_LINK_F_NVLINK_P2P | GRT_GPU_LINK_F_PCIE_P2P | GRT_GPU_LINK_F_TOPOLOGY | \
		  GRT_GPU_LINK_F_REMOTES)

/*
 * The fake's three GPUs: 0-1 NVLink over links 0 and 1 of each, 1-2 PCIe
 * only, 0-2 no P2P. Each ordered pair once, byte for byte as written.
 */
static void test_topology_of_three_gpus(void)
{
	const uint32_t a = grt_pci_pack(0, 0x18, 0, 0), b = grt_pci_pack(0, 0x29, 0, 0),
		       c = grt_pci_pack(0, 0x3a, 0, 0);
	const struct grt_gpu_link_rec want[6] = {
		{ 0, a, 1, b, ANSWERED, GRT_TOPO_PXB, GRT_P2P_OK, GRT_P2P_OK, GRT_P2P_OK, 0, 3, 0, 0 },
		{ 0, a, 2, c, ANSWERED, GRT_TOPO_SYS, GRT_P2P_NOT_SUPPORTED, GRT_P2P_NOT_SUPPORTED,
		  GRT_P2P_NOT_SUPPORTED, 0, 0, 0, 0 },
		{ 1, b, 0, a, ANSWERED, GRT_TOPO_PXB, GRT_P2P_OK, GRT_P2P_OK, GRT_P2P_OK, 0, 3, 0, 0 },
		{ 1, b, 2, c, ANSWERED, GRT_TOPO_PHB, GRT_P2P_NOT_SUPPORTED, GRT_P2P_OK, GRT_P2P_OK, 0,
		  0, 0, 0 },
		{ 2, c, 0, a, ANSWERED, GRT_TOPO_SYS, GRT_P2P_NOT_SUPPORTED, GRT_P2P_NOT_SUPPORTED,
		  GRT_P2P_NOT_SUPPORTED, 0, 0, 0, 0 },
		{ 2, c, 1, b, ANSWERED, GRT_TOPO_PHB, GRT_P2P_NOT_SUPPORTED, GRT_P2P_OK, GRT_P2P_OK, 0,
		  0, 0, 0 },
	};
	struct grt_gpu_link_rec got[8];
	int complaints;
	size_t n = topology_of_three(fake_nvml, got, &complaints);

	CHECK_EQ_U64(complaints, 0);
	for (size_t i = 0; i < n && i < 6; i++) {
		CHECK(!memcmp(&got[i], &want[i], sizeof(want[i])));
		if (memcmp(&got[i], &want[i], sizeof(want[i])))
			printf("  pair %zu: device %u peer %u flags %u topology %u nvlink %u pcie %u/%u links 0x%x switch 0x%x\n",
			       i, got[i].device, got[i].peer_device, got[i].flags, got[i].topology,
			       got[i].nvlink_p2p, got[i].pcie_read_p2p, got[i].pcie_write_p2p,
			       got[i].nvlink_links, got[i].nvswitch_links);
	}
}

/* The default two GPUs: GPU 1's links both end at an NVSwitch, none at GPU 0. */
static void test_topology_through_nvswitch(void)
{
	struct grt_gpu_link_rec got[4];
	int complaints;
	size_t n = topology_of(fake_nvml, got, 4, &complaints);

	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(complaints, 0);
	if (n == 2) {
		CHECK_EQ_U64(got[0].flags, ANSWERED);
		CHECK_EQ_U64(got[0].nvswitch_links, 0);
		CHECK_EQ_U64(got[1].device, 1);
		CHECK_EQ_U64(got[1].nvlink_links, 0);
		CHECK_EQ_U64(got[1].nvswitch_links, 3);
		CHECK_EQ_U64(got[1].nvlink_p2p, GRT_P2P_NOT_SUPPORTED);
		CHECK_EQ_U64(got[1].topology, GRT_TOPO_SYS);
	}
}

/*
 * A driver without the topology functions: every pair recorded, nothing
 * answered but the far ends of GPU 2's links (it has none), said once.
 */
static void test_topology_of_old_driver(void)
{
	struct grt_gpu_link_rec got[8];
	int complaints;
	size_t n = topology_of_three(old_nvml, got, &complaints);

	CHECK_EQ_U64(complaints, 1);
	for (size_t i = 0; i < n && i < 6; i++) {
		CHECK_EQ_U64(got[i].flags, got[i].device == 2 ? GRT_GPU_LINK_F_REMOTES : 0);
		CHECK(got[i].pci != 0 && got[i].peer_pci != 0);
	}
}

int main(int argc, char **argv)
{
	fixture_path(argv[0], "libnvidia-ml.so.1", fake_nvml, sizeof(fake_nvml));
	fixture_path(argv[0], "old_nvml/libnvidia-ml.so.1", old_nvml, sizeof(old_nvml));
	grt_bpf_capture_messages();
	RUN_TEST(test_topology_of_three_gpus);
	RUN_TEST(test_topology_through_nvswitch);
	RUN_TEST(test_topology_of_old_driver);
	if (access("/sys/bus/event_source/devices/kprobe", F_OK) == 0) {
		printf("ok - skipped: this kernel has kprobes, the cases below assume it has none\n");
		return TEST_EXIT_STATUS();
	}
	RUN_TEST(test_nvml_samples_and_unsupported_kprobes);
	RUN_TEST(test_no_kprobes_no_nvml_is_one_line_skip);
	RUN_TEST(test_probe_variant_left_out_by_name);
	return TEST_EXIT_STATUS();
}
