/* Real GPU eBPF objects: loading, refusals, translations ptxas accepts, kernels instrumented. */
#include <dirent.h>
#include "gpubpf/bpf_attach.h"
#include "gpubpf/gpubpf_test.h"
#include "gpubpf/ptxas_run.h"
#include "test_util.h"

/* Every test program that loads, with what it must contain. */
static const struct {
	const char *name;
	size_t nr_progs;
	enum grt_bpf_attach first_attach;
	const char *first_kernel; /* NULL for memcapture */
	uint32_t first_map_type;
	bool stack_in_registers;
} accepted[] = {
    {"bpftime_kernel_trace", 1, GRT_BPF_ATTACH_ENTRY, "_Z9vectorAddPKfS0_Pfi",
     GRT_BPF_MAP_GPU_RINGBUF, true},
    {"bpftime_threadhist", 1, GRT_BPF_ATTACH_EXIT, "_Z9vectorAddPKfS0_Pf",
     GRT_BPF_MAP_PERGPUTD_ARRAY, true},
    {"bpftime_kernelretsnoop", 1, GRT_BPF_ATTACH_EXIT, "_Z9vectorAddPKfS0_Pf",
     GRT_BPF_MAP_GPU_RINGBUF, true},
    {"bpftime_mem_trace", 1, GRT_BPF_ATTACH_MEMCAPTURE, NULL, GRT_BPF_MAP_GPU_ARRAY, true},
    {"bpftime_cuda_counter", 2, GRT_BPF_ATTACH_ENTRY, "_Z9vectorAddPKfS0_Pf", BPF_MAP_TYPE_HASH,
     true},
    {"alu_cover", 1, GRT_BPF_ATTACH_ENTRY, "alu_kernel", GRT_BPF_MAP_GPU_ARRAY, true},
    {"atomics", 1, GRT_BPF_ATTACH_ENTRY, "atomic_kernel", GRT_BPF_MAP_GPU_ARRAY, true},
    {"ringbuf", 1, GRT_BPF_ATTACH_EXIT, "ring_kernel", BPF_MAP_TYPE_RINGBUF, true},
    {"hash_ops", 1, GRT_BPF_ATTACH_ENTRY, "hash_kernel", BPF_MAP_TYPE_HASH, true},
    {"percpu", 1, GRT_BPF_ATTACH_EXIT, "percpu_kernel", BPF_MAP_TYPE_PERCPU_ARRAY, true},
    {"memcap_sites", 1, GRT_BPF_ATTACH_MEMCAPTURE, NULL, BPF_MAP_TYPE_HASH, true},
    {"stack_paths", 1, GRT_BPF_ATTACH_ENTRY, "stack_kernel", GRT_BPF_MAP_GPU_RINGBUF, false},
    {"stripe", 1, GRT_BPF_ATTACH_EXIT, "stripe_kernel", GRT_BPF_MAP_GPU_ARRAY, true},
    {"thread_adds", 1, GRT_BPF_ATTACH_EXIT, "adds_kernel", GRT_BPF_MAP_PERGPUTD_ARRAY, true},
};

static const struct {
	const char *name;
	const char *error; /* after "<path>: " */
} refused[] = {
    {"refuse_loop",
     "kprobe/loop_kernel insn 17: jumps back to insn 13 (loops do not run on the GPU: unroll "
     "them with #pragma unroll)"},
    {"refuse_section",
     "section 'tracepoint/sched/sched_switch' is not a GPU program (use SEC(\"kprobe/KERNEL\"), "
     "SEC(\"kretprobe/KERNEL\") or SEC(\"kprobe/__memcapture\"))"},
    {"refuse_global",
     "kprobe/global_kernel insn 0: uses 'hits' in section .bss (writable globals do not run on "
     "the GPU: keep state in a map, or define BPF_NO_GLOBAL_DATA)"},
};

#define N(a) (sizeof(a) / sizeof(a[0]))

static int load(const char *name, struct gpubpf_bundle *b, uint32_t slots, uint16_t first_id,
		const char *prefix, char *err, size_t len)
{
	struct gpubpf_bundle_opts o = {
	    .map_slot_base = slots, .first_prog_id = first_id, .name_prefix = prefix};

	return gpubpf_bundle_load(gpubpf_test_object("progs", name), &o, b, err, len);
}

