/* The GPU eBPF verifier: one small program per rule, each refused with its exact message. */
#include "gpubpf/gpubpf_test.h"
#include "test_util.h"

static const uint8_t rodata_bytes[16] = "hello, gpu\0";

static const struct gpubpf_map maps[] = {
    {.name = "counts",
     .type = GRT_BPF_MAP_GPU_ARRAY,
     .key_size = 4,
     .value_size = 8,
     .max_entries = 4},
    {.name = "table", .type = BPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8, .max_entries = 16},
    {.name = "events",
     .type = GRT_BPF_MAP_GPU_RINGBUF,
     .key_size = 4,
     .value_size = 16,
     .max_entries = 16},
    {.name = "rb", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096},
    {.name = ".rodata",
     .type = BPF_MAP_TYPE_ARRAY,
     .key_size = 4,
     .value_size = 16,
     .max_entries = 1,
     .rodata = true,
     .data = (uint8_t *)rodata_bytes},
    {.name = "hist", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 64, .max_entries = 1},
};

/* key 0 on the stack, r0 = bpf_map_lookup_elem(&maps[m], &key): instructions 0..5 */
#define LOOKUP(m)                                                                                  \
	ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), LD_MAP(1, m), CALL(1)

struct verifier_case {
	const char *name;
	const char *section;
	struct bpf_insn insns[128];
	size_t n;	   /* instructions used */
	const char *error; /* NULL: accepted */
};

#define N(a) (sizeof(a) / sizeof(a[0]))

