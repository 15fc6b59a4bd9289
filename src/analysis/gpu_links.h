/* Which link a copy between two devices takes: the trace's gpu_link records (NVML's topology) by PCI address. */
#ifndef GRT_GPU_LINKS_H
#define GRT_GPU_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analysis/device_map.h"
#include "trace/grt_reader.h"
#include "trace/records_kernel.h"

/*
 * The link P2P between two GPUs uses. UNKNOWN when the trace has no topology
 * for the pair (no pcie source, a device whose bus id was never asked, or an
 * NVML too old to answer): never guessed.
 */
enum peer_link {
	PEER_LINK_UNKNOWN,
	PEER_LINK_NVLINK,	/* P2P over NVLink is possible */
	PEER_LINK_PCIE,		/* not over NVLink, but P2P reads or writes over PCIe are */
	PEER_LINK_NONE,		/* no P2P: the driver stages the copy through host memory */
};

struct gpu_links;

struct gpu_links *gpu_links_new(void);
void gpu_links_free(struct gpu_links *l);
/* Feeds one record; gpu_link records are kept, others ignored. */
void gpu_links_record(struct gpu_links *l, const struct grt_record *rec);
/* Whether any gpu_link record was seen. */
bool gpu_links_any(const struct gpu_links *l);
/* The record of the pair (either order), NULL when none. */
const struct grt_gpu_link_rec *gpu_links_find(const struct gpu_links *l, uint32_t pci, uint32_t peer_pci);
/* The link between two PCI addresses (grt_pci_pack()). */
enum peer_link gpu_links_between(const struct gpu_links *l, uint32_t pci, uint32_t peer_pci);
/* The same for two CUDA devices, through the bus ids their device records gave. */
enum peer_link gpu_links_of_devices(const struct gpu_links *l, const struct device_map *m,
				    int32_t src, int32_t dst);
/*
 * One cell of a topology matrix for the pair, as nvidia-smi topo -m writes
 * it: "NV<n>" for n direct NVLink links, "NV" for P2P over NVLink through
 * NVSwitches, else the PCIe path ("PIX" ... "SYS"), "?" when unknown.
 */
const char *gpu_links_cell(const struct gpu_links *l, uint32_t pci, uint32_t peer_pci, char *buf,
			   size_t len);
/* "nvlink", "pcie", "none", "?" */
const char *peer_link_name(enum peer_link link);

#endif
