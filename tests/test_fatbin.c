/* Tests fat binary parsing: nvcc builds (compressed or not), files, wrappers, bad input. */
#include <errno.h>
#include <stdlib.h>
#include <zstd.h>
#include "cuda_tools.h"
#include "inject/fatbin.h"
#include "inject/fatbin_decompress.h"
#include "inject/ptx_lex.h"
#include "test_util.h"

#define SAMPLE "tests/ptx/vector_add.cu"

/* Two PTX texts are the same program: same tokens (fatbinary drops comments and indentation). */
static bool same_ptx(const char *a, const char *b)
{
	struct ptx_toks ta, tb;
	bool same;

	if (ptx_lex(a, strlen(a), &ta))
		return false;
	if (ptx_lex(b, strlen(b), &tb)) {
		ptx_toks_free(&ta);
		return false;
	}
	same = ta.n == tb.n && ta.n > 0;
	for (size_t i = 0; same && i < ta.n; i++)
		same = ta.v[i].len == tb.v[i].len &&
		       !memcmp(a + ta.v[i].off, b + tb.v[i].off, ta.v[i].len);
	ptx_toks_free(&ta);
	ptx_toks_free(&tb);
	return same;
}

/* ---- fat binaries built here, from code, so these run without nvcc ---- */

struct fb_builder {
	uint8_t buf[16384];
	size_t len;
};

static void put(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void fb_begin(struct fb_builder *b)
{
	memset(b, 0, sizeof(*b));
	put(b->buf, FATBIN_MAGIC, 4);
	put(b->buf + 4, 1, 2);
	put(b->buf + 6, 16, 2);
	b->len = 16;
}

/* Appends an entry laid out as fatbinary writes it; `stored` is what lies in the file. */
static void fb_entry(struct fb_builder *b, uint16_t kind, unsigned arch, uint64_t flags,
		     const void *stored, size_t stored_len, uint64_t uncompressed)
{
	uint32_t header = kind == 1 ? 0x50 : 0x40;
	size_t padded = (stored_len + 7) & ~(size_t)7;
	uint8_t *h = b->buf + b->len;

	put(h, kind, 2);
	put(h + 2, 0x0101, 2);
	put(h + 4, header, 4);
	put(h + 8, padded, 8);
	put(h + 0x10, uncompressed ? stored_len : 0, 4);
	put(h + 0x1c, arch, 4);
	put(h + 0x28, flags, 8);
	put(h + 0x38, uncompressed, 8);
	memcpy(h + header, stored, stored_len);
	b->len += header + padded;
	put(b->buf + 8, b->len - 16, 8);
}

static const char small_ptx[] = ".version 9.0\n.target sm_90\n.address_size 64\n"
				".visible .entry k()\n{\n\tret;\n}\n";

/* An LZ4 block as fatbinary's "speed" mode stores it: literals, then copies of earlier bytes. */
static size_t lz4_encode_simple(const char *text, size_t len, uint8_t *out)
{
	/* One literal run for the first half, a match repeating it where the text repeats. */
	size_t o = 0, lit = len;

	out[o++] = (uint8_t)((lit >= 15 ? 15 : lit) << 4);
	if (lit >= 15) {
		size_t rest = lit - 15;

		while (rest >= 255) {
			out[o++] = 255;
			rest -= 255;
		}
		out[o++] = (uint8_t)rest;
	}
	memcpy(out + o, text, len);
	return o + len;
}

static void test_synthetic_entries(void)
{
	static uint8_t elf_bytes[24] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
	uint8_t zbuf[1024], lbuf[1024];
	size_t zlen = ZSTD_compress(zbuf, sizeof(zbuf), small_ptx, sizeof(small_ptx) - 1, 3);
	size_t llen = lz4_encode_simple(small_ptx, sizeof(small_ptx) - 1, lbuf);
	static const uint64_t flags[] = {0x11, 0x8011, 0x2011};
	struct fb_builder b;
	struct fatbin_iter it;
	struct fatbin_entry e;
	unsigned seen = 0;

	CHECK(!ZSTD_isError(zlen));
	fb_begin(&b);
	fb_entry(&b, 2, 90, 0x11, elf_bytes, sizeof(elf_bytes), 0);
	fb_entry(&b, 1, 80, 0x11, small_ptx, sizeof(small_ptx) - 1, 0);
	fb_entry(&b, 1, 86, 0x8011, zbuf, zlen, sizeof(small_ptx) - 1);
	fb_entry(&b, 1, 89, 0x2011, lbuf, llen, sizeof(small_ptx) - 1);
	CHECK_EQ_U64(fatbin_classify(b.buf, b.len), FATBIN_IMAGE_FATBIN);
	CHECK_EQ_U64(fatbin_iter_init(&it, b.buf, b.len), 0);
	while (fatbin_iter_next(&it, &e) == 1) {
		char *text;
		size_t len;

		if (seen == 0) {
			CHECK_EQ_U64(e.kind, FATBIN_ENTRY_ELF);
			CHECK_EQ_U64(e.arch, 90);
		} else {
			CHECK_EQ_U64(e.kind, FATBIN_ENTRY_PTX);
			CHECK_EQ_U64(e.flags, flags[seen - 1]);
			CHECK_EQ_U64(e.compressed, seen > 1);
			CHECK_EQ_U64(fatbin_entry_contents(&e, &text, &len), 0);
			/* Stored entries keep their padding; compressed ones decode exactly. */
			CHECK_EQ_U64(len, seen == 1 ? 80 : sizeof(small_ptx) - 1);
			CHECK_STR(text, small_ptx);
			free(text);
		}
		seen++;
	}
	CHECK_EQ_U64(seen, 4);
	/* The arch choice: highest <= device, highest overall for 0, none when all are newer. */
	static const struct {
		unsigned device;
		int err;
		unsigned arch;
		bool compressed;
		const char *reason;
	} picks[] = {
	    {0, 0, 89, true, ""},
	    {90, 0, 89, true, ""},
	    {87, 0, 86, true, ""},
	    {80, 0, 80, false, ""},
	    {75, -ENOEXEC, 0, false, "PTX only for sm_80 or newer, the device is sm_75"},
	};
	for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
		struct fatbin_ptx ptx;

		CHECK_EQ_U64(fatbin_find_ptx(b.buf, b.len, picks[i].device, &ptx), picks[i].err);
		CHECK_EQ_U64(ptx.arch, picks[i].arch);
		CHECK_EQ_U64(ptx.was_compressed, picks[i].compressed);
		if (!picks[i].err)
			CHECK_STR(ptx.text, small_ptx);
		else
			CHECK_STR(ptx.reason, picks[i].reason);
		fatbin_ptx_free(&ptx);
	}
}

