/* Tests the PTX rewriter: nvcc corpus through ptxas, name hygiene, edge cases, bad input. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include "cuda_tools.h"
#include "inject/ptx_lex.h"
#include "inject/ptx_module.h"
#include "inject/ptx_module_vars.h"
#include "inject/ptx_rewrite.h"
#include "inject/ptx_summarize.h"
#include "test_util.h"

/* Every .cu file in tests/ptx must be listed: what the rewriter must make of it. */
static const struct corpus_case {
	const char *file;
	unsigned kernels;
	unsigned instrumented;
	const char *refused; /* a kernel that must stay unchanged */
	const char *refused_reason;
	unsigned min_exits; /* ret/exit instructions nvcc leaves in the first kernel */
	unsigned slots;	    /* module variables redirected to address slots */
} corpus[] = {
    {"vector_add", 1, 1},
    {"early_return", 1, 1, .min_exits = 2},
    {"barrier_shuffle", 1, 1},
    {"dynamic_shared", 1, 1},
    {"device_call", 1, 1},
    {"launch_bounds", 2, 2},
    {"long_names", 3, 3},
    /* a __device__ counter and a __constant__ the host sets: reached through address slots */
    {"multi_kernel", 3, 3, .slots = 1},
    {"constant_symbol", 2, 2, .slots = 1},
    {"module_vars", 4, 4, .slots = 3},
    {"adversarial_names", 1, 1},
    {"printf_call", 1, 1},
    {"exit_in_function", 2, 1, "calls_exit",
     "calls device functions and some device function executes exit"},
};

/* Where the launcher must put the buffer pointer, worked out by hand from the C++ types. */
static const struct {
	const char *kernel;
	unsigned index;
	uint32_t offset;
} param_slots[] = {
    {"vector_add", 4, 32}, /* 3 pointers, int, pad */
    {"no_params", 0, 0},
    {"by_value", 2, 32}, /* struct {int; double; char[3]} = 24 bytes, align 8; double * */
    {"_ZN32outer_namespace_with_a_long_name32inner_namespace_also_fairly_long38templated_"
     "kernel_with_a_very_long_nameIfLi7EdEEvNS0_6holderIT_XT0_ET1_EEPS3_",
     2, 48}, /* holder {float[7]; double} = 40 bytes; float * */
};

static void check_param_slot(const struct ptx_kernel_result *r)
{
	for (size_t i = 0; i < sizeof(param_slots) / sizeof(param_slots[0]); i++) {
		if (strcmp(r->name, param_slots[i].kernel))
			continue;
		CHECK_EQ_U64(r->param_index, param_slots[i].index);
		CHECK_EQ_U64(r->param_offset, param_slots[i].offset);
		CHECK_EQ_U64(r->param_size, param_slots[i].offset + 8);
	}
}

/* The rewriter must accept what nvcc emits for these, and ptxas what the rewriter emits. */
static const unsigned corpus_archs[] = {90, 75};

