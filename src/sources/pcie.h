/* Event shared by pcie.bpf.c and pcie.c: one PCI config-space access, seen when it completed. */
#ifndef GRT_PCIE_H
#define GRT_PCIE_H

/* enum grt_pci_config_flags (records_kernel.h) */
#define PCI_CONFIG_F_VALUE 1
#define PCI_CONFIG_F_USER 2
#define PCI_CONFIG_F_FAILED 4

struct pci_config_event {
	__u64 ts_ns;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u32 domain;
	__u32 bus;
	__u32 devfn;
	__u32 where;
	__u32 size;
	__u32 write;
	__u32 value;
	__u32 flags;
	__s32 ret;
};

#endif