static void test_lz4_decoder(void)
{
	static const struct {
		const uint8_t in[16];
		size_t in_len;
		size_t out_len;
		int err;
		const char *out;
	} cases[] = {
	    /* "ab", then copy 6 bytes from 2 back (overlapping), then a last literal "c" */
	    {{0x22, 'a', 'b', 2, 0, 0x10, 'c'},
	     7,
	     9,
	     0,
	     "abababab"
	     "c"},
	    {{0x10, 'x', 1, 0, 0x00}, 5, 5, 0, "xxxxx"}, /* match then empty literals */
	    {{0x10, 'x', 0, 0}, 4, 5, -EINVAL, NULL},	 /* offset 0 */
	    {{0x10, 'x', 2, 0}, 4, 5, -EINVAL, NULL},	 /* offset before the start */
	    {{0x10, 'x', 1, 0}, 4, 3, -EINVAL, NULL},	 /* match past the output */
	    {{0x30, 'x'}, 2, 3, -EINVAL, NULL},		 /* literals past the input */
	    {{0xf0, 255}, 2, 300, -EINVAL, NULL},	 /* length extension runs off */
	    {{0x20, 'a', 'b'}, 3, 5, -EINVAL, NULL},	 /* output shorter than promised */
	    {{0x1f, 'x', 1, 0}, 4, 30, -EINVAL, NULL},	 /* match length extension missing */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t out[512] = {0};

		CHECK_EQ_U64(lz4_block_decode(cases[i].in, cases[i].in_len, out, cases[i].out_len),
			     cases[i].err);
		if (cases[i].out)
			CHECK(!memcmp(out, cases[i].out, cases[i].out_len));
	}
}

