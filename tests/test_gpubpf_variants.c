/* GRTRACE_BPF_VARIANTS: each code form's PTX, and ptxas taking it for sm_75 and sm_90. */
#include "gpubpf/bpf_attach.h"
#include "gpubpf/gpubpf_test.h"
#include "gpubpf/ptxas_run.h"
#include "test_util.h"

#define N(a) (sizeof(a) / sizeof(a[0]))
#define ALL "ring_fast_drop,ring_warp_slots,ring_entry_read,l2_evict_last"

/* Loads dir/name with GRTRACE_BPF_VARIANTS set to list (NULL: unset). */
static int load(const char *dir, const char *name, const char *list, struct gpubpf_bundle *b)
{
	char err[512];
	int rc;

	if (list)
		setenv(GPUBPF_VARIANTS_ENV, list, 1);
	else
		unsetenv(GPUBPF_VARIANTS_ENV);
	rc = gpubpf_bundle_load(gpubpf_test_object(dir, name), NULL, b, err, sizeof(err));
	if (rc)
		printf("  %s: %s\n", name, err);
	unsetenv(GPUBPF_VARIANTS_ENV);
	return rc;
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *at = text; (at = strstr(at, what)); at++)
		n++;
	return n;
}

static void test_variants_parse(void)
{
	unsigned v = 99;
	char err[256];
	struct gpubpf_bundle b;

	/* unset: the default forms; set empty or "none": none */
	CHECK_EQ_U64(gpubpf_variants_parse(NULL, &v, err, sizeof(err)), 0);
	CHECK_EQ_U64(v, GPUBPF_VARIANT_RING_FAST_DROP);
	CHECK_EQ_U64(gpubpf_variants_parse("", &v, err, sizeof(err)), 0);
	CHECK_EQ_U64(v, 0);
	CHECK_EQ_U64(gpubpf_variants_parse("none", &v, err, sizeof(err)), 0);
	CHECK_EQ_U64(v, 0);
	CHECK_EQ_U64(gpubpf_variants_parse("ring_warp_slots,,l2_evict_last,", &v, err, sizeof(err)),
		     0);
	CHECK_EQ_U64(v, GPUBPF_VARIANT_RING_WARP_SLOTS | GPUBPF_VARIANT_L2_EVICT_LAST);
	CHECK_EQ_U64(gpubpf_variants_parse(ALL, &v, err, sizeof(err)), 0);
	CHECK_EQ_U64(v, GPUBPF_VARIANT_RING_FAST_DROP | GPUBPF_VARIANT_RING_WARP_SLOTS |
			    GPUBPF_VARIANT_RING_EARLY_READ | GPUBPF_VARIANT_RING_ENTRY_READ |
			    GPUBPF_VARIANT_L2_EVICT_LAST);
	CHECK_EQ_U64(gpubpf_variants_parse("ring_fast_drop,ring_fast", &v, err, sizeof(err)),
		     -EINVAL);
	CHECK_STR(err, "GRTRACE_BPF_VARIANTS: unknown variant 'ring_fast'; known: ring_fast_drop, "
		       "ring_warp_slots, ring_early_read, ring_entry_read, l2_evict_last (or none)");
	/* a bad list refuses the object, naming it */
	setenv(GPUBPF_VARIANTS_ENV, "fast", 1);
	CHECK_EQ_U64(
	    gpubpf_bundle_load(gpubpf_test_object("bench", "ring"), NULL, &b, err, sizeof(err)),
	    -EINVAL);
	unsetenv(GPUBPF_VARIANTS_ENV);
	CHECK(strstr(err, "ring.bpf.o: GRTRACE_BPF_VARIANTS: unknown variant 'fast'") != NULL);
	gpubpf_bundle_free(&b);
}

