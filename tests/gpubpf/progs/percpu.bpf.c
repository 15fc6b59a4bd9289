/* Per-SM counters, the SM id, CLOCK_MONOTONIC time and the host process id. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct sm_stat {
	u64 threads;
	u64 last_ns;
	u64 pid;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct sm_stat);
} per_sm SEC(".maps");

SEC("kretprobe/percpu_kernel")
int per_sm_exit(struct grt_kernel_ctx *ctx)
{
	u32 zero = 0;
	struct sm_stat *s = bpf_map_lookup_elem(&per_sm, &zero);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->threads, 1);
	s->last_ns = bpf_ktime_get_ns();
	s->pid = bpf_get_current_pid_tgid() >> 32;
	if (bpf_get_smp_processor_id() != bpf_get_sm_id())
		s->pid = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
