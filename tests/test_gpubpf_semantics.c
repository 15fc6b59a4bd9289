/* eBPF semantics three ways: the kernel's test runs, the reference interpreter, the translator. */
#include <unistd.h>
#include <bpf/bpf.h>
#include "gpubpf/bpf_interp.h"
#include "gpubpf/gpubpf_test.h"
#include "gpubpf/ptxas_run.h"
#include "gpubpf/random_prog.h"
#include "test_util.h"

/*
 * The kernel runs an arithmetic program as a socket filter (BPF_PROG_TEST_RUN),
 * which needs no GPU and no packet: its return value, the registers folded to
 * 32 bits, must equal the interpreter's. The interpreter in turn is what the
 * GPU's map contents are compared with, and every instruction it executes must
 * be one the verifier walked (the verifier's pruning of branches it proved
 * dead is sound). Random programs the verifier accepts must translate into
 * PTX that ptxas accepts.
 */

#define N(a) (sizeof(a) / sizeof(a[0]))
#define MAX_INSNS 1024

static int kernel_run(const struct bpf_insn *insns, size_t n, uint32_t *ret)
{
	static char log[65536];
	LIBBPF_OPTS(bpf_prog_load_opts, load_opts, .log_buf = log, .log_size = sizeof(log),
		    .log_level = 1);
	char data[64] = {0};
	LIBBPF_OPTS(bpf_test_run_opts, run_opts, .data_in = data, .data_size_in = sizeof(data),
		    .repeat = 1);
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "gpubpf_oracle", "GPL", insns, n,
			       &load_opts);
	int rc;

	if (fd < 0) {
		rc = -errno;
		if (rc != -EPERM && rc != -EACCES)
			printf("  the kernel refused the program: %.300s\n",
			       strstr(log, "\n") ? strrchr(log, ':') ? log : log : log);
		return rc;
	}
	rc = bpf_prog_test_run_opts(fd, &run_opts);
	close(fd);
	*ret = run_opts.retval;
	return rc < 0 ? -errno : 0;
}

/* A bundle of one program over the given maps, verified (and translated when asked). */
struct one {
	struct gpubpf_bundle b;
	struct gpubpf_prog prog;
	struct gpubpf_program p;
};

static int one_prepare(struct one *o, const struct bpf_insn *insns, size_t n,
		       const struct gpubpf_map *maps, size_t nr_maps, bool translate, unsigned id,
		       char *err, size_t err_len)
{
	char name[32];
	struct gpubpf_translate_opts t = {.name = name, .prog_id = (uint16_t)id};
	int rc;

	memset(o, 0, sizeof(*o));
	test_object(&o->b.obj, &o->prog, "kprobe/k", insns, n, maps, nr_maps);
	o->p.prog = &o->prog;
	o->p.id = (uint16_t)id;
	o->b.progs = &o->p;
	o->b.nr_progs = 1;
	rc = gpubpf_verify(&o->b.obj, &o->prog, &o->p.ver, err, err_len);
	if (rc || !translate)
		return rc;
	snprintf(name, sizeof(name), "__grt_rand%u", id);
	return gpubpf_translate(&o->b.obj, &o->prog, &o->p.ver, &t, &o->p.ptx, err, err_len);
}

static void one_free(struct one *o)
{
	gpubpf_verified_free(&o->p.ver);
	gpubpf_translation_free(&o->p.ptx);
}

/* Runs the program in the interpreter; checks every executed instruction was verified. */
static int one_run(struct one *o, uint64_t *ret)
{
	struct interp_session s;
	struct grt_bpf_kernel_ctx ctx = {.param = {3, 5, 7, 11, 0x8000000000000000ull, ~0ull},
					 .kernel_id = 2};
	bool executed[MAX_INSNS] = {false};
	char err[256];
	int rc;

	if (interp_session_init(&s, &o->b, 4, 4096))
		return -ENOMEM;
	s.executed = executed;
	rc = interp_run_one(&s, &o->b, 0, &ctx, ret, err, sizeof(err));
	if (rc)
		printf("  interpreter: %s\n", err);
	for (size_t pc = 0; pc < o->prog.nr_insns; pc++)
		if (executed[pc] && !o->p.ver.info[pc].seen) {
			printf("  insn %zu executed but never verified\n", pc);
			rc = -EINVAL;
		}
	interp_session_free(&s);
	return rc;
}

static void check_against_kernel(const struct bpf_insn *insns, size_t n, unsigned *compared,
				 unsigned *skipped)
{
	struct one o;
	char err[512];
	uint64_t interp_ret = 0;
	uint32_t kernel_ret = 0;
	int rc = one_prepare(&o, insns, n, NULL, 0, false, 0, err, sizeof(err));

	if (rc)
		printf("  verifier refused an arithmetic program: %s\n", err);
	CHECK_EQ_U64(rc, 0);
	if (!rc)
		CHECK_EQ_U64(one_run(&o, &interp_ret), 0);
	rc = kernel_run(insns, n, &kernel_ret);
	if (rc == -EPERM || rc == -EACCES) {
		(*skipped)++;
	} else {
		CHECK_EQ_U64(rc, 0);
		if ((uint32_t)interp_ret != kernel_ret) {
			printf("  interpreter 0x%x, kernel 0x%x for:\n", (uint32_t)interp_ret,
			       kernel_ret);
			for (size_t i = 0; i < n; i++)
				printf("    %zu: code 0x%02x dst %u src %u off %d imm %d\n", i,
				       insns[i].code, insns[i].dst_reg, insns[i].src_reg,
				       insns[i].off, insns[i].imm);
			CHECK(0);
		}
		(*compared)++;
	}
	one_free(&o);
}