/* Unset, the translation is the default one: no variant's instruction appears. */
/* "none": the first forms, byte for byte as before the variants; unset: the fast drop alone */
static void test_default_unchanged(void)
{
	struct gpubpf_bundle b;
	char *fast;

	CHECK_EQ_U64(load("bench", "ring", NULL, &b), 0);
	fast = strdup(b.progs[0].ptx.body);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "vote.sync.any.pred"), 1);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "%warpid"), 0);
	gpubpf_bundle_free(&b);
	CHECK_EQ_U64(load("bench", "ring", "ring_fast_drop", &b), 0);
	CHECK_STR(b.progs[0].ptx.body, fast);
	gpubpf_bundle_free(&b);
	free(fast);
	CHECK_EQ_U64(load("bench", "ring", "none", &b), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "vote.sync.any.pred"), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "%warpid"), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "%xw"), 0);
	gpubpf_bundle_free(&b);
	CHECK_EQ_U64(load("bench", "counter", NULL, &b), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "cache_hint"), 0);
	gpubpf_bundle_free(&b);
	CHECK_EQ_U64(load("bench", "counter", "none", &b), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "cache_hint"), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "l2p"), 0);
	gpubpf_bundle_free(&b);
}

/* The ring's forms: one early exit per output when exhausted; slots by warp id parity. */
static void test_ring_forms(void)
{
	struct gpubpf_bundle b;
	const char *body;

	CHECK_EQ_U64(load("bench", "ring", "ring_fast_drop", &b), 0);
	body = b.progs[0].ptx.body;
	CHECK_EQ_U64(count(body, "vote.sync.any.pred"), 1);
	/* the lowest lane counts every active lane (popc of the mask), then the warp drops */
	CHECK(strstr(body, "\tcvt.u64.u32 %t8, %w3;\n\t@%p0 red.global.add.u64 [%t6+32], %t8;\n"
			   "\tbra $H0_drop;\n$H1_room:\n") != NULL);
	/* the capacity is read only on the full path */
	CHECK(strstr(body, "$H1_room:\n\tld.global.nc.u64 %t5, [%t0+16];\n") != NULL);
	CHECK_EQ_U64(count(body, "[%t0+16]"), 1);
	/* the full path is still there for warps that find room */
	CHECK_EQ_U64(count(body, "atom.global.add.u64"), 1);
	CHECK_EQ_U64(count(body, "red.global.add.u64"), 2);
	CHECK_EQ_U64(count(body, "%warpid"), 0);
	gpubpf_bundle_free(&b);

	CHECK_EQ_U64(load("bench", "ring", "ring_warp_slots", &b), 0);
	body = b.progs[0].ptx.body;
	CHECK(strstr(body,
		     "\tmov.u32 %w5, %smid;\n\tmov.u32 %w8, %warpid;\n\tand.b32 %w8, %w8, 1;\n"
		     "\tshl.b32 %w5, %w5, 1;\n\tor.b32 %w5, %w5, %w8;\n"
		     "\tand.b32 %w5, %w5, 255;\n\tmul.wide.u32 %t6, %w5, 128;\n") != NULL);
	CHECK_EQ_U64(count(body, "vote.sync.any.pred"), 0);
	gpubpf_bundle_free(&b);
}

/*
 * The early read: once, before the program's first instruction, for its first ring; every
 * output to that ring takes the word from %xw, outputs to other rings and printk load it.
 */
