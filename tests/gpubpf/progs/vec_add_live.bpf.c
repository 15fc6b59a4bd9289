/* vec_add's blocks as they finish: a ring event, a printk line and a puts, for record and snoop. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct block_done {
	u64 block;
	u64 n; /* the kernel's fourth parameter */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__type(value, struct block_done);
} done SEC(".maps");

/* a glob: every kernel whose name starts with vec_ */
SEC("kretprobe/vec_*")
int on_block_done(struct grt_kernel_ctx *ctx)
{
	u64 bx, by, bz, tx, ty, tz;
	struct block_done e = {};

	bpf_get_thread_idx(&tx, &ty, &tz);
	if (tx)
		return 0;
	bpf_get_block_idx(&bx, &by, &bz);
	e.block = bx;
	e.n = ctx->param[3];
	bpf_ringbuf_output(&done, &e, sizeof(e), 0);
	if (!bx)
		ebpf_puts("block 0 done");
	bpf_printk("block %lu of n=%lu done", bx, e.n);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
