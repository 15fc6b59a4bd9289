/* Every ALU operation clang emits, 64- and 32-bit, on values from the kernel's parameters. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "gpu_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, 32);
	__type(key, u32);
	__type(value, u64);
} results SEC(".maps");

static __always_inline void put(u32 slot, u64 v)
{
	u64 *p = bpf_map_lookup_elem(&results, &slot);

	if (p)
		*p = v;
}

SEC("kprobe/alu_kernel")
int alu(struct grt_kernel_ctx *ctx)
{
	u64 a = ctx->param[0], b = ctx->param[1];
	u32 c = (u32)ctx->param[2], d = (u32)ctx->param[3];
	s64 sa = (s64)a, sb = (s64)b;
	s32 sc = (s32)c;

	put(0, a + b);
	put(1, a - b);
	put(2, a * b);
	put(3, b ? a / b : 7);
	put(4, b ? a % b : 9);
	put(5, a << (b & 63));
	put(6, a >> (b & 63));
	put(7, (u64)(sa >> (b & 63)));
	put(8, a & b);
	put(9, a | b);
	put(10, a ^ b);
	put(11, -a);
	put(12, c + d);
	put(13, c - d);
	put(14, c * d);
	put(15, d ? c / d : 3);
	put(16, d ? c % d : 5);
	put(17, c << (d & 31));
	put(18, c >> (d & 31));
	put(19, (u32)(sc >> (d & 31)));
	put(20, __builtin_bswap64(a));
	put(21, __builtin_bswap32(c));
	put(22, __builtin_bswap16((u16)c));
	put(23, sa < sb ? 1 : sa > sb ? 2 : 3);
	put(24, (s32)c < (s32)d ? 11 : 12);
	put(25, (u8)a + (u16)b);
	put(26, (s64)(s8)a);
	put(27, (s64)(s16)b);
	put(28, (s64)(s32)c);
	put(29, a > 1000 && b < 1000 ? a - b : b - a);
	put(30, (a & 0xff00) ? 1 : 0);
	put(31, ctx->kernel_id);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
