/* bpftime's cuda-counter, as its README describes it: calls and time per process, entry and exit in hashes. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u64);
} entered_at SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u64);
} busy_ns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u64);
} calls SEC(".maps");

static const u64 (*bpf_get_globaltimer)(void) = (void *)502;
static const u64 (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int on_entry()
{
	u32 pid = bpf_get_current_pid_tgid() >> 32;
	u64 now = bpf_get_globaltimer();
	u64 bx, by, bz, one = 1;
	u64 *n;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_map_update_elem(&entered_at, &bx, &now, BPF_ANY);
	n = bpf_map_lookup_elem(&calls, &pid);
	if (n)
		__atomic_add_fetch(n, 1, __ATOMIC_SEQ_CST);
	else
		bpf_map_update_elem(&calls, &pid, &one, BPF_NOEXIST);
	bpf_printk("entry block %lu at %lu\n", bx, now);
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int on_exit()
{
	u64 bx, by, bz;
	u32 pid = bpf_get_current_pid_tgid() >> 32;
	u64 *start, *total, took;

	bpf_get_block_idx(&bx, &by, &bz);
	start = bpf_map_lookup_elem(&entered_at, &bx);
	if (!start) {
		bpf_printk("exit of block %lu without entry\n", bx);
		return 0;
	}
	took = bpf_get_globaltimer() - *start;
	bpf_map_delete_elem(&entered_at, &pid);
	total = bpf_map_lookup_elem(&busy_ns, &pid);
	if (total) {
		*total += took;
		bpf_map_update_elem(&busy_ns, &pid, total, BPF_EXIST);
	} else {
		bpf_map_update_elem(&busy_ns, &pid, &took, BPF_NOEXIST);
	}
	bpf_printk("exit of block %lu after %llu ns (entry %lu)\n", bx, took, *start);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
