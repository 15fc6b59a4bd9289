/* Overhead benchmark: one 32-byte ring event per thread at exit (bpftime's kernelretsnoop). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"
#include "thread_exit_ring.h"

SEC("kretprobe/vec_add")
int event_per_thread(void *ctx)
{
	struct thread_exit e;

	bpf_get_thread_idx(&e.x, &e.y, &e.z);
	e.ns = bpf_get_globaltimer();
	bpf_perf_event_output(ctx, &exits, BPF_F_CURRENT_CPU, &e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
