/* exit_times: when each GPU thread left the kernel, and how often (once, if all is well). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

enum { EXIT_NS, EXITS, NR_KEYS };

/* key EXIT_NS: the thread's last exit (CLOCK_MONOTONIC); key EXITS: its exit count */
struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY);
	__uint(max_entries, NR_KEYS);
	__type(key, u32);
	__type(value, u64);
} thread_exits SEC(".maps");

SEC("kretprobe/vec_add")
int on_exit(struct grt_kernel_ctx *ctx)
{
	u32 key = EXIT_NS;
	u64 *v = bpf_map_lookup_elem(&thread_exits, &key);

	if (v)
		*v = bpf_ktime_get_ns();
	key = EXITS;
	v = bpf_map_lookup_elem(&thread_exits, &key);
	if (v)
		*v += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
