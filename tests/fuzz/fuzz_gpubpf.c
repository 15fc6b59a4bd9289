/* libFuzzer target: GPU eBPF objects, instruction streams and PTX on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/bpf_attach.h"
#include "gpubpf/bpf_interp.h"
#include "gpubpf/gpubpf.h"
#include "gpubpf/gpubpf_test.h"

/*
 * The first byte picks what the rest is:
 *   0: an ELF object, loaded, verified and translated;
 *   1: instructions over fixed maps: verified, and when accepted translated
 *      and run once in the interpreter, whose host-pointer memory makes any
 *      access the verifier should have refused an ASan report;
 *   2: a PTX module, instrumented with a fixed program of every kind.
 * Nothing may crash, and an accepted program must translate.
 */

static void fuzz_object(const uint8_t *data, size_t size)
{
	struct gpubpf_bundle b;
	char err[512];

	gpubpf_bundle_load_mem(data, size, "fuzz.o", NULL, &b, err, sizeof(err));
	gpubpf_bundle_free(&b);
}

static void fuzz_insns(const uint8_t *data, size_t size, const char *section)
{
	size_t n = size / sizeof(struct bpf_insn);
	struct bpf_insn *insns;
	struct gpubpf_bundle b = {0};
	struct gpubpf_prog prog;
	struct gpubpf_program p = {0};
	struct gpubpf_translate_opts t = {.name = "__grt_fuzz"};
	struct interp_session s;
	struct grt_bpf_kernel_ctx kctx = {.param = {1, 2, 3}};
	struct grt_bpf_mem_ctx mctx = {.addr = 0x1000, .size = 4};
	char err[512];
	uint64_t ret;

	if (!n || n > 4096)
		return;
	insns = malloc(n * sizeof(*insns));
	memcpy(insns, data, n * sizeof(*insns));
	test_object(&b.obj, &prog, section, insns, n, gpubpf_test_maps, GPUBPF_TEST_NR_MAPS);
	p.prog = &prog;
	b.progs = &p;
	b.nr_progs = 1;
	if (!gpubpf_verify(&b.obj, &prog, &p.ver, err, sizeof(err))) {
		if (gpubpf_translate(&b.obj, &prog, &p.ver, &t, &p.ptx, err, sizeof(err)))
			abort(); /* an accepted program that does not translate */
		if (!interp_session_init(&s, &b, 4, 4096)) {
			interp_run_one(&s, &b, 0,
				       prog.attach == GRT_BPF_ATTACH_MEMCAPTURE ? (void *)&mctx
										: (void *)&kctx,
				       &ret, err, sizeof(err));
		}
		interp_session_free(&s);
		gpubpf_translation_free(&p.ptx);
	}
	gpubpf_verified_free(&p.ver);
	free(insns);
}

/* One program of each kind, translated once. */
static struct gpubpf_translation progs[3];

static void init_progs(void)
{
	static const struct bpf_insn entry[] = {LDX(BPF_DW, 2, 1, 8), MOV64_IMM(0, 0), EXIT()};
	static const struct bpf_insn mem[] = {LDX(BPF_DW, 2, 1, 0), LDX(BPF_W, 3, 1, 8),
					      MOV64_IMM(0, 0), EXIT()};
	static const struct bpf_insn *const code[] = {entry, entry, mem};
	static const size_t lens[] = {3, 3, 4};
	static const char *const sections[] = {"kprobe/*", "kretprobe/*", "kprobe/__memcapture"};
	static bool done;

	if (done)
		return;
	done = true;
	for (int i = 0; i < 3; i++) {
		struct gpubpf_object obj;
		struct gpubpf_prog prog;
		struct gpubpf_verified ver;
		char name[16], err[256];
		struct gpubpf_translate_opts t = {.name = name};

		snprintf(name, sizeof(name), "__grt_f%d", i);
		test_object(&obj, &prog, sections[i], code[i], lens[i], NULL, 0);
		if (gpubpf_verify(&obj, &prog, &ver, err, sizeof(err)) ||
		    gpubpf_translate(&obj, &prog, &ver, &t, &progs[i], err, sizeof(err)))
			abort();
		gpubpf_verified_free(&ver);
	}
}

static void fuzz_attach(const uint8_t *data, size_t size, size_t inline_limit)
{
	struct gpubpf_attach_prog p[3] = {{GRT_BPF_ATTACH_ENTRY, "*", &progs[0]},
					  {GRT_BPF_ATTACH_EXIT, "*", &progs[1]},
					  {GRT_BPF_ATTACH_MEMCAPTURE, NULL, &progs[2]}};
	struct gpubpf_attach_opts o = {.progs = p, .nr_progs = 3, .inline_limit = inline_limit};
	struct gpubpf_attach_result res;

	init_progs();
	if (!gpubpf_attach((const char *)data, size, &o, &res) &&
	    (!res.rw.ptx || strlen(res.rw.ptx) != res.rw.ptx_len))
		abort();
	gpubpf_attach_result_free(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sel;
	uint8_t *copy;

	if (!size)
		return 0;
	sel = data[0];
	copy = malloc(size);
	memcpy(copy, data + 1, size - 1); /* an exact-size copy: ASan sees any over-read */
	switch (sel % 4) {
	case 0:
		fuzz_object(copy, size - 1);
		break;
	case 1:
		fuzz_insns(copy, size - 1, sel & 4 ? "kprobe/__memcapture" : "kretprobe/k");
		break;
	default:
		fuzz_attach(copy, size - 1, sel & 4 ? 1 : 0);
		break;
	}
	free(copy);
	return 0;
}
