/* Event shared by pcie.bpf.c and pcie.c: a PCI config-space access seen by a kprobe. */
#ifndef GRT_PCIE_H
#define GRT_PCIE_H

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
};

#endif
