// SPDX-License-Identifier: GPL-2.0
/* PCI config-space reads and writes through kprobes; only loaded on kernels that have kprobes. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "drop_counter.bpf.h"
#include "pcie.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} pci_config_events SEC(".maps");

/* pci_bus.domain_nr exists only with CONFIG_PCI_DOMAINS_GENERIC (not x86): a CO-RE flavor asks for it. */
struct pci_bus___with_domain {
	int domain_nr;
} __attribute__((preserve_access_index));

static __always_inline __u32 pci_domain(struct pci_bus *bus)
{
	struct pci_bus___with_domain *b = (void *)bus;

	return bpf_core_field_exists(b->domain_nr) ? BPF_CORE_READ(b, domain_nr) : 0;
}

/* Config accesses come from the driver's own threads as often as from the application: not pid-filtered. */
static __always_inline int emit(struct pci_bus *bus, __u32 devfn, __u32 where, __u32 size, __u32 write,
				__u32 value)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct pci_config_event *e = bpf_ringbuf_reserve(&pci_config_events, sizeof(*e), 0);

	if (!e) {
		count_dropped_event();
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->cpu = bpf_get_smp_processor_id();
	e->domain = pci_domain(bus);
	e->bus = BPF_CORE_READ(bus, number);
	e->devfn = devfn;
	e->where = where;
	e->size = size;
	e->write = write;
	e->value = value;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("kprobe/pci_bus_read_config_byte")
int BPF_KPROBE(read_config_byte, struct pci_bus *bus, unsigned int devfn, int where)
{
	return emit(bus, devfn, where, 1, 0, 0);
}

SEC("kprobe/pci_bus_read_config_word")
int BPF_KPROBE(read_config_word, struct pci_bus *bus, unsigned int devfn, int where)
{
	return emit(bus, devfn, where, 2, 0, 0);
}

SEC("kprobe/pci_bus_read_config_dword")
int BPF_KPROBE(read_config_dword, struct pci_bus *bus, unsigned int devfn, int where)
{
	return emit(bus, devfn, where, 4, 0, 0);
}

SEC("kprobe/pci_bus_write_config_byte")
int BPF_KPROBE(write_config_byte, struct pci_bus *bus, unsigned int devfn, int where, u8 value)
{
	return emit(bus, devfn, where, 1, 1, value);
}

SEC("kprobe/pci_bus_write_config_word")
int BPF_KPROBE(write_config_word, struct pci_bus *bus, unsigned int devfn, int where, u16 value)
{
	return emit(bus, devfn, where, 2, 1, value);
}

SEC("kprobe/pci_bus_write_config_dword")
int BPF_KPROBE(write_config_dword, struct pci_bus *bus, unsigned int devfn, int where, u32 value)
{
	return emit(bus, devfn, where, 4, 1, value);
}