static void test_programs_load(void)
{
	for (size_t i = 0; i < N(accepted); i++) {
		struct gpubpf_bundle b;
		char err[512] = "";

		if (load(accepted[i].name, &b, 0, 0, NULL, err, sizeof(err))) {
			printf("  %s: %s\n", accepted[i].name, err);
			CHECK(0);
			gpubpf_bundle_free(&b);
			continue;
		}
		CHECK_EQ_U64(b.nr_progs, accepted[i].nr_progs);
		CHECK_EQ_U64(b.progs[0].prog->attach, accepted[i].first_attach);
		if (accepted[i].first_kernel)
			CHECK_STR(b.progs[0].prog->kernel, accepted[i].first_kernel);
		else
			CHECK(!b.progs[0].prog->kernel);
		CHECK_EQ_U64(b.obj.maps[0].type, accepted[i].first_map_type);
		CHECK_EQ_U64(b.progs[0].ptx.stack_in_registers, accepted[i].stack_in_registers);
		CHECK(b.obj.btf != NULL);
		gpubpf_bundle_free(&b);
	}
}

/* What bpftime's examples declare, read back from the objects' BTF. */
static void test_bpftime_maps(void)
{
	struct gpubpf_bundle b;
	char err[512];

	CHECK_EQ_U64(load("bpftime_kernelretsnoop", &b, 0, 0, NULL, err, sizeof(err)), 0);
	CHECK_STR(b.obj.maps[0].name, "exit_events");
	CHECK_EQ_U64(b.obj.maps[0].key_size, 4);
	CHECK_EQ_U64(b.obj.maps[0].value_size, 1024);
	CHECK_EQ_U64(b.obj.maps[0].max_entries, 16);
	CHECK(b.obj.maps[0].btf_value_type != 0);
	gpubpf_bundle_free(&b);
	CHECK_EQ_U64(load("bpftime_cuda_counter", &b, 0, 0, NULL, err, sizeof(err)), 0);
	CHECK_EQ_U64(b.obj.nr_maps, 4); /* three hashes and the printk formats' string section */
	CHECK_STR(b.obj.maps[0].name, "entered_at");
	CHECK_STR(b.obj.maps[3].name, ".rodata.str1.1");
	for (size_t i = 0; i < 3; i++) {
		CHECK_EQ_U64(b.obj.maps[i].type, BPF_MAP_TYPE_HASH);
		CHECK_EQ_U64(b.obj.maps[i].max_entries, 1024);
		CHECK(!strcmp(b.obj.maps[i].name, "entered_at") ||
		      !strcmp(b.obj.maps[i].name, "busy_ns") ||
		      !strcmp(b.obj.maps[i].name, "calls"));
	}
	CHECK_EQ_U64(b.progs[1].prog->attach, GRT_BPF_ATTACH_EXIT);
	gpubpf_bundle_free(&b);
}

/* Counters only added to are kept per SM; every map something else reaches stays one copy. */
static void test_counters_kept_per_sm(void)
{
	static const struct {
		const char *map;
		uint32_t stripe_width;
	} want[] = {
	    {"adds", 8},     {"adds32", 4}, {"read_too", 0}, {"fetched", 0}, {"out", 0},
	    {"updated", 0},  {"mixed", 0},  {"big", 0},	     {"per_sm", 0},
	};
	struct gpubpf_bundle b;
	char err[512];
	size_t found = 0;

	CHECK_EQ_U64(load("stripe", &b, 0, 0, NULL, err, sizeof(err)), 0);
	for (size_t i = 0; i < b.obj.nr_maps; i++)
		for (size_t w = 0; w < N(want); w++)
			if (!strcmp(b.obj.maps[i].name, want[w].map)) {
				if (b.obj.maps[i].stripe_width != want[w].stripe_width)
					printf("  map %s: stripe width %u\n", want[w].map,
					       b.obj.maps[i].stripe_width);
				CHECK_EQ_U64(b.obj.maps[i].stripe_width, want[w].stripe_width);
				found++;
			}
	CHECK_EQ_U64(found, N(want));
	/* the lookup of a kept-per-SM map takes the SM's copy */
	CHECK(strstr(b.progs[0].ptx.body, "%smid") != NULL);
	gpubpf_bundle_free(&b);
	/* a counter sample: mem_counts' totals are only added to */
	CHECK_EQ_U64(gpubpf_bundle_load(gpubpf_test_object("samples", "mem_counts"), NULL, &b, err,
					sizeof(err)),
		     0);
	CHECK_EQ_U64(b.obj.maps[0].stripe_width, 8);
	gpubpf_bundle_free(&b);
}

