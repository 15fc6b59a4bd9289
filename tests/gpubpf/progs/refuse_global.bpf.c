/* Refused: a writable global variable (state must live in maps). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

u64 hits;

SEC("kprobe/global_kernel")
int count(void *ctx)
{
	hits++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