static const struct verifier_case cases[] = {
    {"map value write past its end",
     "kretprobe/vec_add",
     {LOOKUP(0), JMP_IMM(BPF_JEQ, 0, 0, 1), ST(BPF_DW, 0, 8, 1), MOV64_IMM(0, 0), EXIT()},
     10,
     "kretprobe/vec_add insn 7: 8-byte write at offset 8 outside an 8-byte map value"},
    {"map value read without a NULL check",
     "kprobe/k",
     {LOOKUP(0), ST(BPF_DW, 0, 0, 1), MOV64_IMM(0, 0), EXIT()},
     9,
     "kprobe/k insn 6: r0 may be NULL: check the pointer bpf_map_lookup_elem returned before "
     "using it"},
    {"unbounded index into a map value",
     "kprobe/k",
     {LOOKUP(5), JMP_IMM(BPF_JEQ, 0, 0, 6), MOV64_REG(6, 0), CALL(502), ALU64_REG(BPF_ADD, 6, 0),
      LDX(BPF_DW, 1, 6, 0), MOV64_IMM(0, 0), EXIT(), MOV64_IMM(0, 0), EXIT()},
     15,
     "kprobe/k insn 10: 8-byte read at an unbounded offset into map value (compare the index "
     "with the size first)"},
    {"bounded index into a map value",
     "kprobe/k",
     {LOOKUP(5), JMP_IMM(BPF_JEQ, 0, 0, 8), MOV64_REG(6, 0), CALL(502), ALU64_IMM(BPF_AND, 0, 7),
      ALU64_IMM(BPF_LSH, 0, 3), ALU64_REG(BPF_ADD, 6, 0), LDX(BPF_DW, 1, 6, 0), MOV64_IMM(0, 0),
      EXIT(), MOV64_IMM(0, 0), EXIT()},
     17,
     NULL},
    {"index checked against the wrong bound",
     "kprobe/k",
     {LOOKUP(5), JMP_IMM(BPF_JEQ, 0, 0, 8), MOV64_REG(6, 0), CALL(502), ALU64_IMM(BPF_AND, 0, 15),
      ALU64_IMM(BPF_LSH, 0, 3), ALU64_REG(BPF_ADD, 6, 0), LDX(BPF_DW, 1, 6, 0), MOV64_IMM(0, 0),
      EXIT(), MOV64_IMM(0, 0), EXIT()},
     17,
     "kprobe/k insn 12: 8-byte read at offsets 0..120 outside a 64-byte map value"},
    {"index compared before use",
     "kprobe/k",
     {LOOKUP(5), JMP_IMM(BPF_JEQ, 0, 0, 8), MOV64_REG(6, 0), CALL(502), JMP_IMM(BPF_JGT, 0, 7, 5),
      ALU64_IMM(BPF_LSH, 0, 3), ALU64_REG(BPF_ADD, 6, 0), LDX(BPF_DW, 1, 6, 0), MOV64_IMM(0, 0),
      EXIT(), MOV64_IMM(0, 0), EXIT()},
     17,
     NULL},
    {"misaligned variable offset",
     "kprobe/k",
     {LOOKUP(5), JMP_IMM(BPF_JEQ, 0, 0, 7), MOV64_REG(6, 0), CALL(502), ALU64_IMM(BPF_AND, 0, 7),
      ALU64_REG(BPF_ADD, 6, 0), LDX(BPF_DW, 1, 6, 0), MOV64_IMM(0, 0), EXIT(), MOV64_IMM(0, 0),
      EXIT()},
     16,
     "kprobe/k insn 11: 8-byte read at offsets 0..7 of map value is not 8-byte aligned"},
    {"register read before it is set",
     "kprobe/k",
     {MOV64_REG(0, 2), EXIT()},
     2,
     "kprobe/k insn 0: r2 is read before it is set"},
    {"frame pointer written",
     "kprobe/k",
     {MOV64_IMM(10, 0), MOV64_IMM(0, 0), EXIT()},
     3,
     "kprobe/k insn 0: r10 (the frame pointer) is read-only"},
    {"register that does not exist",
     "kprobe/k",
     {MOV64_IMM(11, 0), EXIT()},
     2,
     "kprobe/k insn 0: register r11 does not exist"},
    {"stack write below its end",
     "kprobe/k",
     {ST(BPF_DW, 10, -520, 0), MOV64_IMM(0, 0), EXIT()},
     3,
     "kprobe/k insn 0: 8-byte write at fp-520 outside the 512-byte stack"},
    {"stack write above the frame pointer",
     "kprobe/k",
     {ST(BPF_W, 10, 0, 0), MOV64_IMM(0, 0), EXIT()},
     3,
     "kprobe/k insn 0: 4-byte write at fp+0 outside the 512-byte stack"},
    {"misaligned stack write",
     "kprobe/k",
     {ST(BPF_W, 10, -6, 0), MOV64_IMM(0, 0), EXIT()},
     3,
     "kprobe/k insn 0: 4-byte write at fp-6 is not 4-byte aligned"},
    {"uninitialized stack read",
     "kprobe/k",
     {LDX(BPF_DW, 0, 10, -8), EXIT()},
     2,
     "kprobe/k insn 0: 8-byte read at fp-8 of uninitialized stack"},
    {"unknown opcode",
     "kprobe/k",
     {I(0xe7, 0, 0, 0, 0), EXIT()},
     2,
     "kprobe/k insn 0: unknown opcode 0xe7"},
    {"packet load",
     "kprobe/k",
     {I(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0), EXIT()},
     2,
     "kprobe/k insn 0: unknown opcode 0x20"},
    {"jump outside the program",
     "kprobe/k",
     {JA(5), EXIT()},
     2,
     "kprobe/k insn 0: jump to insn 6 outside the program (2 instructions)"},
    {"loop",
     "kprobe/k",
     {MOV64_IMM(0, 0), JA(-2)},
     2,
     "kprobe/k insn 1: jumps back to insn 0 (loops do not run on the GPU: unroll them with "
     "#pragma unroll)"},
    {"falling off the end",
     "kprobe/k",
     {MOV64_IMM(0, 0)},
     1,
     "kprobe/k insn 0: the program falls off its end after this instruction"},
    {"unreachable code",
     "kprobe/k",
     {MOV64_IMM(0, 0), EXIT(), MOV64_IMM(0, 1), EXIT()},
     4,
     "kprobe/k insn 2: unreachable instruction"},
    {"jump into an ld_imm64",
     "kprobe/k",
     {JA(1), LD_IMM64(0, 1), EXIT()},
     4,
     "kprobe/k insn 0: jump into the middle of the ld_imm64 at insn 1"},
    {"context written",
     "kprobe/k",
     {ST(BPF_W, 1, 0, 0), MOV64_IMM(0, 0), EXIT()},
     3,
     "kprobe/k insn 0: 4-byte write into the context (it is read-only)"},
    {"context read across fields",
     "kprobe/k",
     {LDX(BPF_DW, 0, 1, 128), EXIT()},
     2,
     "kprobe/k insn 0: 8-byte read at offset 128 of the 136-byte context is not within one of "
     "its fields"},
    {"context read of a kernel parameter",
     "kprobe/k",
     {LDX(BPF_W, 0, 1, 8), LDX(BPF_W, 2, 1, 128), EXIT()},
     3,
     NULL},
    {"memory context read",
     "kprobe/__memcapture",
     {LDX(BPF_W, 0, 1, 8), LDX(BPF_DW, 2, 1, 0), EXIT()},
     3,
     NULL},
    {"memory context read past its end",
     "kprobe/__memcapture",
     {LDX(BPF_W, 0, 1, 24), EXIT()},
     2,
     "kprobe/__memcapture insn 0: 4-byte read at offset 24 of the 24-byte context is not within "
     "one of its fields"},
    {"helper that does not exist here",
     "kprobe/k",
     {CALL(12), EXIT()},
     2,
     "kprobe/k insn 0: helper 12 is not available on the GPU"},
    {"bpftime's exit helper",
     "kprobe/k",
     {CALL(507), EXIT()},
     2,
     "kprobe/k insn 0: helper 507 (exit) ends the application's thread: grtrace never changes "
     "what a kernel does"},
    {"lookup without a map",
     "kprobe/k",
     {ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), MOV64_IMM(1, 0), CALL(1),
      MOV64_IMM(0, 0), EXIT()},
     7,
     "kprobe/k insn 4: bpf_map_lookup_elem arg1 (r1) must be a map, not a number"},
    {"output into a data map",
     "kprobe/k",
     {ST(BPF_DW, 10, -8, 0), MOV64_IMM(1, 0), LD_MAP(2, 0), MOV64_IMM(3, 0), MOV64_REG(4, 10),
      ALU64_IMM(BPF_ADD, 4, -8), MOV64_IMM(5, 8), CALL(25), EXIT()},
     10,
     "kprobe/k insn 8: bpf_perf_event_output does not take gpu_array map 'counts'"},
    {"key past the stack",
     "kprobe/k",
     {LD_MAP(1, 1), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), CALL(1), MOV64_IMM(0, 0), EXIT()},
     7,
     "kprobe/k insn 4: bpf_map_lookup_elem arg2: 8 bytes at fp-4 outside the 512-byte stack"},
    {"pointer stored into a map",
     "kprobe/k",
     {LOOKUP(0), JMP_IMM(BPF_JEQ, 0, 0, 1), STX(BPF_DW, 0, 0, 0), MOV64_IMM(0, 0), EXIT()},
     10,
     "kprobe/k insn 7: storing a map value pointer into memory other than the stack would leak "
     "it"},
    {"arithmetic on the context",
     "kprobe/k",
     {ALU64_IMM(BPF_MUL, 1, 2), MOV64_IMM(0, 0), EXIT()},
     3,
     "kprobe/k insn 0: r1 is the context: '*' on it is not allowed"},
    {"32-bit move of a pointer",
     "kprobe/k",
     {ALU32_REG(BPF_MOV, 0, 10), EXIT()},
     2,
     "kprobe/k insn 0: r10 is a stack pointer: a 32-bit move of it is not allowed"},
    {"variable stack offset",
     "kprobe/k",
     {CALL(502), MOV64_REG(1, 10), ALU64_REG(BPF_ADD, 1, 0), MOV64_IMM(0, 0), EXIT()},
     5,
     "kprobe/k insn 2: r1: a variable offset into a stack pointer (its offsets must be "
     "constants)"},
    {"exit without a return value",
     "kprobe/k",
     {EXIT()},
     1,
     "kprobe/k insn 0: exits with r0 not set"},
    {"exit returning a pointer",
     "kprobe/k",
     {MOV64_REG(0, 10), EXIT()},
     2,
     "kprobe/k insn 1: exits returning a stack pointer (return a number)"},
    {"ring reservation never released",
     "kprobe/k",
     {LD_MAP(1, 3), MOV64_IMM(2, 16), MOV64_IMM(3, 0), CALL(131), JMP_IMM(BPF_JEQ, 0, 0, 1),
      MOV64_IMM(0, 0), EXIT()},
     8,
     "kprobe/k insn 7: exits holding the ring reservation made at insn 4 (submit or discard it "
     "on every path)"},
    {"ring reservation written and submitted",
     "kprobe/k",
     {LD_MAP(1, 3), MOV64_IMM(2, 16), MOV64_IMM(3, 0), CALL(131), JMP_IMM(BPF_JEQ, 0, 0, 4),
      ST(BPF_DW, 0, 8, 7), MOV64_REG(1, 0), MOV64_IMM(2, 0), CALL(132), MOV64_IMM(0, 0), EXIT()},
     12,
     NULL},
    {"ring reservation written past its end",
     "kprobe/k",
     {LD_MAP(1, 3), MOV64_IMM(2, 16), MOV64_IMM(3, 0), CALL(131), JMP_IMM(BPF_JEQ, 0, 0, 4),
      ST(BPF_DW, 0, 16, 7), MOV64_REG(1, 0), MOV64_IMM(2, 0), CALL(133), MOV64_IMM(0, 0), EXIT()},
     12,
     "kprobe/k insn 6: 8-byte write at offset 16 outside a 16-byte ring reservation"},
    {"ring reservation submitted twice",
     "kprobe/k",
     {LD_MAP(1, 3), MOV64_IMM(2, 16), MOV64_IMM(3, 0), CALL(131), JMP_IMM(BPF_JEQ, 0, 0, 6),
      MOV64_REG(6, 0), MOV64_REG(1, 6), MOV64_IMM(2, 0), CALL(132), MOV64_REG(1, 6), CALL(132),
      MOV64_IMM(0, 0), EXIT()},
     14,
     "kprobe/k insn 11: bpf_ringbuf_submit arg1 (r1) must be a ring reservation, not a number"},
    {"comparison of a pointer",
     "kprobe/k",
     {MOV64_REG(1, 10), JMP_IMM(BPF_JGT, 1, 5, 0), MOV64_IMM(0, 0), EXIT()},
     4,
     "kprobe/k insn 1: comparison of a stack pointer (r1): only a NULL check of a pointer is "
     "allowed"},
    {"shift past the width",
     "kprobe/k",
     {MOV64_IMM(0, 1), ALU64_IMM(BPF_LSH, 0, 64), EXIT()},
     3,
     "kprobe/k insn 1: shift by 64 in a 64-bit operation"},
    {"32-bit shift past the width",
     "kprobe/k",
     {MOV64_IMM(0, 1), ALU32_IMM(BPF_RSH, 0, 32), EXIT()},
     3,
     "kprobe/k insn 1: shift by 32 in a 32-bit operation"},
    {"division by the constant zero",
     "kprobe/k",
     {MOV64_IMM(0, 1), ALU64_IMM(BPF_DIV, 0, 0), EXIT()},
     3,
     "kprobe/k insn 1: division by the constant zero"},
    {"division by a register that may be zero",
     "kprobe/k",
     {CALL(502), MOV64_IMM(1, 100), ALU64_REG(BPF_DIV, 1, 0), ALU64_REG(BPF_MOD, 1, 0), EXIT()},
     5,
     NULL},
    {"partial read of a spilled pointer",
     "kprobe/k",
     {STX(BPF_DW, 10, 10, -8), LDX(BPF_W, 0, 10, -8), EXIT()},
     3,
     "kprobe/k insn 1: 4-byte read of part of a pointer spilled at fp-8"},
    {"spilled pointer read back whole",
     "kprobe/k",
     {LOOKUP(0), STX(BPF_DW, 10, 0, -16), LDX(BPF_DW, 6, 10, -16), JMP_IMM(BPF_JEQ, 6, 0, 1),
      ST(BPF_DW, 6, 0, 1), MOV64_IMM(0, 0), EXIT()},
     12,
     NULL},
    {"write into read-only data",
     "kprobe/k",
     {I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_VALUE, 0, 4), I(0, 0, 0, 0, 0),
      ST(BPF_DW, 1, 0, 1), MOV64_IMM(0, 0), EXIT()},
     5,
     "kprobe/k insn 2: 8-byte write into read-only section .rodata"},
    {"read of read-only data",
     "kprobe/k",
     {I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_VALUE, 0, 4), I(0, 0, 0, 0, 0),
      LDX(BPF_DW, 0, 1, 8), EXIT()},
     4,
     NULL},
    {"event size not a constant",
     "kprobe/k",
     {CALL(502), MOV64_REG(5, 0), MOV64_IMM(1, 0), LD_MAP(2, 2), MOV64_IMM(3, 0),
      ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0), MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -16),
      CALL(25), EXIT()},
     12,
     "kprobe/k insn 10: bpf_perf_event_output arg5 (r5, a size) must be a constant on the GPU"},
    {"event larger than the ring's value",
     "kprobe/k",
     {MOV64_IMM(5, 32), MOV64_IMM(1, 0), LD_MAP(2, 2), MOV64_IMM(3, 0), ST(BPF_DW, 10, -32, 0),
      ST(BPF_DW, 10, -24, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0), MOV64_REG(4, 10),
      ALU64_IMM(BPF_ADD, 4, -32), CALL(25), EXIT()},
     13,
     "kprobe/k insn 11: bpf_perf_event_output: a 32-byte event is larger than map 'events''s "
     "16-byte value"},
    {"event with bpftime's NULL context",
     "kprobe/k",
     {MOV64_IMM(5, 16), MOV64_IMM(1, 0), LD_MAP(2, 2), MOV64_IMM(3, 0), ST(BPF_DW, 10, -16, 0),
      ST(BPF_DW, 10, -8, 0), MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -16), CALL(25), EXIT()},
     11,
     NULL},
    {"map that does not exist",
     "kprobe/k",
     {LD_MAP(1, 9), MOV64_IMM(0, 0), EXIT()},
     4,
     "kprobe/k insn 0: ld_imm64 of map 9, which does not exist"},
    {"call of another function",
     "kprobe/k",
     {I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1), EXIT()},
     2,
     "kprobe/k insn 0: calls another eBPF function (not supported on the GPU: declare it static "
     "__always_inline)"},
    {"atomic on the context",
     "kprobe/k",
     {MOV64_IMM(2, 1), ATOMIC(BPF_DW, BPF_ADD, 1, 2, 0), MOV64_IMM(0, 0), EXIT()},
     4,
     "kprobe/k insn 1: atomic on the context (it is read-only)"},
    {"byte atomic",
     "kprobe/k",
     {LOOKUP(0), JMP_IMM(BPF_JEQ, 0, 0, 2), MOV64_IMM(1, 1), ATOMIC(BPF_B, BPF_ADD, 0, 1, 0),
      MOV64_IMM(0, 0), EXIT()},
     11,
     "kprobe/k insn 8: 1-byte atomic (4 or 8 bytes)"},
};

