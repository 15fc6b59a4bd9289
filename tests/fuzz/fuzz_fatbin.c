/* libFuzzer target: fat binary parsing and PTX rewriting on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "inject/fatbin.h"
#include "inject/ptx_rewrite.h"

/* Walks every entry and decodes it, as the injection library would. */
static void fuzz_fatbin(const uint8_t *data, size_t size, unsigned arch)
{
	struct fatbin_iter it;
	struct fatbin_entry e;
	struct fatbin_ptx ptx;

	if (!fatbin_iter_init(&it, data, size)) {
		while (fatbin_iter_next(&it, &e) == 1) {
			char *text;
			size_t len;

			if (!fatbin_entry_contents(&e, &text, &len))
				free(text);
		}
	}
	if (!fatbin_find_ptx(data, size, arch, &ptx) && ptx.text && strlen(ptx.text) != ptx.len)
		abort();
	fatbin_ptx_free(&ptx);
}

static void fuzz_rewrite(const uint8_t *data, size_t size, enum grt_probe_mode mode)
{
	struct ptx_rewrite_opts opts = {.mode = mode};
	struct ptx_rewrite_result res;

	if (ptx_rewrite((const char *)data, size, &opts, &res))
		return;
	if (!res.ptx || strlen(res.ptx) != res.ptx_len)
		abort();
	for (size_t i = 0; i < res.nr_kernels; i++)
		if (res.kernels[i].instrumented != (res.kernels[i].param_index >= 0))
			abort();
	ptx_rewrite_result_free(&res);
}

/* The first byte picks the parser (and the device arch); the rest is the input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sel;
	uint8_t *copy;

	if (!size)
		return 0;
	sel = data[0];
	/* An exact-size copy, so that any read past the end is caught. */
	copy = malloc(size - 1 ? size - 1 : 1);
	memcpy(copy, data + 1, size - 1);
	if (sel & 1)
		fuzz_rewrite(copy, size - 1, sel & 2 ? GRT_PROBE_THREAD : GRT_PROBE_BLOCK);
	else
		fuzz_fatbin(copy, size - 1, sel >> 1);
	free(copy);
	return 0;
}