static void test_refusals(void)
{
	for (size_t i = 0; i < N(refused); i++) {
		struct gpubpf_bundle b;
		char err[512] = "", want[700];

		snprintf(want, sizeof(want), "%s: %s", gpubpf_test_object("progs", refused[i].name),
			 refused[i].error);
		CHECK_EQ_U64(load(refused[i].name, &b, 0, 0, NULL, err, sizeof(err)), -EINVAL);
		CHECK_STR(err, want);
		gpubpf_bundle_free(&b);
	}
}

static void test_bad_objects(void)
{
	static const char not_elf[] = "not an object at all";
	struct gpubpf_bundle b;
	char err[512] = "";

	CHECK_EQ_U64(
	    gpubpf_bundle_load_mem(not_elf, sizeof(not_elf), "junk.o", NULL, &b, err, sizeof(err)),
	    -ENOEXEC);
	CHECK_STR(err, "junk.o: not an ELF file");
	gpubpf_bundle_free(&b);
	CHECK_EQ_U64(gpubpf_bundle_load("/nonexistent/x.bpf.o", NULL, &b, err, sizeof(err)),
		     -ENOENT);
	CHECK_STR(err, "/nonexistent/x.bpf.o: No such file or directory");
	gpubpf_bundle_free(&b);
	/* an x86 object is ELF but no eBPF */
	CHECK_EQ_U64(load("../../obj/src/gpubpf/bpf_scalar", &b, 0, 0, NULL, err, sizeof(err)) < 0,
		     1);
	gpubpf_bundle_free(&b);
}

/* Every translation, as a module with one test kernel per program, for sm_75 and sm_90. */
/* A thread's own value added to: one red.global.add, no load, unless the sum is read again. */
static void test_thread_adds_fused(void)
{
	static const char *const fused[] = {
	    "red.global.add.u64 [%r6+0], 0x1;",
	    "red.global.add.u32 [%r6+16], 0x3;",
	    "red.global.add.u64 [%r6+8], %r2;",
	};
	struct gpubpf_bundle b;
	const char *body, *at;
	char err[512];
	size_t reds = 0;

	CHECK_EQ_U64(load("thread_adds", &b, 0, 0, NULL, err, sizeof(err)), 0);
	body = b.progs[0].ptx.body;
	for (size_t i = 0; i < N(fused); i++) {
		if (!strstr(body, fused[i]))
			printf("  missing: %s\n", fused[i]);
		CHECK(strstr(body, fused[i]) != NULL);
	}
	for (at = body; (at = strstr(at, "red.global.add")); at++)
		reds++;
	CHECK_EQ_U64(reds, N(fused));
	/* read_back's add is split by another load and its value is read again: kept as is */
	CHECK(strstr(body, "ld.global.u64 %r1, [%r6+24];") != NULL);
	CHECK(strstr(body, "st.global.u64 [%r6+24], %r1;") != NULL);
	CHECK(strstr(body, "ld.global.u64 %r1, [%r6+0];") == NULL);
	gpubpf_bundle_free(&b);
	/* bpftime's threadhist: `*n += 1` on its PERGPUTD_ARRAY value */
	CHECK_EQ_U64(load("bpftime_threadhist", &b, 0, 0, NULL, err, sizeof(err)), 0);
	CHECK(strstr(b.progs[0].ptx.body, "red.global.add.u64") != NULL);
	CHECK(strstr(b.progs[0].ptx.body, "ld.global.u64") == NULL);
	gpubpf_bundle_free(&b);
}

static void test_translations_compile(void)
{
	char path[512];
	const char *ptxas = ptxas_find(path, sizeof(path));

	if (!ptxas) {
		printf("  ptxas not found: translations not compiled\n");
		return;
	}
	for (size_t i = 0; i < N(accepted); i++)
		for (int a = 0; a < 2; a++) {
			const char *arch = a ? "sm_90" : "sm_75";
			struct gpubpf_bundle b;
			struct ptxas_result res = {0};
			char err[512];

			if (load(accepted[i].name, &b, 0, 0, NULL, err, sizeof(err))) {
				CHECK(0);
				gpubpf_bundle_free(&b);
				continue;
			}
			if (!gpubpf_test_module_compiles(ptxas, &b, arch, &res)) {
				printf("  %s for %s: %s\n", accepted[i].name, arch, res.message);
				CHECK(0);
			}
			CHECK(res.nr_entries && res.entries[0].registers > 0 &&
			      res.entries[0].instructions > 0);
			gpubpf_bundle_free(&b);
		}
}