/* Every truncation, and damaged headers and payloads: errors, never reads outside. */
static void test_malformed_fatbins(void)
{
	uint8_t zbuf[1024];
	size_t zlen = ZSTD_compress(zbuf, sizeof(zbuf), small_ptx, sizeof(small_ptx) - 1, 3);
	struct fb_builder b, bad;
	struct fatbin_ptx ptx;
	unsigned found = 0;

	fb_begin(&b);
	fb_entry(&b, 1, 90, 0x8011, zbuf, zlen, sizeof(small_ptx) - 1);
	for (size_t cut = 0; cut <= b.len; cut++) {
		/* A copy of exactly `cut` bytes, so the sanitizer sees any overread. */
		uint8_t *copy = malloc(cut ? cut : 1);
		int err;

		memcpy(copy, b.buf, cut);
		err = fatbin_find_ptx(copy, cut, 0, &ptx);
		CHECK(err == 0 || err == -EINVAL);
		found += err == 0;
		CHECK(err == 0 || ptx.reason[0]);
		fatbin_ptx_free(&ptx);
		free(copy);
	}
	CHECK_EQ_U64(found, 1); /* only the whole image */

	bad = b;
	bad.buf[16 + 0x50 + 5] ^= 0xff; /* inside the zstd frame */
	CHECK_EQ_U64(fatbin_find_ptx(bad.buf, bad.len, 0, &ptx), -EINVAL);
	CHECK_STR(ptx.reason, "corrupt compressed PTX entry (sm_90)");
	bad = b;
	put(bad.buf + 16 + 0x38, 1ull << 40, 8); /* absurd uncompressed size */
	CHECK_EQ_U64(fatbin_find_ptx(bad.buf, bad.len, 0, &ptx), -EINVAL);
	bad = b;
	put(bad.buf + 16 + 4, 0x20, 4); /* entry header smaller than its fields */
	CHECK_EQ_U64(fatbin_find_ptx(bad.buf, bad.len, 0, &ptx), -EINVAL);
	CHECK_STR(ptx.reason, "malformed fat binary entry at offset 16");
	bad = b;
	put(bad.buf + 16 + 8, ~0ull, 8); /* payload beyond the fat binary */
	CHECK_EQ_U64(fatbin_find_ptx(bad.buf, bad.len, 0, &ptx), -EINVAL);
	bad = b;
	put(bad.buf + 8, ~0ull, 8); /* fat binary larger than the image */
	CHECK_EQ_U64(fatbin_find_ptx(bad.buf, bad.len, 0, &ptx), -EINVAL);
	CHECK_STR(ptx.reason, "malformed fat binary header");

	fb_begin(&bad);
	CHECK_EQ_U64(fatbin_find_ptx(bad.buf, bad.len, 0, &ptx), -ENOENT);
	CHECK_STR(ptx.reason, "no PTX (empty fat binary)");
	CHECK_EQ_U64(fatbin_find_ptx("hello", 6, 0, &ptx), -EINVAL);
	CHECK_STR(ptx.reason, "not a fat binary, cubin or PTX image");
	CHECK_EQ_U64(fatbin_find_ptx("\177ELF", 4, 0, &ptx), -ENOENT);
	CHECK_STR(ptx.reason, "no PTX (machine code only: cubin)");
	CHECK_EQ_U64(fatbin_find_ptx_file("/nonexistent/x.fatbin", 0, &ptx), -ENOENT);
	CHECK_STR(ptx.reason, "cannot open /nonexistent/x.fatbin: No such file or directory");
}