/* Verifies insns as program `sec` over the fixture maps: 0 or -EINVAL with err. */
static int verify(const char *sec, const struct bpf_insn *insns, size_t n,
		  struct gpubpf_verified *ver, char *err, size_t err_len)
{
	struct gpubpf_object obj;
	struct gpubpf_prog prog;

	test_object(&obj, &prog, sec, insns, n, maps, N(maps));
	return gpubpf_verify(&obj, &prog, ver, err, err_len);
}

/* 18 diamonds that each leave a different constant on the stack: 2^18 paths, none alike. */
static size_t complex_program(struct bpf_insn *insns)
{
	size_t n = 0;

	for (int k = 0; k < 18; k++) {
		insns[n++] = CALL(502);
		insns[n++] = JMP_IMM(BPF_JGT, 0, 5, 2);
		insns[n++] = ST(BPF_DW, 10, -8 * (k + 1), 1);
		insns[n++] = JA(1);
		insns[n++] = ST(BPF_DW, 10, -8 * (k + 1), 2);
	}
	insns[n++] = MOV64_IMM(0, 0);
	insns[n++] = EXIT();
	return n;
}

static void test_each_rule(void)
{
	for (size_t i = 0; i < N(cases); i++) {
		const struct verifier_case *c = &cases[i];
		struct gpubpf_verified ver;
		char err[512] = "";
		int rc = verify(c->section, c->insns, c->n, &ver, err, sizeof(err));

		if (c->error) {
			if (rc != -EINVAL || strcmp(err, c->error))
				printf("  case '%s': rc %d, message \"%s\"\n", c->name, rc, err);
			CHECK_EQ_U64(rc, -EINVAL);
			CHECK_STR(err, c->error);
		} else {
			if (rc)
				printf("  case '%s' refused: %s\n", c->name, err);
			CHECK_EQ_U64(rc, 0);
		}
		gpubpf_verified_free(&ver);
	}
}

