/* eBPF instruction encoding: the kernel's uapi names plus newer ones its headers may lack. */
#ifndef GRT_GPUBPF_BPF_INSN_H
#define GRT_GPUBPF_BPF_INSN_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>

/* Instruction set v4 (Linux 6.6), absent from older uapi headers. */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80 /* LDX with sign extension */
#endif
#ifndef BPF_FUNC_ringbuf_output
#define BPF_FUNC_ringbuf_output 130
#endif

#define BPF_INSN_CLASS(code) ((code)&0x07)
#define BPF_INSN_OP(code) ((code)&0xf0)
#define BPF_INSN_SRC(code) ((code)&0x08)
#define BPF_INSN_SIZE(code) ((code)&0x18)
#define BPF_INSN_MODE(code) ((code)&0xe0)

#define BPF_MAX_REG 11 /* R0..R10 */
#define BPF_STACK_SIZE 512

/* Bytes of a load/store size field (BPF_B/H/W/DW). */
static inline unsigned bpf_size_bytes(uint8_t code)
{
	switch (BPF_INSN_SIZE(code)) {
	case BPF_B:
		return 1;
	case BPF_H:
		return 2;
	case BPF_W:
		return 4;
	default:
		return 8;
	}
}

/* The first half of a 16-byte load of a 64-bit immediate (map reference, constant). */
static inline bool bpf_is_ld_imm64(const struct bpf_insn *insn)
{
	return insn->code == (BPF_LD | BPF_IMM | BPF_DW);
}

#endif