static void test_ring_early_read(void)
{
	struct gpubpf_bundle b;
	const char *body, *read;

	CHECK_EQ_U64(load("bench", "ring", "ring_early_read", &b), 0);
	body = b.progs[0].ptx.body;
	read = strstr(body, "\tld.global.nc.u64 %t0, [%env+56];\n\tmov.u32 %w0, %smid;\n"
			    "\tand.b32 %w0, %w0, 255;\n\tmul.wide.u32 %t1, %w0, 128;\n"
			    "\tadd.u64 %t1, %t1, %t0;\n"
			    "\tld.relaxed.gpu.global.u64 %xw, [%t1+40];\n");
	CHECK(read != NULL);
	/* right after the prologue: before the program's first instruction (r6 = r1) */
	CHECK(read && strstr(body, "mov.b64 %r6, %r1;") > read);
	CHECK_EQ_U64(count(body, ".reg .b64 %xw;"), 1);
	CHECK_EQ_U64(count(body, "mov.b64 %t7, %xw;"), 1);
	/* the output no longer loads the word itself */
	CHECK_EQ_U64(count(body, "ld.relaxed.gpu.global.u64"), 2); /* the early read, head */
	gpubpf_bundle_free(&b);

	/* with warp slots, the early read takes the same slot as the output */
	CHECK_EQ_U64(load("bench", "ring", "ring_early_read,ring_warp_slots", &b), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "%warpid"), 2);
	gpubpf_bundle_free(&b);

	/* only ring_entry_read marks the block for the attach code to move */
	CHECK_EQ_U64(load("bench", "ring", "ring_early_read", &b), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "grtrace early read"), 0);
	gpubpf_bundle_free(&b);

	/* a program without a ring output: no early read */
	CHECK_EQ_U64(load("bench", "counter", "ring_early_read", &b), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "%xw"), 0);
	gpubpf_bundle_free(&b);
}

/* Two modules to paste exit programs into: sm_90 (PTX 8.0) and sm_75 (PTX 6.3). */
static const char *const modules[] = {
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 k_p0)\n{\n\tret;\n}\n",
    ".version 6.3\n.target sm_75\n.address_size 64\n"
    ".visible .entry k(.param .u64 k_p0)\n{\n\tret;\n}\n",
};

static void check_ptxas(const char *ptx, const char *arch)
{
	char path[512];
	const char *ptxas = ptxas_find(path, sizeof(path));
	struct ptxas_result pr;

	if (!ptxas)
		return;
	CHECK_EQ_U64(ptxas_compile(ptxas, ptx, arch, &pr), 0);
	if (pr.exit_status)
		printf("  %s: %s\n", arch, pr.message);
	CHECK_EQ_U64(pr.exit_status, 0);
}

/*
 * ring_entry_read: the exit program's early read runs at the kernel's entry
 * (when the environment is on), and the program at the exit takes its word.
 */