/* Special registers the probes read; the kernel may read them too. */
static bool special_register(const char *s, size_t n)
{
	static const char *const names[] = {"%tid",  "%ntid",	     "%ctaid",	    "%nctaid",
					    "%smid", "%globaltimer", "%lanemask_lt"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !memcmp(s, names[i], n))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The %registers and $labels of `ptx`, sorted; those containing `prefix` are
 * counted in *with_prefix and left out.
 */
static char **named_operands(const char *ptx, const char *prefix, size_t *n, size_t *with_prefix)
{
	struct ptx_toks t;
	char **v;

	*n = *with_prefix = 0;
	if (ptx_lex(ptx, strlen(ptx), &t))
		return NULL;
	v = calloc(t.n + 1, sizeof(*v));
	for (size_t i = 0; v && i < t.n; i++) {
		const char *s = ptx + t.v[i].off;

		if (t.v[i].kind != PTX_TOK_IDENT || (s[0] != '%' && s[0] != '$') ||
		    special_register(s, t.v[i].len))
			continue;
		if (memmem(s, t.v[i].len, prefix, strlen(prefix)))
			(*with_prefix)++;
		else
			v[(*n)++] = strndup(s, t.v[i].len);
	}
	ptx_toks_free(&t);
	if (v)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * Hygiene: the rewrite uses the kernel's registers and labels exactly as
 * often as the original did, and adds only names under its prefix, which the
 * original never used.
 */
static void check_hygiene(const char *orig, const struct ptx_rewrite_result *res)
{
	size_t n_orig, n_out, orig_prefixed, out_prefixed;
	char **a = named_operands(orig, res->name_prefix, &n_orig, &orig_prefixed);
	char **b = named_operands(res->ptx, res->name_prefix, &n_out, &out_prefixed);

	CHECK(a && b);
	CHECK(res->name_prefix[0]);
	CHECK_EQ_U64(orig_prefixed, 0);
	if (res->nr_instrumented)
		CHECK(out_prefixed > 0);
	CHECK_EQ_U64(n_out, n_orig);
	for (size_t i = 0; a && b && i < n_orig && i < n_out; i++)
		if (strcmp(a[i], b[i])) {
			CHECK_STR(b[i], a[i]);
			break;
		}
	free_names(a, n_orig);
	free_names(b, n_out);
}

/* ret/exit instructions left in the rewrite: one per instrumented kernel, plus those untouched. */
static void check_exits(const char *orig, size_t len, const struct ptx_rewrite_result *res)
{
	struct ptx_module before = {0}, after = {0};
	CHECK(!ptx_module_scan(orig, len, &before));
	CHECK(!ptx_module_scan(res->ptx, res->ptx_len, &after));
	CHECK_EQ_U64(after.nr_entries, before.nr_entries);
	for (size_t i = 0; i < before.nr_entries && i < after.nr_entries; i++) {
		size_t expect = res->kernels[i].instrumented ? 1 : before.entries[i].nr_exits;

		CHECK_EQ_U64(after.entries[i].nr_exits, expect);
		CHECK_EQ_U64(after.entries[i].nr_params,
			     before.entries[i].nr_params + res->kernels[i].instrumented);
	}
	ptx_module_free(&before);
	ptx_module_free(&after);
}

static const struct corpus_case *corpus_find(const char *file)
{
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
		if (!strcmp(corpus[i].file, file))
			return &corpus[i];
	return NULL;
}

static void check_counts(const struct corpus_case *c, const struct ptx_rewrite_result *res)
{
	CHECK_EQ_U64(res->nr_kernels, c->kernels);
	CHECK_EQ_U64(res->nr_instrumented, c->instrumented);
	for (size_t k = 0; k < res->nr_kernels; k++) {
		const struct ptx_kernel_result *r = &res->kernels[k];

		if (c->refused && !strcmp(r->name, c->refused)) {
			CHECK(!r->instrumented);
			CHECK_STR(r->reason, c->refused_reason);
			CHECK_EQ_U64((uint64_t)(int64_t)r->param_index, (uint64_t)-1);
		} else {
			check_param_slot(r);
			CHECK(r->instrumented);
			CHECK_STR(r->reason, "");
			CHECK_EQ_U64(r->param_index, r->nr_params);
		}
	}
}

/* The module with its variables redirected (what the probes are added to), or a copy. */
static char *redirected(const char *ptx, size_t len)
{
	struct ptx_module m = {0};
	struct ptx_vars_out v = {0};
	char *out = NULL;

	if (!ptx_module_scan(ptx, len, &m) && !ptx_vars_redirect(&m, &v))
		out = v.ptx ? strdup(v.ptx) : strndup(ptx, len);
	ptx_vars_out_free(&v);
	ptx_module_free(&m);
	return out;
}

/* nvcc → rewrite (both modes) → ptxas, for one corpus file and arch. */
static void corpus_one(const char *dir, const char *nvcc, const char *ptxas,
		       const struct corpus_case *c, unsigned arch)
{
	static const enum grt_probe_mode modes[] = {GRT_PROBE_BLOCK, GRT_PROBE_THREAD};
	char src[256], out[512];
	size_t len;
	char *ptx;

	snprintf(src, sizeof(src), "tests/ptx/%s.cu", c->file);
	snprintf(out, sizeof(out), "%s/%s_%u.ptx", dir, c->file, arch);
	CHECK_EQ_U64(run_cmd("%s -ptx -arch=sm_%u -o %s %s", nvcc, arch, out, src), 0);
	ptx = slurp(out, &len);
	CHECK(ptx != NULL);
	if (ptx && c->min_exits) {
		struct ptx_module m = {0};

		CHECK(!ptx_module_scan(ptx, len, &m) && m.nr_entries);
		CHECK(m.nr_entries && m.entries[0].nr_exits >= c->min_exits);
		ptx_module_free(&m);
	}
	for (size_t m = 0; ptx && m < 2; m++) {
		struct ptx_rewrite_opts opts = {.mode = modes[m]};
		struct ptx_rewrite_result res;
		char rewritten[600];

		char *before = redirected(ptx, len);

		CHECK_EQ_U64(ptx_rewrite(ptx, len, &opts, &res), 0);
		CHECK(before != NULL);
		if (!res.ptx || !before) {
			free(before);
			continue;
		}
		check_counts(c, &res);
		CHECK_EQ_U64(res.nr_slots, c->slots);
		check_hygiene(before, &res);
		free(before);
		check_exits(ptx, len, &res);
		snprintf(rewritten, sizeof(rewritten), "%s/%s_%u_%d.ptx", dir, c->file, arch,
			 modes[m]);
		CHECK(spit(rewritten, res.ptx, res.ptx_len));
		CHECK_EQ_U64(run_cmd("%s -arch=sm_%u -o /dev/null %s", ptxas, arch, rewritten), 0);
		ptx_rewrite_result_free(&res);
	}
	free(ptx);
}

static void test_corpus_nvcc_ptxas(void)
{
	const char *nvcc = cuda_tool("nvcc"), *ptxas = cuda_tool("ptxas");
	char dir[256];
	struct dirent *d;
	DIR *ptx_dir;
	unsigned files = 0;

	CHECK(scratch_make(dir, sizeof(dir)));
	ptx_dir = opendir("tests/ptx");
	CHECK(ptx_dir != NULL);
	while (ptx_dir && (d = readdir(ptx_dir))) {
		size_t n = strlen(d->d_name);
		const struct corpus_case *c;
		char base[200];

		if (n < 4 || n >= sizeof(base) || strcmp(d->d_name + n - 3, ".cu"))
			continue;
		snprintf(base, sizeof(base), "%.*s", (int)(n - 3), d->d_name);
		c = corpus_find(base);
		if (!c) {
			printf("  tests/ptx/%s has no entry in the corpus table\n", d->d_name);
			CHECK(c != NULL);
			continue;
		}
		for (size_t a = 0; a < sizeof(corpus_archs) / sizeof(corpus_archs[0]); a++)
			corpus_one(dir, nvcc, ptxas, c, corpus_archs[a]);
		files++;
	}
	if (ptx_dir)
		closedir(ptx_dir);
	CHECK_EQ_U64(files, sizeof(corpus) / sizeof(corpus[0]));
	scratch_remove(dir);
}

/* Hand-written PTX for what nvcc does not emit: guarded ret/exit, ret.uni, scopes, no parameter
 * list. */
static const char exits_ptx[] =
    ".version 8.0\n.target sm_75\n.address_size 64\n\n"
    ".visible .entry many_exits(\n\t.param .u64 out,\n\t.param .u32 n\n)\n.reqntid 64, 1, 1\n{\n"
    "\t.reg .pred %p<3>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\n"
    "\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [n];\n\tmov.u32 %r2, %tid.x;\n"
    "\tsetp.ge.u32 %p1, %r2, %r1;\n\t@%p1 ret;\n"
    "\tsetp.eq.u32 %p2, %r2, 7;\n\t@!%p2 bra L_store;\n\texit;\n"
    "L_store:\n\t{\n\t.reg .b32 %inner;\n\tmov.u32 %inner, 5;\n"
    "\tmov.b64 %rd2, {%r2, %inner};\n\t@%p2 exit;\n\t}\n"
    "\tcvta.to.global.u64 %rd3, %rd1;\n\tst.global.u64 [%rd3], %rd2;\n"
    "\tret.uni;\n}\n\n"
    ".entry no_list\n{\n\tret;\n}\n";

static void check_ptxas(const char *ptx, size_t len, unsigned arch)
{
	CHECK_EQ_U64(ptxas_text(ptx, len, arch), 0);
}

/* Occurrences of needle in text. */
static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *at = text; (at = strstr(at, needle)); at++)
		n++;
	return n;
}

