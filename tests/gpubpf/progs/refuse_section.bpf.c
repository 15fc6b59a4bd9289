/* Refused: a section that is no GPU probe. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

SEC("tracepoint/sched/sched_switch")
int not_gpu(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
