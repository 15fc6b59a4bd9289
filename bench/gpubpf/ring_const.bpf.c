/* Overhead experiment: the ring variant's output alone, a constant event (no clock, no index). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"
#include "thread_exit_ring.h"

SEC("kretprobe/vec_add")
int event_per_thread(void *ctx)
{
	struct thread_exit e = {1, 2, 3, 4};

	bpf_perf_event_output(ctx, &exits, BPF_F_CURRENT_CPU, &e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