static void test_too_complex(void)
{
	struct bpf_insn insns[128];
	size_t n = complex_program(insns);
	struct gpubpf_verified ver;
	char err[512] = "";

	CHECK_EQ_U64(verify("kprobe/k", insns, n, &ver, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "kprobe/k: program too complex: more than 262144 instructions explored");
	gpubpf_verified_free(&ver);
}

/* What the translator relies on: fixed stack offsets, context fields, the maps of calls. */
static void test_facts_for_the_translator(void)
{
	const struct bpf_insn insns[] = {LDX(BPF_W, 6, 1, 16),	    LOOKUP(0),
					 JMP_IMM(BPF_JEQ, 0, 0, 1), ST(BPF_DW, 0, 0, 1),
					 MOV64_IMM(0, 0),	    EXIT()};
	struct gpubpf_verified ver;
	char err[512] = "";

	CHECK_EQ_U64(verify("kretprobe/k", insns, N(insns), &ver, err, sizeof(err)), 0);
	CHECK(ver.stack_fixed);
	CHECK_EQ_U64(ver.stack_low, -4);
	CHECK_EQ_U64(ver.ctx_fields, 1u << 2); /* param[2] */
	CHECK_EQ_U64(ver.info[0].mem.bases, GPUBPF_BASE_CTX);
	CHECK_EQ_U64(ver.info[0].mem.off, 16);
	CHECK_EQ_U64(ver.info[1].mem.stack_off, -4);
	CHECK_EQ_U64(ver.info[6].map, 0);
	CHECK_EQ_U64(ver.info[6].arg[1].bases, GPUBPF_BASE_STACK);
	CHECK_EQ_U64(ver.info[6].arg[1].stack_off, -4);
	CHECK_EQ_U64(ver.info[8].mem.bases, GPUBPF_BASE_MAP);
	CHECK_EQ_U64(ver.info[8].mem.map, 0);
	CHECK(ver.info[8].seen);
	gpubpf_verified_free(&ver);
}

/* A stack pointer whose offset depends on the path: the stack goes to local memory. */
static void test_stack_offset_varies(void)
{
	const struct bpf_insn insns[] = {
	    ST(BPF_DW, 10, -8, 1),     ST(BPF_DW, 10, -16, 2),	  CALL(502),
	    MOV64_REG(1, 10),	       ALU64_IMM(BPF_ADD, 1, -8), JMP_IMM(BPF_JGT, 0, 5, 1),
	    ALU64_IMM(BPF_ADD, 1, -8), LDX(BPF_DW, 0, 1, 0),	  EXIT()};
	struct gpubpf_verified ver;
	char err[512] = "";

	CHECK_EQ_U64(verify("kprobe/k", insns, N(insns), &ver, err, sizeof(err)), 0);
	CHECK(!ver.stack_fixed);
	CHECK_EQ_U64(ver.stack_low, -16);
	CHECK_EQ_U64(ver.info[7].mem.stack_off, GPUBPF_OFF_VARIES);
	gpubpf_verified_free(&ver);
}

/*
 * One load whose address is the stack on one path and a map value on the
 * other (clang merges the two calls of bpftime's cuda_counter this way): the
 * stack must go to local memory, whichever path the verifier walks first.
 * With the stack path first it stayed in registers, and the H100 read the
 * stack pointer as an address: an illegal memory access.
 */
static void check_stack_or_map(const struct bpf_insn *insns, size_t n, size_t load)
{
	struct gpubpf_verified ver;
	char err[512] = "";

	CHECK_EQ_U64(verify("kprobe/k", insns, n, &ver, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK(!ver.stack_fixed);
	CHECK_EQ_U64(ver.info[load].mem.bases, GPUBPF_BASE_STACK | GPUBPF_BASE_MAP);
	gpubpf_verified_free(&ver);
}

static void test_stack_or_map_pointer(void)
{
	/* the map value's path falls through, the stack's is the jump */
	const struct bpf_insn map_first[] = {
	    ST(BPF_DW, 10, -16, 1), LOOKUP(0),		   MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -16),
	    JMP_IMM(BPF_JEQ, 0, 0, 1), MOV64_REG(1, 0), LDX(BPF_DW, 0, 1, 0), EXIT()};
	/* the stack's path falls through (and jumps over the map's) */
	const struct bpf_insn stack_first[] = {
	    ST(BPF_DW, 10, -16, 1),    LOOKUP(0),	     MOV64_REG(1, 10),
	    ALU64_IMM(BPF_ADD, 1, -16), JMP_IMM(BPF_JNE, 0, 0, 1), JMP_IMM(BPF_JA, 0, 0, 1),
	    MOV64_REG(1, 0),	       LDX(BPF_DW, 0, 1, 0),  EXIT()};

	check_stack_or_map(map_first, N(map_first), N(map_first) - 2);
	check_stack_or_map(stack_first, N(stack_first), N(stack_first) - 2);
}

/* A helper reading stack bytes never written reads zeros: those slots are zeroed first. */
static void test_stack_zeroed_for_helpers(void)
{
	const struct bpf_insn insns[] = {MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
					 LD_MAP(1, 1),	   CALL(1),
					 MOV64_IMM(0, 0),  EXIT()};
	struct gpubpf_verified ver;
	char err[512] = "";

	CHECK_EQ_U64(verify("kprobe/k", insns, N(insns), &ver, err, sizeof(err)), 0);
	CHECK_EQ_U64(ver.stack_zeroed, 1u << 1); /* fp-16..fp-9: slot 1 */
	gpubpf_verified_free(&ver);
}

int main(int argc, char **argv)
{
	(void)argc;
	gpubpf_test_init(argv[0]);
	RUN_TEST(test_each_rule);
	RUN_TEST(test_too_complex);
	RUN_TEST(test_facts_for_the_translator);
	RUN_TEST(test_stack_offset_varies);
	RUN_TEST(test_stack_or_map_pointer);
	RUN_TEST(test_stack_zeroed_for_helpers);
	return TEST_EXIT_STATUS();
}
