/* Tests redirecting module variables to address slots: every operand form, ptxas, refusals. */
#include <errno.h>
#include <stdlib.h>
#include "cuda_tools.h"
#include "inject/ptx_module.h"
#include "inject/ptx_module_vars.h"
#include "inject/ptx_rewrite.h"
#include "test_util.h"

/*
 * A __constant__ (fixed_n), a __device__ counter (hits) and a __device__
 * table, named in every operand form nvcc and hand-written PTX use: [X],
 * [X+8], mov X, cvta.global X, X+16 outside brackets, a .const address in a
 * register then ld.const through it, cvta.const X, a guarded atomic, and a
 * device function reading the table.
 */
static const char forms_ptx[] =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    ".const .align 4 .u32 fixed_n;\n"
    ".global .align 4 .u32 hits;\n"
    ".visible .global .align 8 .b8 table[64];\n"
    "\n"
    ".func (.param .b32 ret) lookup(.param .b32 i)\n"
    "{\n"
    "\t.reg .b32 %r<3>;\n"
    "\t.reg .b64 %rd<3>;\n"
    "\tld.param.u32 %r1, [i];\n"
    "\tmul.wide.u32 %rd1, %r1, 4;\n"
    "\tmov.u64 %rd2, table;\n"
    "\tadd.s64 %rd2, %rd2, %rd1;\n"
    "\tld.global.u32 %r2, [%rd2];\n"
    "\tst.param.b32 [ret], %r2;\n"
    "\tret;\n"
    "}\n"
    "\n"
    ".visible .entry forms(.param .u64 out)\n"
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .b32 %r<8>;\n"
    "\t.reg .b64 %rd<9>;\n"
    "\n"
    "\tld.param.u64 %rd1, [out];\n"
    "\tcvta.to.global.u64 %rd1, %rd1;\n"
    "\tld.const.u32 %r1, [fixed_n];\n"
    "\tld.global.u32 %r2, [table+8];\n"
    "\tmov.u64 %rd2, hits;\n"
    "\tcvta.global.u64 %rd3, hits;\n"
    "\tmov.u64 %rd4, table+16;\n"
    "\tmov.u64 %rd5, fixed_n;\n"
    "\tld.const.u32 %r3, [%rd5];\n"
    "\tcvta.const.u64 %rd6, fixed_n;\n"
    "\tld.u32 %r4, [%rd6];\n"
    "\tsetp.eq.u32 %p1, %r1, 0;\n"
    "\t@%p1 atom.global.add.u32 %r5, [hits], 1;\n"
    "\t{\n"
    "\t.reg .b32 %t;\n"
    "\t.param .b32 p0;\n"
    "\tst.param.b32 [p0], %r1;\n"
    "\t.param .b32 r0;\n"
    "\tcall.uni (r0), lookup, (p0);\n"
    "\tld.param.b32 %t, [r0];\n"
    "\tadd.u32 %r6, %t, %r2;\n"
    "\t}\n"
    "\tadd.u32 %r6, %r6, %r3;\n"
    "\tadd.u32 %r6, %r6, %r4;\n"
    "\tst.global.u32 [%rd1], %r6;\n"
    "\tst.global.u64 [%rd1+8], %rd2;\n"
    "\tst.global.u64 [%rd1+16], %rd3;\n"
    "\tst.global.u64 [%rd1+24], %rd4;\n"
    "\tret;\n"
    "}\n";