/* --- attaching --------------------------------------------------------------------------- */

#define MAX_BUNDLES 16

struct all_programs {
	struct gpubpf_bundle b[MAX_BUNDLES];
	size_t nb;
	struct gpubpf_attach_prog progs[64];
	size_t np;
};

/* Every accepted program, each bundle with its own names and map slots, attached to every kernel.
 */
static bool load_all(struct all_programs *all)
{
	uint32_t slots = 0;
	uint16_t ids = 0;

	memset(all, 0, sizeof(*all));
	for (size_t i = 0; i < N(accepted); i++) {
		struct gpubpf_bundle *b = &all->b[all->nb];
		char err[512], prefix[32];

		snprintf(prefix, sizeof(prefix), "__grt_bpf%zu_", i);
		if (load(accepted[i].name, b, slots, ids, prefix, err, sizeof(err)))
			return false;
		all->nb++;
		slots += (uint32_t)b->obj.nr_maps;
		for (size_t p = 0; p < b->nr_progs; p++, ids++)
			all->progs[all->np++] = (struct gpubpf_attach_prog){
			    .attach = b->progs[p].prog->attach,
			    .kernel =
				b->progs[p].prog->attach == GRT_BPF_ATTACH_MEMCAPTURE ? NULL : "*",
			    .ptx = &b->progs[p].ptx};
	}
	return true;
}

static void free_all(struct all_programs *all)
{
	for (size_t i = 0; i < all->nb; i++)
		gpubpf_bundle_free(&all->b[i]);
}