static void test_ring_entry_read(void)
{
	struct gpubpf_bundle b;
	struct gpubpf_attach_prog prog;
	struct gpubpf_attach_opts o = {.progs = &prog, .nr_progs = 1};
	const char *read_block = "\tmov.b64 %grt_p_x0, 0;\n"
				 "\t@%grt_p_off bra $grt_p_bpf_reads_done;\n"
				 "\t// grtrace GPU eBPF: __grt_bpf0's ring word, read early\n"
				 "{\n\t.reg .b64 %env;\n\t.reg .b64 %xw;\n"
				 "\tmov.b64 %env, %grt_p_e;\n{\n";

	CHECK_EQ_U64(load("bench", "ring", "ring_entry_read", &b), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, GPUBPF_EARLY_OPEN), 1);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, GPUBPF_EARLY_CLOSE), 1);
	prog = (struct gpubpf_attach_prog){GRT_BPF_ATTACH_EXIT, "k", &b.progs[0].ptx};
	for (size_t i = 0; i < N(modules); i++) {
		struct gpubpf_attach_result res;
		const char *at_entry, *at_exit;

		CHECK_EQ_U64(gpubpf_attach(modules[i], strlen(modules[i]), &o, &res), 0);
		CHECK_EQ_U64(res.rw.nr_instrumented, 1);
		CHECK_EQ_U64(count(res.rw.ptx, "\t.reg .b64 %grt_p_x<1>;\n"), 1);
		at_entry = strstr(res.rw.ptx, read_block);
		at_exit = strstr(res.rw.ptx, "$grt_p_bpf_exit:");
		CHECK(at_entry && at_exit && at_entry < at_exit);
		CHECK(strstr(res.rw.ptx,
			     "\tld.relaxed.gpu.global.u64 %xw, [%t1+40];\n}\n"
			     "\tmov.b64 %grt_p_x0, %xw;\n}\n$grt_p_bpf_reads_done:\n") != NULL);
		/* the exit program reads no word of its own: it takes the entry's */
		CHECK(at_exit && strstr(at_exit, "\tmov.b64 %xw, %grt_p_x0;\n") != NULL);
		CHECK_EQ_U64(count(res.rw.ptx, "ld.relaxed.gpu.global.u64 %xw"), 1);
		CHECK_EQ_U64(count(res.rw.ptx, "grtrace early read"), 0);
		check_ptxas(res.rw.ptx, i ? "sm_75" : "sm_90");
		gpubpf_attach_result_free(&res);
	}
	gpubpf_bundle_free(&b);

	/* an entry program keeps its read in place: it runs at the entry already */
	CHECK_EQ_U64(load("progs", "bpftime_kernel_trace", "ring_entry_read", &b), 0);
	CHECK_EQ_U64(count(b.progs[0].ptx.body, "ld.relaxed.gpu.global.u64 %xw"), 1);
	prog = (struct gpubpf_attach_prog){GRT_BPF_ATTACH_ENTRY, "k", &b.progs[0].ptx};
	{
		struct gpubpf_attach_result res;

		CHECK_EQ_U64(gpubpf_attach(modules[0], strlen(modules[0]), &o, &res), 0);
		CHECK_EQ_U64(count(res.rw.ptx, "grt_p_x"), 0);
		CHECK_EQ_U64(count(res.rw.ptx, "ld.relaxed.gpu.global.u64 %xw"), 1);
		check_ptxas(res.rw.ptx, "sm_90");
		gpubpf_attach_result_free(&res);
	}
	gpubpf_bundle_free(&b);
}

/* The counter's accesses carry both forms; each target gets only the one it takes. */
static void test_l2_forms(void)
{
	struct gpubpf_bundle b;
	char *m75, *m80, *m90;

	CHECK_EQ_U64(load("progs", "thread_adds", "l2_evict_last", &b), 0);
	CHECK(strstr(b.progs[0].ptx.body,
		     "\tred.global.add.u64 [%r6+0], 0x1;" GPUBPF_SM80_MARK
		     "red.global.add.L2::cache_hint.u64 [%r6+0], 0x1, %l2p;\n") != NULL);
	CHECK(strstr(b.progs[0].ptx.body,
		     "\tst.global.u64 [%r6+24], %r1;" GPUBPF_SM80_MARK
		     "st.global.L2::cache_hint.u64 [%r6+24], %r1, %l2p;\n") != NULL);
	m75 = gpubpf_bundle_module(&b, "sm_75", false);
	m80 = gpubpf_bundle_module(&b, "sm_80", false); /* PTX 7.0: no cache policies yet */
	m90 = gpubpf_bundle_module(&b, "sm_90", false);
	CHECK(m75 && m80 && m90);
	CHECK_EQ_U64(count(m75, "cache_hint") + count(m75, "createpolicy") + count(m75, "// sm_80"),
		     0);
	CHECK_EQ_U64(count(m80, "cache_hint") + count(m80, "createpolicy"), 0);
	CHECK(strstr(m75, "\tred.global.add.u64 [%r6+0], 0x1;\n") != NULL);
	CHECK(strstr(m90, "\tcreatepolicy.fractional.L2::evict_last.b64 %l2p, 1.0;\n") != NULL);
	CHECK(strstr(m90, "\tred.global.add.L2::cache_hint.u64 [%r6+0], 0x1, %l2p;\n") != NULL);
	CHECK(strstr(m90, "\tld.global.L2::cache_hint.u64 %r1, [%r6+24], %l2p;\n") != NULL);
	CHECK_EQ_U64(count(m90, "red.global.add.u64"), 0);
	CHECK_EQ_U64(count(m90, "// sm_80"), 0);
	free(m75);
	free(m80);
	free(m90);
	gpubpf_bundle_free(&b);
}