/* What the redirection makes of it, byte for byte. */
static const char forms_redirected[] =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    ".visible .const .align 8 .u64 grt_p_var_fixed_n;\n"
    ".visible .const .align 8 .u64 grt_p_var_hits;\n"
    ".visible .const .align 8 .u64 grt_p_var_table;\n"
    "\n"
    ".func (.param .b32 ret) lookup(.param .b32 i)\n"
    "{\n"
    "\t.reg .b64 %grt_p_va<1>;\n"
    "\t.reg .b32 %r<3>;\n"
    "\t.reg .b64 %rd<3>;\n"
    "\tld.param.u32 %r1, [i];\n"
    "\tmul.wide.u32 %rd1, %r1, 4;\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_table];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\tmov.u64 %rd2, %grt_p_va0;\n"
    "\tadd.s64 %rd2, %rd2, %rd1;\n"
    "\tld.global.u32 %r2, [%rd2];\n"
    "\tst.param.b32 [ret], %r2;\n"
    "\tret;\n"
    "}\n"
    "\n"
    ".visible .entry forms(.param .u64 out)\n"
    "{\n"
    "\t.reg .b64 %grt_p_va<1>;\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .b32 %r<8>;\n"
    "\t.reg .b64 %rd<9>;\n"
    "\n"
    "\tld.param.u64 %rd1, [out];\n"
    "\tcvta.to.global.u64 %rd1, %rd1;\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_fixed_n];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\tld.global.u32 %r1, [%grt_p_va0];\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_table];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\tld.global.u32 %r2, [%grt_p_va0+8];\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_hits];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\tmov.u64 %rd2, %grt_p_va0;\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_hits];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\tcvta.global.u64 %rd3, %grt_p_va0;\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_table];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\tadd.s64 %grt_p_va0, %grt_p_va0, 16;\n"
    "\tmov.u64 %rd4, %grt_p_va0;\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_fixed_n];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\tmov.u64 %rd5, %grt_p_va0;\n"
    "\tld.global.u32 %r3, [%rd5];\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_fixed_n];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\tcvta.global.u64 %rd6, %grt_p_va0;\n"
    "\tld.u32 %r4, [%rd6];\n"
    "\tsetp.eq.u32 %p1, %r1, 0;\n"
    "\tld.const.u64 %grt_p_va0, [grt_p_var_hits];\n"
    "\tcvta.to.global.u64 %grt_p_va0, %grt_p_va0;\n"
    "\t@%p1 atom.global.add.u32 %r5, [%grt_p_va0], 1;\n"
    "\t{\n"
    "\t.reg .b32 %t;\n"
    "\t.param .b32 p0;\n"
    "\tst.param.b32 [p0], %r1;\n"
    "\t.param .b32 r0;\n"
    "\tcall.uni (r0), lookup, (p0);\n"
    "\tld.param.b32 %t, [r0];\n"
    "\tadd.u32 %r6, %t, %r2;\n"
    "\t}\n"
    "\tadd.u32 %r6, %r6, %r3;\n"
    "\tadd.u32 %r6, %r6, %r4;\n"
    "\tst.global.u32 [%rd1], %r6;\n"
    "\tst.global.u64 [%rd1+8], %rd2;\n"
    "\tst.global.u64 [%rd1+16], %rd3;\n"
    "\tst.global.u64 [%rd1+24], %rd4;\n"
    "\tret;\n"
    "}\n";

static void check_ptxas(const char *ptx, size_t len, unsigned arch)
{
	CHECK_EQ_U64(ptxas_text(ptx, len, arch), 0);
}

static void test_every_form(void)
{
	static const struct {
		const char *var, *slot;
		uint32_t size;
	} want[] = {
	    {"fixed_n", "grt_p_var_fixed_n", 4},
	    {"hits", "grt_p_var_hits", 4},
	    {"table", "grt_p_var_table", 64},
	};
	struct ptx_module m = {0};
	struct ptx_vars_out v;

	CHECK_EQ_U64(ptx_module_scan(forms_ptx, sizeof(forms_ptx) - 1, &m), 0);
	CHECK_EQ_U64(m.nr_vars, 3);
	CHECK_EQ_U64(m.nr_funcs, 1);
	CHECK_EQ_U64(ptx_vars_redirect(&m, &v), 0);
	CHECK(v.ptx != NULL);
	if (v.ptx)
		CHECK_STR(v.ptx, forms_redirected);
	CHECK_EQ_U64(v.nr_slots, 3);
	for (size_t i = 0; i < v.nr_slots && i < 3; i++) {
		CHECK_STR(v.slots[i].var, want[i].var);
		CHECK_STR(v.slots[i].slot, want[i].slot);
		CHECK_EQ_U64(v.slots[i].size, want[i].size);
	}
	/* the kernel calls the device function: it reaches all three */
	CHECK_EQ_U64(v.nr_entries, 1);
	CHECK_EQ_U64(v.nr_reach[0], 3);
	if (v.ptx)
		check_ptxas(v.ptx, v.len, 90);
	ptx_vars_out_free(&v);
	ptx_module_free(&m);
}

