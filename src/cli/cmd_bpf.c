/* `grtrace bpf check`: verify and translate a GPU eBPF object, without a GPU. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "common/log.h"
#include "gpubpf/bpf_attach.h"
#include "gpubpf/gpubpf.h"
#include "gpubpf/ptxas_run.h"

struct check_opts {
	const char *object;
	const char *ptx_out;
	const char *arch;
	const char *kernel_ptx;
	const char *kernel_out;
};

static void bpf_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: grtrace bpf check FILE.bpf.o [--ptx OUT.ptx] [--arch sm_NN]\n"
	    "                         [--kernel-ptx KERNELS.ptx [--kernel-out OUT.ptx]]\n"
	    "  verifies every program of a clang -target bpf object for the GPU, translates it\n"
	    "  to PTX and, when ptxas is installed, compiles the result for --arch (default "
	    "sm_90)\n"
	    "  --ptx         write the translated device functions (a compilable module)\n"
	    "  --kernel-ptx  instrument the kernels of a PTX module with the programs that match\n"
	    "  --kernel-out  where the instrumented module goes (default: stdout)\n");
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f) {
		grt_error("bpf check: cannot create %s: %s", path, strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	ok = fputs(text, f) >= 0;
	if (fclose(f) || !ok) {
		grt_error("bpf check: writing %s failed: %s", path, strerror(errno ? errno : EIO));
		return GRT_EXIT_FAILURE;
	}
	return GRT_EXIT_OK;
}

static const char *attach_name(enum grt_bpf_attach a)
{
	return a == GRT_BPF_ATTACH_ENTRY ? "entry" : a == GRT_BPF_ATTACH_EXIT ? "exit" : "memory";
}

static void print_summary(const struct gpubpf_bundle *b)
{
	printf("%s: %zu program%s, %zu map%s\n", b->obj.name, b->nr_progs,
	       b->nr_progs == 1 ? "" : "s", b->obj.nr_maps, b->obj.nr_maps == 1 ? "" : "s");
	for (size_t i = 0; i < b->obj.nr_maps; i++) {
		const struct gpubpf_map *m = &b->obj.maps[i];

		if (m->rodata)
			printf("  data %s: %u bytes, read-only\n", m->name, m->value_size);
		else
			printf("  map %s: %s, key %u, value %u, %u entries%s\n", m->name,
			       gpubpf_map_type_name(m->type), m->key_size, m->value_size,
			       m->max_entries,
			       m->stripe_width ? "; only added to: a copy per SM, summed" : "");
	}
	for (size_t i = 0; i < b->nr_progs; i++) {
		const struct gpubpf_program *p = &b->progs[i];

		printf("  %s (%s): %s probe, %zu eBPF instructions verified (%llu explored); "
		       "%s: %zu PTX instructions, stack %s\n",
		       p->prog->section, p->prog->name, attach_name(p->prog->attach),
		       p->prog->nr_insns, (unsigned long long)p->ver.explored, p->ptx.name,
		       p->ptx.ptx_insns,
		       p->ptx.stack_in_registers ? "in registers" : "in local memory");
	}
}

/* Compiles the translation with ptxas when it is installed; a rejection is a translator bug. */
static int check_with_ptxas(const struct gpubpf_bundle *b, const char *arch)
{
	char path[512];
	const char *ptxas = ptxas_find(path, sizeof(path));
	struct ptxas_result res;
	char *module;
	int rc;

	if (!ptxas) {
		grt_notice(
		    "ptxas not found (install the CUDA toolkit or set PTXAS): the PTX was not "
		    "compiled for %s",
		    arch);
		return GRT_EXIT_OK;
	}
	module = gpubpf_bundle_module(b, arch, true);
	if (!module) {
		grt_error("out of memory");
		return GRT_EXIT_FAILURE;
	}
	rc = ptxas_compile(ptxas, module, arch, &res);
	free(module);
	if (rc) {
		grt_error("bpf check: running %s failed: %s", ptxas, strerror(-rc));
		return GRT_EXIT_FAILURE;
	}
	if (res.exit_status) {
		grt_error("bpf check: %s: ptxas rejected the translation for %s (a grtrace bug: "
			  "please report it with the object): %s",
			  b->obj.name, arch, res.message);
		return GRT_EXIT_FAILURE;
	}
	for (size_t i = 0; i < b->nr_progs; i++)
		for (size_t k = 0; k < res.nr_entries; k++) {
			char want[GPUBPF_NAME_MAX + 8];

			snprintf(want, sizeof(want), "%s_check", b->progs[i].ptx.name);
			if (strcmp(res.entries[k].name, want))
				continue;
			printf("  ptxas %s: %s: %u registers, %u SASS instructions%s\n", arch,
			       b->progs[i].prog->section, res.entries[k].registers,
			       res.entries[k].instructions,
			       res.entries[k].stack_bytes ? ", uses a stack frame" : "");
		}
	return GRT_EXIT_OK;
}