static void test_guarded_exits_and_scopes(void)
{
	struct ptx_rewrite_result res;
	struct ptx_module m = {0};

	CHECK(!ptx_module_scan(exits_ptx, sizeof(exits_ptx) - 1, &m));
	CHECK_EQ_U64(m.nr_entries, 2);
	if (m.nr_entries == 2) {
		CHECK_EQ_U64(m.entries[0].nr_exits, 4);
		CHECK_EQ_U64(m.entries[1].nr_exits, 1);
		CHECK_EQ_U64(m.entries[1].nr_params, 0);
	}
	ptx_module_free(&m);
	CHECK_EQ_U64(ptx_rewrite(exits_ptx, sizeof(exits_ptx) - 1, NULL, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 2);
	CHECK(strstr(res.ptx, "\t@%p1 bra $grt_p_exit;\n") != NULL);
	CHECK(strstr(res.ptx, "\t@%p2 bra $grt_p_exit;\n") != NULL);
	CHECK(strstr(res.ptx, "ret.uni") == NULL);
	CHECK(strstr(res.ptx, ".entry no_list(\n\t.param .u64 grt_p_buf)") != NULL);
	CHECK(strstr(res.ptx, ".reqntid 64, 1, 1\n{\n\t.reg .b64 %grt_p_d<7>;") != NULL);
	/* the entry time in shared memory, for thread 0 alone: nothing waits at the entry; one
	 * barrier at the exit, after which thread 0 stores the span with one 16-byte store; no
	 * atomics (the exits used to be counted in shared memory: 17% of the vector add's loop) */
	CHECK(strstr(res.ptx, "\t.shared .align 8 .b8 grt_p_blk[8];") != NULL);
	CHECK(strstr(res.ptx, "\t@%grt_p_q0 st.shared.u64 [grt_p_blk], %grt_p_d2;\n") != NULL);
	CHECK(strstr(res.ptx, "[grt_p_blk], %grt_p_d2;\n\tbar.sync") == NULL);
	CHECK_EQ_U64(count_of(res.ptx, "bar.sync 0;") - count_of(exits_ptx, "bar.sync 0;"), 2);
	CHECK(strstr(res.ptx, "// grtrace block probe: exit\n\tbar.sync 0;\n") != NULL);
	CHECK(strstr(res.ptx, "\t@!%grt_p_q0 bra $grt_p_exit_done;\n") != NULL);
	CHECK(strstr(res.ptx, "atom.shared") == NULL);
	/* nothing in global memory but the span, one store per block, every launch: the totals
	 * are the summarizer's (no global atomics or reductions, which serialize) */
	CHECK(strstr(res.ptx, "atom.global") == NULL);
	CHECK(strstr(res.ptx, "red.global") == NULL);
	CHECK_EQ_U64(count_of(res.ptx, "st.global") - count_of(exits_ptx, "st.global"), 2);
	CHECK(strstr(res.ptx, "st.global.v2.u64 [%grt_p_d3+8512], {%grt_p_d4, %grt_p_d5};") != NULL);
	CHECK_EQ_U64(res.kernels[0].param_offset, 16);
	CHECK_EQ_U64(res.kernels[1].param_index, 0);
	check_hygiene(exits_ptx, &res);
	check_exits(exits_ptx, sizeof(exits_ptx) - 1, &res);
	check_ptxas(res.ptx, res.ptx_len, 90);
	check_ptxas(res.ptx, res.ptx_len, 75);
	ptx_rewrite_result_free(&res);
}

/*
 * Names the probe would pick are taken in every way a module can take them
 * (the variable only takes its name: a kernel using it would be refused).
 */
static const char adversarial_ptx[] =
    ".version 8.0\n.target sm_75\n.address_size 64\n\n"
    ".global .u32 grt_p1_counter;\n"
    ".visible .entry grt_p2_kernel(\n\t.param .u64 grt_p_buf_not_ours\n)\n{\n"
    "\t.reg .b32 %grt_p_<4>;\n\t.reg .b64 %grt_p3_rd;\n\t.reg .pred %p;\n"
    "\tmov.u32 %grt_p_0, %tid.x;\n\tsetp.eq.u32 %p, %grt_p_0, 0;\n"
    "\t@%p bra $grt_p4_exit;\n\tmov.u32 %grt_p_1, %grt_p_0;\n"
    "$grt_p4_exit:\n\tret;\n}\n";

static void test_prefix_avoids_taken_names(void)
{
	struct ptx_rewrite_result res;

	CHECK_EQ_U64(ptx_rewrite(adversarial_ptx, sizeof(adversarial_ptx) - 1, NULL, &res), 0);
	CHECK_STR(res.name_prefix, "grt_p5_");
	CHECK_EQ_U64(res.nr_instrumented, 1);
	CHECK(strstr(res.ptx, ".param .u64 grt_p5_buf") != NULL);
	check_hygiene(adversarial_ptx, &res);
	check_ptxas(res.ptx, res.ptx_len, 90);
	ptx_rewrite_result_free(&res);
}

/* Rewriting a rewrite changes nothing: every kernel says it is already instrumented. */
static void test_idempotent(void)
{
	struct ptx_rewrite_result once, twice;

	CHECK_EQ_U64(ptx_rewrite(exits_ptx, sizeof(exits_ptx) - 1, NULL, &once), 0);
	CHECK_EQ_U64(ptx_rewrite(once.ptx, once.ptx_len, NULL, &twice), 0);
	CHECK_EQ_U64(twice.nr_kernels, 2);
	CHECK_EQ_U64(twice.nr_instrumented, 0);
	CHECK_STR(twice.kernels[0].reason, "already instrumented");
	CHECK_STR(twice.kernels[1].reason, "already instrumented");
	CHECK_STR(twice.ptx, once.ptx);
	ptx_rewrite_result_free(&once);
	ptx_rewrite_result_free(&twice);
}

static void test_kernel_filter(void)
{
	struct ptx_rewrite_opts only = {.kernel_regex = "^no_l"}, none = {.kernel_regex = "^$"};
	struct ptx_rewrite_opts bad = {.kernel_regex = "("};
	struct ptx_rewrite_result res;

	CHECK_EQ_U64(ptx_rewrite(exits_ptx, sizeof(exits_ptx) - 1, &only, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 1);
	CHECK(!res.kernels[0].instrumented && res.kernels[1].instrumented);
	CHECK_STR(res.kernels[0].reason, "not selected by the kernel filter");
	CHECK_EQ_U64((uint64_t)(int64_t)res.kernels[0].param_index, (uint64_t)-1);
	check_ptxas(res.ptx, res.ptx_len, 90);
	ptx_rewrite_result_free(&res);

	CHECK_EQ_U64(ptx_rewrite(exits_ptx, sizeof(exits_ptx) - 1, &none, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 0);
	CHECK_STR(res.ptx, exits_ptx); /* untouched byte for byte */
	ptx_rewrite_result_free(&res);

	CHECK_EQ_U64(ptx_rewrite(exits_ptx, sizeof(exits_ptx) - 1, &bad, &res), -EINVAL);
	CHECK_STR(res.error, "bad kernel filter regular expression");
	CHECK(res.ptx == NULL);
}

/* Thread mode keeps the entry time in a register and stores one span per thread. */
static void test_thread_mode(void)
{
	struct ptx_rewrite_opts opts = {.mode = GRT_PROBE_THREAD};
	struct ptx_rewrite_result res;

	CHECK_EQ_U64(ptx_rewrite(exits_ptx, sizeof(exits_ptx) - 1, &opts, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 2);
	CHECK(strstr(res.ptx, "mov.u64 %grt_p_d4, %globaltimer;") != NULL);
	CHECK(strstr(res.ptx, "mad.lo.u64 %grt_p_d3, %grt_p_d1, 16, %grt_p_d0;") != NULL);
	CHECK(strstr(res.ptx, "st.global.v2.u64 [%grt_p_d3+64], {%grt_p_d4, %grt_p_d5};") != NULL);
	CHECK(strstr(res.ptx, "activemask") == NULL);
	/* no shared block state and no barrier: threads stay independent */
	CHECK(strstr(res.ptx, ".shared") == NULL);
	CHECK(strstr(res.ptx, "bar.sync") == NULL);
	check_ptxas(res.ptx, res.ptx_len, 90);
	ptx_rewrite_result_free(&res);
}

/* Before PTX 6.2 there is no activemask: every exiting thread counts itself. */
/* PTX before activemask (6.2) gets the same probe: it needs only bar.sync and %globaltimer. */
static void test_old_ptx_same_probe(void)
{
	static const char old_ptx[] = ".version 6.0\n.target sm_60\n.address_size 64\n"
				      ".visible .entry k()\n{\n\tret;\n}\n";
	struct ptx_rewrite_result res;

	CHECK_EQ_U64(ptx_rewrite(old_ptx, sizeof(old_ptx) - 1, NULL, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 1);
	CHECK(strstr(res.ptx, "activemask") == NULL);
	CHECK(strstr(res.ptx, "// grtrace block probe: exit\n\tbar.sync 0;\n") != NULL);
	check_ptxas(res.ptx, res.ptx_len, 75);
	ptx_rewrite_result_free(&res);
}

#define BARRIER0_REASON "uses barrier 0 with a thread count (the probe waits on barrier 0 at the exit)"

/* Barriers that leave barrier 0 to the whole block: instrumented, ptxas accepts the result. */
static void test_barriers_kept(void)
{
	static const char ptx[] =
	    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
	    "\t.reg .b32 %r<3>;\n\t.reg .pred %p<2>;\n"
	    "\tbar.sync 0;\n\tbarrier.sync.aligned 1, 64;\n\tbar.arrive 2, 64;\n"
	    "\tbar.red.popc.u32 %r1, 0, %p1;\n\tbar.sync %r2;\n\tbar.warp.sync -1;\n\tret;\n}\n";
	struct ptx_rewrite_result res;

	CHECK_EQ_U64(ptx_rewrite(ptx, sizeof(ptx) - 1, NULL, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 1);
	check_ptxas(res.ptx, res.ptx_len, 90);
	ptx_rewrite_result_free(&res);
}

/* Kernels the rewriter declines keep their text and say why. */
static void test_refusals(void)
{
	static const struct {
		const char *ptx;
		const char *reason;
	} cases[] = {
	    {".version 8.0\n.target sm_90\n.address_size 32\n.entry k(.param .u32 "
	     "a)\n{\n\tret;\n}\n",
	     "32-bit PTX (.address_size 32)"},
	    {".version 3.0\n.target sm_30\n.entry k()\n{\n\tret;\n}\n",
	     "PTX ISA older than 3.1 has no %globaltimer"},
	    {".version 8.0\n.target sm_90\n.entry k(.param .texref t)\n{\n\tret;\n}\n",
	     "parameter 0 has a type that cannot be sized"},
	    {".version 7.0\n.target sm_80\n.entry k(.param .align 8 .b8 big[4090])\n{\n\tret;\n}\n",
	     "no room for the probe parameter (4104 of 4096 bytes)"},
	    {".version 8.0\n.target sm_90\n.entry k(.param .u32 a);\n",
	     "declaration without a body"},
	    /* barrier 0 with a thread count (a register may be 0; hex too; bar.red's second
	     * operand; in a called function): the probe's exit barrier is barrier 0 for every
	     * thread, and one barrier with two counts may never complete */
	    {".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n\tbar.sync 0, 64;\n\tret;\n}\n",
	     BARRIER0_REASON},
	    {".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n\t.reg .b32 %r<3>;\n"
	     "\tbarrier.sync.aligned %r1, %r2;\n\tret;\n}\n",
	     BARRIER0_REASON},
	    {".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n\tbar.arrive 0x0, 32;\n\tret;\n}\n",
	     BARRIER0_REASON},
	    {".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n\t.reg .b32 %r<2>;\n"
	     "\t.reg .pred %p<2>;\n\tbar.red.popc.u32 %r1, 0, 64, %p1;\n\tret;\n}\n",
	     BARRIER0_REASON},
	    {".version 8.0\n.target sm_90\n.address_size 64\n.func f()\n{\n\tbar.sync 0, 32;\n\tret;\n}\n"
	     ".entry k()\n{\n\tcall f, ();\n\tret;\n}\n",
	     BARRIER0_REASON},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ptx_rewrite_result res;
		size_t len = strlen(cases[i].ptx);

		CHECK_EQ_U64(ptx_rewrite(cases[i].ptx, len, NULL, &res), 0);
		CHECK_EQ_U64(res.nr_kernels, 1);
		CHECK_EQ_U64(res.nr_instrumented, 0);
		if (res.nr_kernels)
			CHECK_STR(res.kernels[0].reason, cases[i].reason);
		CHECK_STR(res.ptx, cases[i].ptx);
		ptx_rewrite_result_free(&res);
	}
}

/* Bad input gets an error and a message, never a crash (the sanitizer build checks the "never"). */
static void test_malformed(void)
{
	static const struct {
		const char *ptx;
		int err;
		const char *error;
	} cases[] = {
	    {"", -EINVAL, "not PTX: no .version directive"},
	    {"int main() { return 0; }", -EINVAL, "not PTX: no .version directive"},
	    {".version 8.0\n.entry", -EINVAL, "malformed PTX: .entry without a name (line 2)"},
	    {".version 8.0\n.entry k(\n.param .u32 a", -EINVAL,
	     "malformed PTX: unclosed parameter list (line 2)"},
	    {".version 8.0\n.entry k()\n{\n\tret;\n", -EINVAL,
	     "malformed PTX: unclosed function body (line 3)"},
	    {".version 8.0\n}\n", -EINVAL, "malformed PTX: unbalanced '}' (line 2)"},
	    {".version 8.0\n.entry k()\n{\n\tret\n}\n", -EINVAL,
	     "malformed PTX: ret/exit without ';' (line 4)"},
	    {"/* unterminated .version 8.0", -EINVAL, "not PTX: no .version directive"},
	};
	struct ptx_rewrite_result res;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_EQ_U64(ptx_rewrite(cases[i].ptx, strlen(cases[i].ptx), NULL, &res),
			     cases[i].err);
		CHECK_STR(res.error, cases[i].error);
		CHECK(res.ptx == NULL && res.kernels == NULL);
	}
	CHECK_EQ_U64(ptx_rewrite(NULL, 10, NULL, &res), -EINVAL);
	/* A NUL ends the text: what follows it is not read. */
	CHECK_EQ_U64(ptx_rewrite(".version 8.0\n\0.entry", 21, NULL, &res), 0);
	CHECK_EQ_U64(res.nr_kernels, 0);
	ptx_rewrite_result_free(&res);
}

/* Every prefix of a valid module, unterminated, is either rewritten or refused cleanly. */
static void test_every_truncation(void)
{
	size_t len = sizeof(exits_ptx) - 1, ok = 0, bad = 0;

	for (size_t cut = 0; cut <= len; cut++) {
		struct ptx_rewrite_result res;
		/* Exactly `cut` bytes, no NUL after them: the sanitizer build sees any overread. */
		char *copy = malloc(cut ? cut : 1);
		int err;

		memcpy(copy, exits_ptx, cut);
		err = ptx_rewrite(copy, cut, NULL, &res);
		free(copy);

		if (err) {
			CHECK_EQ_U64(err, -EINVAL);
			CHECK(res.error[0] != 0);
			bad++;
			continue;
		}
		CHECK(res.ptx != NULL && strlen(res.ptx) == res.ptx_len);
		ok++;
		ptx_rewrite_result_free(&res);
	}
	CHECK(ok > 0 && bad > 0);
	CHECK_EQ_U64(ok + bad, len + 1);
}

/* The device summarizer the library loads beside the rewritten modules: ptxas takes it. */
static void test_summarizer_ptx(void)
{
	size_t len = strlen(grt_summarize_ptx);

	CHECK(strstr(grt_summarize_ptx, ".entry " GRT_SUMMARIZE_KERNEL "(") != NULL);
	/* it reads the spans where the probes store them */
	CHECK(strstr(grt_summarize_ptx, "[%rd4+8512]") != NULL);
	check_ptxas(grt_summarize_ptx, len, 90);
	check_ptxas(grt_summarize_ptx, len, 75);
}

int main(void)
{
	if (cuda_tool("nvcc") && cuda_tool("ptxas"))
		RUN_TEST(test_corpus_nvcc_ptxas);
	else
		printf("ok - test_corpus_nvcc_ptxas # skipped: no nvcc\n");
	RUN_TEST(test_guarded_exits_and_scopes);
	RUN_TEST(test_prefix_avoids_taken_names);
	RUN_TEST(test_idempotent);
	RUN_TEST(test_kernel_filter);
	RUN_TEST(test_thread_mode);
	RUN_TEST(test_old_ptx_same_probe);
	RUN_TEST(test_barriers_kept);
	RUN_TEST(test_refusals);
	RUN_TEST(test_malformed);
	RUN_TEST(test_every_truncation);
	RUN_TEST(test_summarizer_ptx);
	return TEST_EXIT_STATUS();
}