/* The block probes go on the redirected module; the slots come back with the result. */
static void test_probes_on_redirected(void)
{
	struct ptx_rewrite_result res, twice;

	CHECK_EQ_U64(ptx_rewrite(forms_ptx, sizeof(forms_ptx) - 1, NULL, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 1);
	CHECK_STR(res.kernels[0].reason, "");
	CHECK_STR(res.name_prefix, "grt_p1_"); /* grt_p_ is the slots' */
	CHECK_EQ_U64(res.nr_slots, 3);
	CHECK_EQ_U64(res.kernels[0].nr_slots, 3);
	CHECK(strstr(res.ptx, "\tld.global.u32 %r2, [%grt_p_va0+8];\n") != NULL);
	CHECK(strstr(res.ptx, ".param .u64 grt_p1_buf") != NULL);
	CHECK(strstr(res.ptx, "[fixed_n]") == NULL && strstr(res.ptx, "ld.const.u32") == NULL);
	check_ptxas(res.ptx, res.ptx_len, 90);
	/* a rewrite of the rewrite: the slots are not variables of the application's */
	CHECK_EQ_U64(ptx_rewrite(res.ptx, res.ptx_len, NULL, &twice), 0);
	CHECK_EQ_U64(twice.nr_instrumented, 0);
	CHECK_EQ_U64(twice.nr_slots, 0);
	CHECK_STR(twice.kernels[0].reason, "already instrumented");
	ptx_rewrite_result_free(&twice);
	ptx_rewrite_result_free(&res);
}

/* A texture reference cannot be reached by address: the kernel stays as it is. */
static const char texref_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n\n"
    ".global .texref tex0;\n"
    ".visible .entry sample(.param .u64 out)\n{\n"
    "\t.reg .f32 %f<5>;\n\t.reg .b64 %rd<2>;\n"
    "\tld.param.u64 %rd1, [out];\n\tmov.f32 %f1, 0f00000000;\n"
    "\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex0, {%f1, %f1}];\n"
    "\tst.global.f32 [%rd1], %f1;\n\tret;\n}\n";

/*
 * ptr's initializer holds target's address: ptr stays the module's own (the
 * kernel using it is refused), target is redirected for the other kernel
 * and keeps its declaration, which the initializer names.
 */
static const char initializer_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n\n"
    ".global .align 4 .u32 target;\n"
    ".global .align 8 .u64 ptr = generic(target);\n\n"
    ".visible .entry uses_ptr(.param .u64 out)\n{\n"
    "\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [out];\n\tld.global.u64 %rd2, [ptr];\n"
    "\tst.global.u64 [%rd1], %rd2;\n\tret;\n}\n\n"
    ".visible .entry uses_target()\n{\n"
    "\t.reg .b32 %r<2>;\n\tatom.global.add.u32 %r1, [target], 1;\n\tret;\n}\n";

/* Declared in one list: the names share a declaration that cannot be split. */
static const char list_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n\n"
    ".global .u32 first, second;\n"
    ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tld.global.u32 %r1, [second];\n\tret;\n}\n";

static void test_refusals(void)
{
	struct ptx_rewrite_result res;

	CHECK_EQ_U64(ptx_rewrite(texref_ptx, sizeof(texref_ptx) - 1, NULL, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 0);
	CHECK_STR(res.kernels[0].reason, "uses module variable 'tex0', a texture, surface or "
					 "sampler reference, not shareable by address");
	CHECK_EQ_U64(res.nr_slots, 0);
	CHECK_STR(res.ptx, texref_ptx);
	ptx_rewrite_result_free(&res);

	CHECK_EQ_U64(ptx_rewrite(list_ptx, sizeof(list_ptx) - 1, NULL, &res), 0);
	CHECK_EQ_U64(res.nr_instrumented, 0);
	CHECK_STR(res.kernels[0].reason,
		  "uses module variable 'second', declared in a list with other variables");
	CHECK_STR(res.ptx, list_ptx);
	ptx_rewrite_result_free(&res);

	CHECK_EQ_U64(ptx_rewrite(initializer_ptx, sizeof(initializer_ptx) - 1, NULL, &res), 0);
	CHECK_EQ_U64(res.nr_kernels, 2);
	CHECK_EQ_U64(res.nr_instrumented, 1);
	CHECK_STR(res.kernels[0].reason,
		  "uses module variable 'ptr', whose initializer holds another variable's address");
	CHECK(res.kernels[1].instrumented);
	CHECK_EQ_U64(res.nr_slots, 1);
	CHECK_STR(res.slots[0].var, "target");
	CHECK_EQ_U64(res.kernels[0].nr_slots, 0);
	CHECK_EQ_U64(res.kernels[1].nr_slots, 1);
	CHECK(strstr(res.ptx, ".global .align 4 .u32 target;\n"
			      ".visible .const .align 8 .u64 grt_p_var_target;\n") != NULL);
	CHECK(strstr(res.ptx, "\tld.global.u64 %rd2, [ptr];\n") != NULL);
	CHECK(strstr(res.ptx, "atom.global.add.u32 %r1, [%grt_p_va0], 1;") != NULL);
	check_ptxas(res.ptx, res.ptx_len, 90);
	ptx_rewrite_result_free(&res);
}

/* nvcc's printf strings are constant data: copies are identical, nothing to redirect. */
static void test_printf_strings_stay(void)
{
	static const char ptx[] =
	    ".version 8.0\n.target sm_90\n.address_size 64\n\n"
	    ".global .align 1 .b8 $str[3] = {104, 105, 0};\n"
	    ".visible .entry k()\n{\n\t.reg .b64 %rd<2>;\n\tmov.u64 %rd1, $str;\n\tret;\n}\n";
	struct ptx_module m = {0};
	struct ptx_vars_out v;

	CHECK_EQ_U64(ptx_module_scan(ptx, sizeof(ptx) - 1, &m), 0);
	CHECK_EQ_U64(m.nr_vars, 0);
	CHECK_EQ_U64(ptx_vars_redirect(&m, &v), 0);
	CHECK(v.ptx == NULL);
	CHECK_EQ_U64(v.nr_slots, 0);
	ptx_vars_out_free(&v);
	ptx_module_free(&m);
}

int main(void)
{
	RUN_TEST(test_every_form);
	RUN_TEST(test_probes_on_redirected);
	RUN_TEST(test_refusals);
	RUN_TEST(test_printf_strings_stay);
	return TEST_EXIT_STATUS();
}