/* Edge cases of every operation, 64- and 32-bit, register and immediate operands. */
static void test_alu_edges_against_kernel(void)
{
	static const uint64_t values[] = {0,
					  1,
					  ~0ull,
					  0x8000000000000000ull,
					  0x7fffffffffffffffull,
					  0x80000000,
					  0xffffffff,
					  63,
					  64,
					  65,
					  31,
					  32,
					  33};
	unsigned compared = 0, skipped = 0;

	for (size_t op = 0; op < N(rprog_alu_ops); op++)
		for (int cls = 0; cls < 2; cls++)
			for (size_t a = 0; a < N(values); a++)
				for (size_t b = 0; b < N(values); b++) {
					uint8_t c = (cls ? BPF_ALU64 : BPF_ALU) |
						    rprog_alu_ops[op] |
						    (rprog_alu_ops[op] == BPF_NEG ? BPF_K : BPF_X);
					struct bpf_insn insns[] = {
					    LD_IMM64(6, values[a]),
					    LD_IMM64(7, values[b]),
					    LD_IMM64(8, 0),
					    LD_IMM64(9, 0),
					    I(c, 6, rprog_alu_ops[op] == BPF_NEG ? 0 : 7, 0, 0),
					    MOV64_REG(0, 6),
					    MOV64_REG(1, 0),
					    ALU64_IMM(BPF_RSH, 1, 32),
					    ALU64_REG(BPF_XOR, 0, 1),
					    ALU32_REG(BPF_MOV, 0, 0),
					    EXIT()};

					check_against_kernel(insns, N(insns), &compared, &skipped);
				}
	if (skipped)
		printf("  %u programs not run by the kernel (needs CAP_BPF): interpreter only\n",
		       skipped);
	CHECK(compared + skipped == N(rprog_alu_ops) * 2 * N(values) * N(values));
}

/* Random arithmetic with jumps, instruction set v4 included (Linux 6.6 and later). */
static void test_random_alu_against_kernel(void)
{
	struct rprog_rng rng = {.state = 20261125};
	struct bpf_insn insns[MAX_INSNS];
	unsigned compared = 0, skipped = 0;

	for (int i = 0; i < 600; i++) {
		size_t n = rprog_alu(&rng, insns, 40, i % 2);

		check_against_kernel(insns, n, &compared, &skipped);
	}
	CHECK_EQ_U64(compared + skipped, 600);
}

/*
 * Random programs with memory and helpers: the verifier's verdict, the
 * interpreter's run (no fault, only verified instructions executed), and
 * ptxas on the translations, 40 per module, for sm_75 and sm_90.
 */
static void test_random_programs_translate(void)
{
	struct rprog_rng rng = {.state = 4242};
	struct bpf_insn insns[MAX_INSNS];
	char path[512];
	const char *ptxas = ptxas_find(path, sizeof(path));
	unsigned accepted = 0, refused = 0;

	for (int batch = 0; batch < 3; batch++) {
		struct one progs[40];
		size_t n_ok = 0;
		struct gpubpf_bundle all = {0};
		struct gpubpf_program members[40];

		for (int i = 0; i < 40; i++) {
			size_t n = rprog_full(&rng, insns, 30);
			struct bpf_insn *copy = malloc(n * sizeof(*copy));
			char err[512];
			uint64_t ret;

			memcpy(copy, insns, n * sizeof(*copy));
			if (one_prepare(&progs[n_ok], copy, n, gpubpf_test_maps,
					GPUBPF_TEST_NR_MAPS, true, (unsigned)(batch * 40 + i), err,
					sizeof(err))) {
				refused++;
				one_free(&progs[n_ok]);
				free(copy);
				continue;
			}
			CHECK_EQ_U64(one_run(&progs[n_ok], &ret), 0);
			members[n_ok] = progs[n_ok].p;
			n_ok++;
			accepted++;
		}
		all.obj = progs[0].b.obj;
		all.obj.name = (char *)"random";
		all.progs = members;
		all.nr_progs = n_ok;
		for (int a = 0; ptxas && n_ok && a < 2; a++) {
			const char *arch = a ? "sm_90" : "sm_75";
			char *module = gpubpf_bundle_module(&all, arch, true);
			struct ptxas_result res;

			CHECK_EQ_U64(ptxas_compile(ptxas, module, arch, &res), 0);
			if (res.exit_status)
				printf("  batch %d for %s: %s\n", batch, arch, res.message);
			CHECK_EQ_U64(res.exit_status, 0);
			CHECK_EQ_U64(res.nr_entries, n_ok);
			free(module);
		}
		for (size_t i = 0; i < n_ok; i++) {
			free(progs[i].prog.insns);
			one_free(&progs[i]);
		}
	}
	/* the generator aims at programs the verifier accepts */
	CHECK(accepted >= 100);
	printf("  %u random programs verified and translated, %u refused\n", accepted, refused);
}

int main(int argc, char **argv)
{
	(void)argc;
	gpubpf_test_init(argv[0]);
	RUN_TEST(test_alu_edges_against_kernel);
	RUN_TEST(test_random_alu_against_kernel);
	RUN_TEST(test_random_programs_translate);
	return TEST_EXIT_STATUS();
}
