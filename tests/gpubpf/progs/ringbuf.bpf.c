/* The standard ring buffer: reserve, submit, discard, output; strings from read-only data. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct ring_sample {
	u32 block;
	u32 thread;
	char tag[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} samples SEC(".maps");

SEC("kretprobe/ring_kernel")
int ring(struct grt_kernel_ctx *ctx)
{
	u64 bx, by, bz, tx, ty, tz;
	struct ring_sample *s, copy = {};

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s)
		return 0;
	s->block = bx;
	s->thread = tx;
	__builtin_memcpy(s->tag, "reserve", 8);
	if (tx & 1) {
		bpf_ringbuf_discard(s, 0);
	} else {
		bpf_ringbuf_submit(s, 0);
	}
	copy.block = bx;
	copy.thread = tx;
	__builtin_memcpy(copy.tag, "output", 7);
	bpf_ringbuf_output(&samples, &copy, sizeof(copy), 0);
	if (!tx && !bx)
		ebpf_puts("first thread done");
	bpf_printk("block %lu thread %lu", bx, tx);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
