/* The GPU-to-GPU topology of a trace and the link it gives a pair of devices. */
#include <stdio.h>
#include <stdlib.h>
#include "analysis/gpu_links.h"
#include "common/grow_array.h"

struct gpu_links {
	struct grt_gpu_link_rec *pairs;
	uint32_t n, cap;
};

struct gpu_links *gpu_links_new(void)
{
	return calloc(1, sizeof(struct gpu_links));
}

void gpu_links_free(struct gpu_links *l)
{
	if (!l)
		return;
	free(l->pairs);
	free(l);
}

/* A later record of the same pair (a second recording appended) replaces the first. */
void gpu_links_record(struct gpu_links *l, const struct grt_record *rec)
{
	const struct grt_gpu_link_rec *g = rec->payload;
	struct grt_gpu_link_rec *slot = NULL;

	if (rec->hdr.type != GRT_REC_GPU_LINK || rec->hdr.payload_len < sizeof(*g) || !g->pci ||
	    !g->peer_pci)
		return;
	for (size_t i = 0; i < l->n && !slot; i++)
		if (l->pairs[i].pci == g->pci && l->pairs[i].peer_pci == g->peer_pci)
			slot = &l->pairs[i];
	if (!slot) {
		if (grt_grow_array((void **)&l->pairs, &l->cap, sizeof(*l->pairs), l->n + 1))
			return; /* the pair stays unknown */
		slot = &l->pairs[l->n++];
	}
	*slot = *g;
}

bool gpu_links_any(const struct gpu_links *l)
{
	return l->n > 0;
}

const struct grt_gpu_link_rec *gpu_links_find(const struct gpu_links *l, uint32_t pci, uint32_t peer_pci)
{
	const struct grt_gpu_link_rec *reverse = NULL;

	if (!pci || !peer_pci)
		return NULL;
	for (size_t i = 0; i < l->n; i++) {
		if (l->pairs[i].pci == pci && l->pairs[i].peer_pci == peer_pci)
			return &l->pairs[i];
		if (l->pairs[i].pci == peer_pci && l->pairs[i].peer_pci == pci)
			reverse = &l->pairs[i];
	}
	return reverse;
}

/*
 * NVLink first (the driver prefers it), then PCIe; "none" only when NVML
 * said no to both, so an unanswered question never turns into "pcie".
 */
enum peer_link gpu_links_between(const struct gpu_links *l, uint32_t pci, uint32_t peer_pci)
{
	const struct grt_gpu_link_rec *g = gpu_links_find(l, pci, peer_pci);

	if (!g || !(g->flags & GRT_GPU_LINK_F_NVLINK_P2P))
		return PEER_LINK_UNKNOWN;
	if (g->nvlink_p2p == GRT_P2P_OK)
		return PEER_LINK_NVLINK;
	if (!(g->flags & GRT_GPU_LINK_F_PCIE_P2P) || g->nvlink_p2p == GRT_P2P_UNKNOWN)
		return PEER_LINK_UNKNOWN;
	if (g->pcie_read_p2p == GRT_P2P_OK || g->pcie_write_p2p == GRT_P2P_OK)
		return PEER_LINK_PCIE;
	if (g->pcie_read_p2p == GRT_P2P_UNKNOWN || g->pcie_write_p2p == GRT_P2P_UNKNOWN)
		return PEER_LINK_UNKNOWN;
	return PEER_LINK_NONE;
}

enum peer_link gpu_links_of_devices(const struct gpu_links *l, const struct device_map *m,
				    int32_t src, int32_t dst)
{
	if (src < 0 || dst < 0 || !m)
		return PEER_LINK_UNKNOWN;
	return gpu_links_between(l, device_map_pci(m, src), device_map_pci(m, dst));
}

const char *gpu_links_cell(const struct gpu_links *l, uint32_t pci, uint32_t peer_pci, char *buf,
			   size_t len)
{
	const struct grt_gpu_link_rec *g = gpu_links_find(l, pci, peer_pci);
	const char *path;

	if (!g)
		return "?";
	if (gpu_links_between(l, pci, peer_pci) == PEER_LINK_NVLINK) {
		if ((g->flags & GRT_GPU_LINK_F_REMOTES) && g->nvlink_links)
			snprintf(buf, len, "NV%d", __builtin_popcount(g->nvlink_links));
		else
			snprintf(buf, len, "NV");
		return buf;
	}
	path = g->flags & GRT_GPU_LINK_F_TOPOLOGY ? grt_gpu_topology_name(g->topology) : NULL;
	return path ? path : "?";
}

const char *peer_link_name(enum peer_link link)
{
	switch (link) {
	case PEER_LINK_NVLINK: return "nvlink";
	case PEER_LINK_PCIE: return "pcie";
	case PEER_LINK_NONE: return "none";
	case PEER_LINK_UNKNOWN: break;
	}
	return "?";
}
