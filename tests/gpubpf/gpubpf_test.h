/* Shared by the GPU eBPF tests: instruction macros, in-memory objects, the test programs. */
#ifndef GRT_TESTS_GPUBPF_TEST_H
#define GRT_TESTS_GPUBPF_TEST_H

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/gpubpf.h"
#include "gpubpf/ptxas_run.h"

/* --- instructions, written as the kernel's samples/bpf macros name them ------------------ */

#define I(c, d, s, o, i)                                                                           \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define ALU64_IMM(op, d, i) I(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU64_REG(op, d, s) I(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, i) I(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU32_REG(op, d, s) I(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) ALU64_IMM(BPF_MOV, d, i)
#define MOV64_REG(d, s) ALU64_REG(BPF_MOV, d, s)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) I(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define ATOMIC(sz, op, d, s, o) I(BPF_STX | BPF_ATOMIC | (sz), d, s, o, op)
#define JMP_IMM(op, d, i, o) I(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMP_REG(op, d, s, o) I(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JMP32_IMM(op, d, i, o) I(BPF_JMP32 | (op) | BPF_K, d, 0, o, i)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(fn) I(BPF_JMP | BPF_CALL, 0, 0, 0, fn)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* ld_imm64 of a map (two instructions) */
#define LD_MAP(d, m) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, m), I(0, 0, 0, 0, 0)
#define LD_IMM64(d, v)                                                                             \
	I(BPF_LD | BPF_IMM | BPF_DW, d, 0, 0, (int32_t)(uint32_t)(v)),                             \
	    I(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))

/* --- in-memory objects ------------------------------------------------------------------ */

/* Maps of the generated programs (random_prog.h) and the fuzzer: 0 values, 1 events, 2 table. */
static const struct gpubpf_map gpubpf_test_maps[] = {
    {.name = "values",
     .type = GRT_BPF_MAP_GPU_ARRAY,
     .key_size = 4,
     .value_size = 64,
     .max_entries = 4},
    {.name = "events",
     .type = GRT_BPF_MAP_GPU_RINGBUF,
     .key_size = 4,
     .value_size = 32,
     .max_entries = 16},
    {.name = "table", .type = BPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8, .max_entries = 32},
    {.name = "threads",
     .type = GRT_BPF_MAP_PERGPUTD_ARRAY,
     .key_size = 4,
     .value_size = 16,
     .max_entries = 2},
    {.name = "rb", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096},
};

#define GPUBPF_TEST_NR_MAPS (sizeof(gpubpf_test_maps) / sizeof(gpubpf_test_maps[0]))

/* An object of one program (section sec) and the given maps, for the table-driven tests. */
static inline void test_object(struct gpubpf_object *obj, struct gpubpf_prog *prog, const char *sec,
			       const struct bpf_insn *insns, size_t n,
			       const struct gpubpf_map *maps, size_t nr_maps)
{
	const char *kernel;

	memset(obj, 0, sizeof(*obj));
	memset(prog, 0, sizeof(*prog));
	obj->name = (char *)"test.bpf.o";
	prog->section = (char *)sec;
	prog->name = (char *)"prog";
	gpubpf_parse_section(sec, &prog->attach, &kernel);
	prog->kernel = (char *)kernel;
	prog->insns = (struct bpf_insn *)insns;
	prog->nr_insns = n;
	obj->progs = prog;
	obj->nr_progs = 1;
	for (size_t i = 0; i < nr_maps; i++)
		obj->maps[i] = maps[i];
	obj->nr_maps = nr_maps;
}

/* --- the build's files ---------------------------------------------------------------- */

static char gpubpf_test_build[512] = "build";

/* The build directory, from the test binary's path (<build>/tests/test_x). */
static inline void gpubpf_test_init(const char *argv0)
{
	char copy[512];

	snprintf(copy, sizeof(copy), "%s", argv0);
	snprintf(gpubpf_test_build, sizeof(gpubpf_test_build), "%s", dirname(dirname(copy)));
}

/* <build>/gpubpf/<dir>/<name>.bpf.o */
static inline const char *gpubpf_test_object(const char *dir, const char *name)
{
	static char path[2][700];
	static int slot;

	slot ^= 1;
	snprintf(path[slot], sizeof(path[slot]), "%s/gpubpf/%s/%s.bpf.o", gpubpf_test_build, dir,
		 name);
	return path[slot];
}

/*
 * Compiles b's programs for arch with ptxas, one test kernel each. True when
 * ptxas accepts the module and finds every kernel; res says why not.
 */
static inline bool gpubpf_test_module_compiles(const char *ptxas, const struct gpubpf_bundle *b,
					       const char *arch, struct ptxas_result *res)
{
	char *module = gpubpf_bundle_module(b, arch, true);
	bool ok = module && !ptxas_compile(ptxas, module, arch, res) && !res->exit_status &&
		  res->nr_entries == b->nr_progs;

	free(module);
	return ok;
}

#endif
