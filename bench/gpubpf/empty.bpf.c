/* Overhead benchmark: programs that do nothing, at entry and exit. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

SEC("kprobe/vec_add")
int nothing_in(void *ctx)
{
	return 0;
}

SEC("kretprobe/vec_add")
int nothing_out(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