/* The runtime hands the driver a wrapper whose pointer leads to the fat binary. */
static void test_wrapper(void)
{
	struct fb_builder b;
	struct fatbin_ptx ptx;
	uint8_t wrapper[24 + sizeof(b.buf)];
	const uint8_t *target;

	fb_begin(&b);
	fb_entry(&b, 1, 90, 0x11, small_ptx, sizeof(small_ptx) - 1, 0);
	put(wrapper, FATBIN_WRAPPER_MAGIC, 4);
	put(wrapper + 4, 1, 4);
	put(wrapper + 8, (uintptr_t)b.buf, 8);
	put(wrapper + 16, 0, 8);
	CHECK_EQ_U64(fatbin_classify(wrapper, 24), FATBIN_IMAGE_WRAPPER);
	CHECK_EQ_U64(fatbin_find_ptx(wrapper, FATBIN_LEN_UNKNOWN, 90, &ptx), 0);
	CHECK_STR(ptx.text, small_ptx);
	fatbin_ptx_free(&ptx);
	/* With a known length the target must lie inside it. */
	CHECK_EQ_U64(fatbin_find_ptx(wrapper, 24, 90, &ptx), -EINVAL);
	memcpy(wrapper + 24, b.buf, b.len);
	target = wrapper + 24;
	put(wrapper + 8, (uintptr_t)target, 8);
	CHECK_EQ_U64(fatbin_find_ptx(wrapper, 24 + b.len, 90, &ptx), 0);
	CHECK_STR(ptx.text, small_ptx);
	fatbin_ptx_free(&ptx);
	CHECK_EQ_U64(fatbin_find_ptx(wrapper, 24 + b.len - 1, 90, &ptx), -EINVAL);
	/* Plain PTX text, as cuModuleLoadData may get it. */
	CHECK_EQ_U64(fatbin_find_ptx(small_ptx, FATBIN_LEN_UNKNOWN, 90, &ptx), 0);
	CHECK_STR(ptx.text, small_ptx);
	CHECK_EQ_U64(ptx.arch, 90);
	fatbin_ptx_free(&ptx);
}

/* ---- fat binaries built by nvcc, the way applications ship them ---- */

static const struct nvcc_case {
	const char *name;
	const char *flags;
	unsigned entries;
	unsigned ptx_entries;
	uint64_t ptx_compression; /* flag bits of the PTX entries: 0, 0x8000 zstd, 0x2000 LZ4 */
	bool cubin_compressed;
} nvcc_cases[] = {
    {"default", "-arch=sm_90", 2, 1, 0x8000, false},
    {"compress_all", "-arch=sm_90 -Xfatbin -compress-all", 2, 1, 0x8000, true},
    {"speed", "-arch=sm_90 --compress-mode=speed", 2, 1, 0x2000, false},
    {"size", "-arch=sm_90 --compress-mode=size", 2, 1, 0x8000, true},
    {"none", "-arch=sm_90 --no-compress", 2, 1, 0, false},
    {"two_ptx",
     "-gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=compute_90", 3,
     2, 0x8000, false},
};

/* `nvcc -ptx` output for the sample at one arch, the reference the extraction must match. */
static char *reference_ptx(const char *nvcc, const char *dir, unsigned arch)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/ref_%u.ptx", dir, arch);
	if (run_cmd("%s -ptx -arch=sm_%u -o %s " SAMPLE, nvcc, arch, path))
		return NULL;
	return slurp(path, NULL);
}

static void check_entries(const struct nvcc_case *c, const uint8_t *image, size_t len)
{
	struct fatbin_iter it;
	struct fatbin_entry e;
	unsigned entries = 0, ptx = 0;

	CHECK_EQ_U64(fatbin_iter_init(&it, image, len), 0);
	while (fatbin_iter_next(&it, &e) == 1) {
		entries++;
		if (e.kind == FATBIN_ENTRY_PTX) {
			ptx++;
			CHECK_EQ_U64(e.flags & 0xa000, c->ptx_compression);
			CHECK(e.arch == 80 || e.arch == 90);
		} else {
			CHECK_EQ_U64(e.kind, FATBIN_ENTRY_ELF);
			CHECK_EQ_U64(e.compressed, c->cubin_compressed);
		}
	}
	CHECK_EQ_U64(entries, c->entries);
	CHECK_EQ_U64(ptx, c->ptx_entries);
}