/* Every corpus kernel (tests/ptx, compiled by nvcc at build time) with every program. */
static void test_attach_corpus(void)
{
	char dirname_buf[600], path[512];
	const char *ptxas = ptxas_find(path, sizeof(path));
	struct all_programs all;
	struct dirent *d;
	DIR *dir;
	unsigned modules = 0, kernels = 0;

	snprintf(dirname_buf, sizeof(dirname_buf), "%s/gpubpf/ptx", gpubpf_test_build);
	dir = opendir(dirname_buf);
	if (!dir || !ptxas) {
		printf("  no nvcc-built corpus or no ptxas: skipped\n");
		if (dir)
			closedir(dir);
		return;
	}
	CHECK(load_all(&all));
	while ((d = readdir(dir))) {
		struct gpubpf_attach_opts o = {.progs = all.progs, .nr_progs = all.np};
		struct gpubpf_attach_result res;
		struct ptxas_result pr;
		char file[1200], *ptx, *arch;
		size_t len;

		if (!strstr(d->d_name, ".ptx"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", dirname_buf, d->d_name);
		ptx = gpubpf_read_file(file, &len);
		arch = strstr(d->d_name, "sm_");
		CHECK(ptx && arch);
		if (!ptx || !arch) {
			free(ptx);
			continue;
		}
		arch[5] = 0; /* "sm_90.ptx" -> "sm_90" */
		CHECK_EQ_U64(gpubpf_attach(ptx, len, &o, &res), 0);
		for (size_t k = 0; k < res.rw.nr_kernels; k++) {
			kernels++;
			if (!res.rw.kernels[k].instrumented)
				CHECK(strstr(res.rw.kernels[k].reason,
					     "device function executes exit") ||
				      strstr(res.rw.kernels[k].reason, "without a body"));
		}
		CHECK(res.rw.nr_instrumented > 0);
		CHECK_EQ_U64(ptxas_compile(ptxas, res.rw.ptx, arch, &pr), 0);
		if (pr.exit_status)
			printf("  %s: %s\n", d->d_name, pr.message);
		CHECK_EQ_U64(pr.exit_status, 0);
		modules++;
		gpubpf_attach_result_free(&res);
		free(ptx);
	}
	closedir(dir);
	free_all(&all);
	CHECK(modules >= 22);
	CHECK(kernels >= modules);
}

static const char hand_ptx[] = ".version 7.8\n"
			       ".target sm_90\n"
			       ".address_size 64\n"
			       "\n"
			       ".visible .entry k(\n"
			       "\t.param .u64 k_p0,\n"
			       "\t.param .u32 k_p1,\n"
			       "\t.param .align 8 .b8 k_p2[16]\n"
			       ")\n"
			       "{\n"
			       "\t.reg .pred %p<3>;\n"
			       "\t.reg .b32 %r<5>;\n"
			       "\t.reg .b64 %rd<6>;\n"
			       "\tld.param.u64 %rd1, [k_p0];\n"
			       "\tld.param.u32 %r1, [k_p1];\n"
			       "\tcvta.to.global.u64 %rd2, %rd1;\n"
			       "\tsetp.eq.s32 %p1, %r1, 0;\n"
			       "\t@%p1 ret;\n"
			       "\tld.global.u32 %r2, [%rd2];\n"
			       "\t@!%p1 st.global.u32 [%rd2+8], %r2;\n"
			       "\tld.u32 %r3, [%rd1+-4];\n"
			       "\tst.global.v2.u32 [%rd2+16], {%r2, %r3};\n"
			       "\tld.shared.u32 %r4, [%rd2];\n"
			       "\tld.global.nc.u32 %r4, [%rd2+0x10];\n"
			       "\tret;\n"
			       "}\n"
			       "\n"
			       ".visible .entry untouched()\n"
			       "{\n"
			       "\tret;\n"
			       "}\n";

static void test_attach_sites(void)
{
	struct gpubpf_bundle th, mem, entry;
	struct gpubpf_attach_prog progs[3];
	struct gpubpf_attach_opts o = {.progs = progs, .nr_progs = 3, .first_kernel_id = 7};
	struct gpubpf_attach_result res;
	char err[512], path[512];
	const char *ptxas = ptxas_find(path, sizeof(path));
	const struct ptx_kernel_result *k;

	CHECK_EQ_U64(load("bpftime_threadhist", &th, 0, 0, "__grt_a", err, sizeof(err)), 0);
	CHECK_EQ_U64(load("memcap_sites", &mem, 1, 1, "__grt_b", err, sizeof(err)), 0);
	CHECK_EQ_U64(load("alu_cover", &entry, 2, 2, "__grt_c", err, sizeof(err)), 0);
	progs[0] = (struct gpubpf_attach_prog){GRT_BPF_ATTACH_EXIT, "k", &th.progs[0].ptx};
	progs[1] = (struct gpubpf_attach_prog){GRT_BPF_ATTACH_MEMCAPTURE, NULL, &mem.progs[0].ptx};
	progs[2] = (struct gpubpf_attach_prog){GRT_BPF_ATTACH_ENTRY, "[kx]", &entry.progs[0].ptx};
	CHECK_EQ_U64(gpubpf_attach(hand_ptx, strlen(hand_ptx), &o, &res), 0);
	CHECK_EQ_U64(res.rw.nr_kernels, 2);
	CHECK_EQ_U64(res.rw.nr_instrumented, 1);
	k = ptx_rewrite_find(&res.rw, "k");
	CHECK(k && k->instrumented);
	CHECK_EQ_U64(k->param_index, 3);
	CHECK_EQ_U64(k->param_offset, 32); /* after the 16-byte aggregate at 16 */
	CHECK_EQ_U64(k->param_size, 40);
	CHECK_EQ_U64(res.sites[0].entry, 1);
	CHECK_EQ_U64(res.sites[0].exit, 1);
	CHECK_EQ_U64(res.sites[0].exits, 2);
	/* ld.global, guarded st.global, generic ld, vector st.global, ld.global.nc; not ld.shared
	 */
	CHECK_EQ_U64(res.sites[0].mem, 5);
	CHECK_EQ_U64(res.sites[0].mem_skipped, 0);
	k = ptx_rewrite_find(&res.rw, "untouched");
	CHECK(k && !k->instrumented);
	CHECK_STR(k->reason, "no global memory access to probe");
	/* the guard of a probed access also guards its probe; generic accesses check the space */
	CHECK(strstr(res.rw.ptx, "@%p1 bra $grt_p_ms1;") != NULL);
	CHECK(strstr(res.rw.ptx, "isspacep.global %grt_p_g, %grt_p_m;") != NULL);
	CHECK(strstr(res.rw.ptx, "add.s64 %grt_p_m, %grt_p_m, -4;") != NULL);
	CHECK(strstr(res.rw.ptx, "add.s64 %grt_p_m, %grt_p_m, 16;") != NULL);
	CHECK(strstr(res.rw.ptx, "@%p1 bra $grt_p_bpf_exit;") != NULL);
	/* the entry program reads parameters 0..3: the aggregate one reads as 0 */
	CHECK(strstr(res.rw.ptx, "ld.param.u64 %grt_p_a0, [k_p0];") != NULL);
	CHECK(strstr(res.rw.ptx, "ld.param.u32 %grt_p_a1, [k_p1];") != NULL);
	CHECK(strstr(res.rw.ptx, "mov.b64 %grt_p_a2, 0;") != NULL);
	if (ptxas) {
		struct ptxas_result pr;

		CHECK_EQ_U64(ptxas_compile(ptxas, res.rw.ptx, "sm_90", &pr), 0);
		if (pr.exit_status)
			printf("  %s\n", pr.message);
		CHECK_EQ_U64(pr.exit_status, 0);
	}
	/* instrumenting the result again changes nothing more */
	{
		struct gpubpf_attach_result again;

		CHECK_EQ_U64(gpubpf_attach(res.rw.ptx, res.rw.ptx_len, &o, &again), 0);
		CHECK_EQ_U64(again.rw.nr_instrumented, 0);
		CHECK_STR(again.rw.kernels[0].reason,
			  "already instrumented with GPU eBPF programs");
		gpubpf_attach_result_free(&again);
	}
	gpubpf_attach_result_free(&res);
	/* over the inline limit, memory accesses call one .func */
	o.inline_limit = 10;
	CHECK_EQ_U64(gpubpf_attach(hand_ptx, strlen(hand_ptx), &o, &res), 0);
	CHECK(res.sites[0].mem_called);
	CHECK(strstr(res.rw.ptx, ".func __grt_b1(") != NULL);
	CHECK(strstr(res.rw.ptx, "call __grt_b1, (") != NULL);
	if (ptxas) {
		struct ptxas_result pr;

		CHECK_EQ_U64(ptxas_compile(ptxas, res.rw.ptx, "sm_90", &pr), 0);
		CHECK_EQ_U64(pr.exit_status, 0);
	}
	gpubpf_attach_result_free(&res);
	gpubpf_bundle_free(&th);
	gpubpf_bundle_free(&mem);
	gpubpf_bundle_free(&entry);
}

/*
 * bpftime's vectorAdd reads n from a __constant__ the host sets with
 * cudaMemcpyToSymbol; a __device__ counter is bumped in a device function.
 * Both kernels get their programs, their variables reached through slots (run by
 * test_attach_refusals, with its program).
 */
static void attach_module_variables(const struct gpubpf_attach_opts *o)
{
	static const char *const modules[] = {
	    ".version 7.8\n.target sm_90\n.address_size 64\n.const .align 4 .u32 fixed_n;\n"
	    ".visible .entry k(.param .u64 a)\n{\n\t.reg .b32 %r<2>;\n"
	    "\tld.const.u32 %r1, [fixed_n];\n\tret;\n}\n",
	    ".version 7.8\n.target sm_90\n.address_size 64\n.global .align 4 .u32 hits;\n"
	    ".func bump()\n{\n\t.reg .b32 %r<2>;\n\tatom.global.add.u32 %r1, [hits], 1;\n"
	    "\tret;\n}\n.visible .entry k()\n{\n\tcall bump;\n\tret;\n}\n",
	};
	static const char *const vars[] = {"fixed_n", "hits"};
	static const char *const uses[] = {"\tld.global.u32 %r1, [%grt_p_va0];\n",
					   "\tatom.global.add.u32 %r1, [%grt_p_va0], 1;\n"};
	char path[512];
	const char *ptxas = ptxas_find(path, sizeof(path));

	for (size_t i = 0; i < N(modules); i++) {
		struct gpubpf_attach_result res;
		struct ptxas_result pr;

		CHECK_EQ_U64(gpubpf_attach(modules[i], strlen(modules[i]), o, &res), 0);
		CHECK_EQ_U64(res.rw.nr_instrumented, 1);
		CHECK_STR(res.rw.kernels[0].reason, "");
		CHECK_EQ_U64(res.rw.nr_slots, 1);
		CHECK_EQ_U64(res.rw.kernels[0].nr_slots, 1);
		if (res.rw.nr_slots == 1)
			CHECK_STR(res.rw.slots[0].var, vars[i]);
		CHECK(strstr(res.rw.ptx, uses[i]) != NULL);
		CHECK(strstr(res.rw.ptx, "bpf_env") != NULL);
		if (ptxas) {
			CHECK_EQ_U64(ptxas_compile(ptxas, res.rw.ptx, "sm_90", &pr), 0);
			if (pr.exit_status)
				printf("  %s\n", pr.message);
			CHECK_EQ_U64(pr.exit_status, 0);
		}
		gpubpf_attach_result_free(&res);
	}
}

static void test_attach_refusals(void)
{
	static const struct {
		const char *ptx;
		const char *reason;
	} cases[] = {
	    {".version 7.8\n.target sm_90\n.address_size 32\n.visible .entry k(.param .u32 a)\n"
	     "{\n\tret;\n}\n",
	     "32-bit PTX (.address_size 32)"},
	    {".version 6.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n",
	     "PTX ISA older than 6.2 (GPU eBPF programs need activemask and shfl.sync)"},
	    {".version 7.0\n.target sm_61\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n",
	     "PTX for sm_61: GPU eBPF programs need sm_70 or newer"},
	    {".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .texref t)\n"
	     "{\n\tret;\n}\n",
	     "parameter 0 has a type that cannot be sized"},
	    {".version 7.8\n.target sm_90\n.address_size 64\n.entry k();\n",
	     "declaration without a body"},
	    /* a texture reference cannot be reached through its address */
	    {".version 7.8\n.target sm_90\n.address_size 64\n.global .texref t0;\n"
	     ".visible .entry k(.param .u64 a)\n{\n\t.reg .f32 %f<5>;\n"
	     "\ttex.1d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [t0, {%f1}];\n\tret;\n}\n",
	     "uses module variable 't0', a texture, surface or sampler reference, not shareable "
	     "by address"},
	    /* a variable holding another's address: its copy would point into the copy */
	    {".version 7.8\n.target sm_90\n.address_size 64\n.global .align 4 .u32 hits;\n"
	     ".global .align 8 .u64 hits_at = generic(hits);\n"
	     ".func bump()\n{\n\t.reg .b64 %rd<2>;\n\tld.global.u64 %rd1, [hits_at];\n"
	     "\tret;\n}\n.visible .entry k()\n{\n\tcall bump;\n\tret;\n}\n",
	     "uses module variable 'hits_at', whose initializer holds another variable's address"},
	};
	struct gpubpf_bundle th;
	struct gpubpf_attach_prog prog;
	struct gpubpf_attach_opts o = {.progs = &prog, .nr_progs = 1};
	char err[512];

	CHECK_EQ_U64(load("bpftime_threadhist", &th, 0, 0, NULL, err, sizeof(err)), 0);
	prog = (struct gpubpf_attach_prog){GRT_BPF_ATTACH_EXIT, "k", &th.progs[0].ptx};
	for (size_t i = 0; i < N(cases); i++) {
		struct gpubpf_attach_result res;

		CHECK_EQ_U64(gpubpf_attach(cases[i].ptx, strlen(cases[i].ptx), &o, &res), 0);
		CHECK_EQ_U64(res.rw.nr_instrumented, 0);
		CHECK(res.rw.nr_kernels == 1 && !strcmp(res.rw.kernels[0].reason, cases[i].reason));
		if (res.rw.nr_kernels == 1 && strcmp(res.rw.kernels[0].reason, cases[i].reason))
			printf("  got \"%s\"\n", res.rw.kernels[0].reason);
		CHECK_STR(res.rw.ptx, cases[i].ptx); /* byte for byte */
		gpubpf_attach_result_free(&res);
	}
	{
		struct gpubpf_attach_result res;

		CHECK_EQ_U64(gpubpf_attach("no ptx here", 11, &o, &res), -EINVAL);
		CHECK_STR(res.rw.error, "not PTX: no .version directive");
		gpubpf_attach_result_free(&res);
	}
	attach_module_variables(&o);
	gpubpf_bundle_free(&th);
}

int main(int argc, char **argv)
{
	(void)argc;
	gpubpf_test_init(argv[0]);
	RUN_TEST(test_programs_load);
	RUN_TEST(test_bpftime_maps);
	RUN_TEST(test_counters_kept_per_sm);
	RUN_TEST(test_refusals);
	RUN_TEST(test_bad_objects);
	RUN_TEST(test_thread_adds_fused);
	RUN_TEST(test_translations_compile);
	RUN_TEST(test_attach_corpus);
	RUN_TEST(test_attach_sites);
	RUN_TEST(test_attach_refusals);
	return TEST_EXIT_STATUS();
}