/* Pasted into a kernel, the module's own .target and .version choose the form. */
static void test_l2_attach(void)
{
	struct gpubpf_bundle b;
	struct gpubpf_attach_prog prog;
	struct gpubpf_attach_opts o = {.progs = &prog, .nr_progs = 1};

	CHECK_EQ_U64(load("bench", "counter", "l2_evict_last", &b), 0);
	prog = (struct gpubpf_attach_prog){GRT_BPF_ATTACH_EXIT, "k", &b.progs[0].ptx};
	for (size_t i = 0; i < N(modules); i++) {
		struct gpubpf_attach_result res;
		bool sm90 = i == 0;

		CHECK_EQ_U64(gpubpf_attach(modules[i], strlen(modules[i]), &o, &res), 0);
		CHECK_EQ_U64(res.rw.nr_instrumented, 1);
		CHECK_EQ_U64(count(res.rw.ptx, "red.global.add.L2::cache_hint.u64"), sm90 ? 1 : 0);
		CHECK_EQ_U64(count(res.rw.ptx, "createpolicy"), sm90 ? 1 : 0);
		CHECK_EQ_U64(count(res.rw.ptx, "red.global.add.u64"), sm90 ? 0 : 1);
		check_ptxas(res.rw.ptx, sm90 ? "sm_90" : "sm_75");
		gpubpf_attach_result_free(&res);
	}
	gpubpf_bundle_free(&b);
}

/* Every variant of every test and bench program: ptxas takes it for sm_75 and sm_90. */
static void test_variants_compile(void)
{
	static const struct {
		const char *dir, *name;
	} objs[] = {
	    {"bench", "ring"},
	    {"bench", "ring_const"},
	    {"bench", "counter"},
	    {"bench", "clock_only"},
	    {"progs", "ringbuf"},
	    {"progs", "thread_adds"},
	    {"progs", "stack_paths"},
	    {"progs", "bpftime_kernelretsnoop"},
	    {"progs", "bpftime_kernel_trace"},
	    {"progs", "bpftime_cuda_counter"},
	};
	static const char *const lists[] = {"ring_fast_drop",  "ring_warp_slots", "ring_early_read",
					    "ring_entry_read", "l2_evict_last",	  ALL};
	char path[512];
	const char *ptxas = ptxas_find(path, sizeof(path));

	if (!ptxas) {
		printf("  ptxas not found: variants not compiled\n");
		return;
	}
	for (size_t i = 0; i < N(objs); i++)
		for (size_t l = 0; l < N(lists); l++)
			for (int a = 0; a < 2; a++) {
				const char *arch = a ? "sm_90" : "sm_75";
				struct gpubpf_bundle b;
				struct ptxas_result res = {0};

				if (load(objs[i].dir, objs[i].name, lists[l], &b)) {
					CHECK(0);
				} else if (!gpubpf_test_module_compiles(ptxas, &b, arch, &res)) {
					printf("  %s %s for %s: %s\n", objs[i].name, lists[l], arch,
					       res.message);
					CHECK(0);
				}
				gpubpf_bundle_free(&b);
			}
}

int main(int argc, char **argv)
{
	(void)argc;
	gpubpf_test_init(argv[0]);
	unsetenv(GPUBPF_VARIANTS_ENV);
	RUN_TEST(test_variants_parse);
	RUN_TEST(test_default_unchanged);
	RUN_TEST(test_ring_forms);
	RUN_TEST(test_ring_early_read);
	RUN_TEST(test_ring_entry_read);
	RUN_TEST(test_l2_forms);
	RUN_TEST(test_l2_attach);
	RUN_TEST(test_variants_compile);
	return TEST_EXIT_STATUS();
}
