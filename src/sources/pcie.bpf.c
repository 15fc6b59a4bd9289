// SPDX-License-Identifier: GPL-2.0
/*
 * PCI config-space reads and writes: the kernel's accessors (pci_bus_*_config_*, what drivers
 * call) and the user-space ones (pci_user_*_config_*, what sysfs and procfs config files go
 * through). Two variants of the same probes; pcie.c loads one: fexit where the kernel can
 * attach BPF tracing programs, else a kprobe/kretprobe pair per function.
 */
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

/* What a kprobe saw at entry, for its kretprobe: the value pointer is only read at return. */
struct pending_access {
	struct pci_bus *bus;
	__u64 value;		/* writes: the value; reads: the kernel address it is read into */
	__u32 devfn;
	__u32 where;
	__u32 size;
	__u32 write;
	__u32 user;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);	/* tid */
	__type(value, struct pending_access);
} pending_accesses SEC(".maps");

/* pci_bus.domain_nr exists only with CONFIG_PCI_DOMAINS_GENERIC (not x86): a CO-RE flavor asks for it. */
struct pci_bus___with_domain {
	int domain_nr;
} __attribute__((preserve_access_index));

static __always_inline __u32 pci_domain(struct pci_bus *bus)
{
	struct pci_bus___with_domain *b = (void *)bus;

	return bpf_core_field_exists(b->domain_nr) ? BPF_CORE_READ(b, domain_nr) : 0;
}

/* The value a read stored at addr, size bytes (little-endian: the low bytes of the u32). */
static __always_inline __u32 read_value(__u64 addr, __u32 size)
{
	__u32 v = 0;

	if (size == 1)
		bpf_probe_read_kernel(&v, 1, (void *)addr);
	else if (size == 2)
		bpf_probe_read_kernel(&v, 2, (void *)addr);
	else
		bpf_probe_read_kernel(&v, 4, (void *)addr);
	return v;
}

/*
 * Config accesses come from the driver's own threads as often as from the application: not
 * pid-filtered. value is the written value, or for a read the address the kernel stored to.
 */
static __always_inline int emit(struct pci_bus *bus, __u32 devfn, __u32 where, __u32 size, __u32 write,
				__u32 user, __u64 value, int ret)
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
	e->value = write ? (__u32)value : read_value(value, size);
	e->flags = PCI_CONFIG_F_VALUE | (user ? PCI_CONFIG_F_USER : 0) | (ret ? PCI_CONFIG_F_FAILED : 0);
	e->ret = ret;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

#define SIZE_byte 1
#define SIZE_word 2
#define SIZE_dword 4

/* ---- fexit: arguments and return value in one program ---- */

#define FEXIT_BUS(op, sz, type, write)                                                              \
	SEC("fexit/pci_bus_" #op "_config_" #sz)                                                    \
	int BPF_PROG(bus_##op##_##sz##_exit, struct pci_bus *bus, unsigned int devfn, int where,   \
		     type value, int ret)                                                           \
	{                                                                                           \
		return emit(bus, devfn, where, SIZE_##sz, write, 0, (__u64)value, ret);             \
	}

#define FEXIT_USER(op, sz, type, write)                                                             \
	SEC("fexit/pci_user_" #op "_config_" #sz)                                                   \
	int BPF_PROG(user_##op##_##sz##_exit, struct pci_dev *dev, int where, type value, int ret) \
	{                                                                                           \
		return emit(BPF_CORE_READ(dev, bus), BPF_CORE_READ(dev, devfn), where, SIZE_##sz,    \
			    write, 1, (__u64)value, ret);                                           \
	}

/* ---- kprobe + kretprobe: the entry's arguments wait in pending_accesses for the return ---- */

static __always_inline int save_entry(struct pci_bus *bus, __u32 devfn, __u32 where, __u32 size,
				      __u32 write, __u32 user, __u64 value)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending_access p = {
		.bus = bus, .value = value, .devfn = devfn, .where = where, .size = size,
		.write = write, .user = user,
	};

	bpf_map_update_elem(&pending_accesses, &tid, &p, BPF_ANY);
	return 0;
}

static __always_inline int emit_pending(int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending_access *p = bpf_map_lookup_elem(&pending_accesses, &tid);

	if (!p)
		return 0;
	emit(p->bus, p->devfn, p->where, p->size, p->write, p->user, p->value, ret);
	bpf_map_delete_elem(&pending_accesses, &tid);
	return 0;
}

#define KPROBE_BUS(op, sz, type, write)                                                             \
	SEC("kprobe/pci_bus_" #op "_config_" #sz)                                                   \
	int BPF_KPROBE(bus_##op##_##sz##_entry, struct pci_bus *bus, unsigned int devfn, int where, \
		       type value)                                                                  \
	{                                                                                           \
		return save_entry(bus, devfn, where, SIZE_##sz, write, 0, (__u64)value);            \
	}                                                                                           \
	SEC("kretprobe/pci_bus_" #op "_config_" #sz)                                                \
	int BPF_KRETPROBE(bus_##op##_##sz##_return, int ret)                                        \
	{                                                                                           \
		return emit_pending(ret);                                                           \
	}

#define KPROBE_USER(op, sz, type, write)                                                            \
	SEC("kprobe/pci_user_" #op "_config_" #sz)                                                  \
	int BPF_KPROBE(user_##op##_##sz##_entry, struct pci_dev *dev, int where, type value)        \
	{                                                                                           \
		return save_entry(BPF_CORE_READ(dev, bus), BPF_CORE_READ(dev, devfn), where,         \
				  SIZE_##sz, write, 1, (__u64)value);                               \
	}                                                                                           \
	SEC("kretprobe/pci_user_" #op "_config_" #sz)                                               \
	int BPF_KRETPROBE(user_##op##_##sz##_return, int ret)                                       \
	{                                                                                           \
		return emit_pending(ret);                                                           \
	}

/* Every accessor in both variants: the list pcie.c's PCIE_PROBED_FUNCTIONS names. */
#define PCI_ACCESSORS(X)                                                                            \
	X##_BUS(read, byte, u8 *, 0)                                                                \
	X##_BUS(read, word, u16 *, 0)                                                               \
	X##_BUS(read, dword, u32 *, 0)                                                              \
	X##_BUS(write, byte, u8, 1)                                                                 \
	X##_BUS(write, word, u16, 1)                                                                \
	X##_BUS(write, dword, u32, 1)                                                               \
	X##_USER(read, byte, u8 *, 0)                                                               \
	X##_USER(read, word, u16 *, 0)                                                              \
	X##_USER(read, dword, u32 *, 0)                                                             \
	X##_USER(write, byte, u8, 1)                                                                \
	X##_USER(write, word, u16, 1)                                                               \
	X##_USER(write, dword, u32, 1)

PCI_ACCESSORS(FEXIT)
PCI_ACCESSORS(KPROBE)