static int instrument_kernels(const struct gpubpf_bundle *b, const struct check_opts *o)
{
	size_t len;
	char *ptx = gpubpf_read_file(o->kernel_ptx, &len);
	struct gpubpf_attach_result res;
	int rc;

	if (!ptx) {
		grt_error("bpf check: cannot read %s: %s", o->kernel_ptx,
			  strerror(errno ? errno : EIO));
		return GRT_EXIT_FAILURE;
	}
	rc = gpubpf_attach_bundle(ptx, len, b, &res);
	free(ptx);
	if (rc) {
		grt_error("bpf check: %s: %s", o->kernel_ptx, res.rw.error);
		gpubpf_attach_result_free(&res);
		return GRT_EXIT_FAILURE;
	}
	for (size_t i = 0; i < res.rw.nr_kernels; i++) {
		const struct ptx_kernel_result *k = &res.rw.kernels[i];
		const struct gpubpf_kernel_sites *s = &res.sites[i];

		if (!k->instrumented)
			fprintf(stderr, "  kernel %s: left unchanged: %s\n", k->name, k->reason);
		else
			fprintf(
			    stderr,
			    "  kernel %s: %u entry, %u exit program(s) (%u exits), %u memory "
			    "accesses probed%s, %u not understood; environment is parameter %d\n",
			    k->name, s->entry, s->exit, s->exits, s->mem,
			    s->mem_called ? " by calls" : "", s->mem_skipped, k->param_index);
	}
	rc = o->kernel_out ? write_file(o->kernel_out, res.rw.ptx)
			   : (fputs(res.rw.ptx, stdout) < 0 ? GRT_EXIT_FAILURE : GRT_EXIT_OK);
	gpubpf_attach_result_free(&res);
	return rc;
}

static int bpf_check(const struct check_opts *o)
{
	struct gpubpf_bundle b;
	char err[512];
	int rc;

	if (gpubpf_bundle_load(o->object, NULL, &b, err, sizeof(err))) {
		grt_error("%s", err);
		gpubpf_bundle_free(&b);
		return GRT_EXIT_FAILURE;
	}
	if (!o->kernel_ptx || o->kernel_out)
		print_summary(&b);
	rc = check_with_ptxas(&b, o->arch);
	if (!rc && o->ptx_out) {
		char *module = gpubpf_bundle_module(&b, o->arch, true);

		rc = module ? write_file(o->ptx_out, module) : GRT_EXIT_FAILURE;
		free(module);
	}
	if (!rc && o->kernel_ptx)
		rc = instrument_kernels(&b, o);
	gpubpf_bundle_free(&b);
	return rc;
}

int cmd_bpf(int argc, char **argv)
{
	static const struct option options[] = {
	    {"ptx", required_argument, NULL, 'p'},
	    {"arch", required_argument, NULL, 'a'},
	    {"kernel-ptx", required_argument, NULL, 'k'},
	    {"kernel-out", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct check_opts o = {.arch = "sm_90"};
	int opt;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		bpf_usage(stdout);
		return GRT_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "check")) {
		grt_error("bpf: %s",
			  argc < 2 ? "no subcommand given (check)" : "unknown subcommand (check)");
		bpf_usage(stderr);
		return GRT_EXIT_USAGE;
	}
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc - 1, argv + 1, ":p:a:k:o:h", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o.ptx_out = optarg;
			break;
		case 'a':
			o.arch = optarg;
			break;
		case 'k':
			o.kernel_ptx = optarg;
			break;
		case 'o':
			o.kernel_out = optarg;
			break;
		case 'h':
			bpf_usage(stdout);
			return GRT_EXIT_OK;
		case ':':
			grt_error("bpf check: option '%s' needs a value", argv[optind]);
			bpf_usage(stderr);
			return GRT_EXIT_USAGE;
		default:
			grt_error("bpf check: unknown option '%s'", argv[optind]);
			bpf_usage(stderr);
			return GRT_EXIT_USAGE;
		}
	}
	if (optind != argc - 2) {
		grt_error("bpf check: %s",
			  optind >= argc - 1 ? "no object file given" : "one object file only");
		bpf_usage(stderr);
		return GRT_EXIT_USAGE;
	}
	o.object = argv[optind + 1];
	if (!gpubpf_ptx_version_for(o.arch)) {
		grt_error("bpf check: unknown --arch '%s' (sm_75, sm_80, sm_86, sm_89, sm_90, ...)",
			  o.arch);
		return GRT_EXIT_USAGE;
	}
	if (o.kernel_out && !o.kernel_ptx) {
		grt_error("bpf check: --kernel-out needs --kernel-ptx");
		return GRT_EXIT_USAGE;
	}
	return bpf_check(&o);
}