static void nvcc_case(const char *nvcc, const char *dir, const struct nvcc_case *c,
		      const char *ref90, const char *ref80)
{
	char path[300];
	struct fatbin_ptx ptx;
	size_t len;
	uint8_t *image;

	snprintf(path, sizeof(path), "%s/%s.fatbin", dir, c->name);
	CHECK_EQ_U64(run_cmd("%s -fatbin %s -o %s " SAMPLE, nvcc, c->flags, path), 0);
	image = (uint8_t *)slurp(path, &len);
	CHECK(image != NULL);
	if (!image)
		return;
	check_entries(c, image, len);
	CHECK_EQ_U64(fatbin_find_ptx(image, len, 90, &ptx), 0);
	CHECK_EQ_U64(ptx.arch, 90);
	CHECK_EQ_U64(ptx.was_compressed, c->ptx_compression != 0);
	CHECK(ptx.text && same_ptx(ptx.text, ref90));
	fatbin_ptx_free(&ptx);
	/* As the driver gets it: no length, only the headers. */
	CHECK_EQ_U64(fatbin_find_ptx(image, FATBIN_LEN_UNKNOWN, 90, &ptx), 0);
	CHECK(ptx.text && same_ptx(ptx.text, ref90));
	fatbin_ptx_free(&ptx);
	CHECK_EQ_U64(fatbin_find_ptx_file(path, 86, &ptx), c->ptx_entries == 2 ? 0 : -ENOEXEC);
	if (c->ptx_entries == 2)
		CHECK(ptx.arch == 80 && ptx.text && same_ptx(ptx.text, ref80));
	else
		CHECK_STR(ptx.reason, "PTX only for sm_90 or newer, the device is sm_86");
	fatbin_ptx_free(&ptx);
	free(image);
}

static void test_nvcc_fatbins(void)
{
	const char *nvcc = cuda_tool("nvcc");
	char dir[256];
	char *ref90, *ref80;

	CHECK(scratch_make(dir, sizeof(dir)));
	ref90 = reference_ptx(nvcc, dir, 90);
	ref80 = reference_ptx(nvcc, dir, 80);
	CHECK(ref90 && ref80);
	for (size_t i = 0; ref90 && ref80 && i < sizeof(nvcc_cases) / sizeof(nvcc_cases[0]); i++)
		nvcc_case(nvcc, dir, &nvcc_cases[i], ref90, ref80);
	free(ref90);
	free(ref80);
	scratch_remove(dir);
}

/* Files as cuModuleLoad / cuLibraryLoadFromFile see them, and host binaries with .nv_fatbin. */
static void test_nvcc_files(void)
{
	static const struct {
		const char *name;
		const char *nvcc_args;
		int err;
		const char *reason;
	} files[] = {
	    {"sample.ptx", "-ptx -arch=sm_90", 0, ""},
	    {"sample.o", "-c -arch=sm_90", 0, ""},
	    {"libsample.so", "-shared -Xcompiler -fPIC -arch=sm_90", 0, ""},
	    {"libsample_all.so", "-shared -Xcompiler -fPIC -arch=sm_90 -Xfatbin -compress-all", 0,
	     ""},
	    {"sample.cubin", "-cubin -arch=sm_90", -ENOENT, "no PTX (machine code only: cubin)"},
	    {"sass_only.fatbin", "-fatbin -gencode arch=compute_90,code=sm_90", -ENOENT,
	     "no PTX (machine code only: 1 cubin(s), sm_90)"},
	};
	const char *nvcc = cuda_tool("nvcc");
	char dir[256], path[300];
	char *ref90;

	CHECK(scratch_make(dir, sizeof(dir)));
	ref90 = reference_ptx(nvcc, dir, 90);
	CHECK(ref90 != NULL);
	for (size_t i = 0; ref90 && i < sizeof(files) / sizeof(files[0]); i++) {
		struct fatbin_ptx ptx;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		CHECK_EQ_U64(run_cmd("%s %s -o %s " SAMPLE, nvcc, files[i].nvcc_args, path), 0);
		CHECK_EQ_U64(fatbin_find_ptx_file(path, 90, &ptx), files[i].err);
		CHECK_STR(ptx.reason, files[i].reason);
		if (!files[i].err)
			CHECK(ptx.text && same_ptx(ptx.text, ref90) && ptx.arch == 90);
		fatbin_ptx_free(&ptx);
	}
	free(ref90);
	scratch_remove(dir);
}

int main(void)
{
	RUN_TEST(test_synthetic_entries);
	RUN_TEST(test_lz4_decoder);
	RUN_TEST(test_malformed_fatbins);
	RUN_TEST(test_wrapper);
	if (cuda_tool("nvcc")) {
		RUN_TEST(test_nvcc_fatbins);
		RUN_TEST(test_nvcc_files);
	} else {
		printf("ok - test_nvcc_fatbins # skipped: no nvcc\n");
		printf("ok - test_nvcc_files # skipped: no nvcc\n");
	}
	return TEST_EXIT_STATUS();
}
