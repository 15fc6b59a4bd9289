/* The JSON writer's exact output: commas, nesting, escaping, numbers, JSON Lines, buffering. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "common/json_writer.h"

struct capture {
	char *text;
	size_t len;
	FILE *out;
	struct json_writer w;
};

static void capture_start(struct capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->out = open_memstream(&c->text, &c->len);
	jw_init(&c->w, c->out);
}

/* Ends the capture and checks it equals want. */
static void capture_check(struct capture *c, const char *want)
{
	fclose(c->out);
	CHECK_STR(c->text, want);
	free(c->text);
}

static void test_commas_and_nesting(void)
{
	struct capture c;

	capture_start(&c);
	jw_begin_object(&c.w);
	jw_key(&c.w, "a");
	jw_u64(&c.w, 1);
	jw_key(&c.w, "b");
	jw_begin_array(&c.w);
	jw_u64(&c.w, 1);
	jw_i64(&c.w, -2);
	jw_begin_object(&c.w);
	jw_key(&c.w, "c");
	jw_null(&c.w);
	jw_end_object(&c.w);
	jw_begin_array(&c.w);
	jw_end_array(&c.w);
	jw_bool(&c.w, true);
	jw_end_array(&c.w);
	jw_key(&c.w, "d");
	jw_begin_object(&c.w);
	jw_end_object(&c.w);
	jw_key(&c.w, "e");
	jw_bool(&c.w, false);
	jw_end_object(&c.w);
	capture_check(&c, "{\"a\":1,\"b\":[1,-2,{\"c\":null},[],true],\"d\":{},\"e\":false}");
}

/* JSON Lines: each top-level value on its own line, no comma between them. */
static void test_json_lines(void)
{
	struct capture c;

	capture_start(&c);
	for (int i = 0; i < 3; i++) {
		jw_begin_object(&c.w);
		jw_key(&c.w, "i");
		jw_u64(&c.w, (uint64_t)i);
		jw_key(&c.w, "list");
		jw_begin_array(&c.w);
		jw_u64(&c.w, 7);
		jw_end_array(&c.w);
		jw_end_object(&c.w);
		jw_newline(&c.w);
	}
	capture_check(&c,
		      "{\"i\":0,\"list\":[7]}\n{\"i\":1,\"list\":[7]}\n{\"i\":2,\"list\":[7]}\n");
}

static void test_numbers(void)
{
	struct capture c;

	capture_start(&c);
	jw_begin_array(&c.w);
	jw_u64(&c.w, UINT64_MAX);
	jw_i64(&c.w, INT64_MIN);
	jw_i64(&c.w, 0);
	jw_f64(&c.w, 1.5);
	jw_f64(&c.w, 524.288);
	jw_f64(&c.w, -0.25);
	jw_f64(&c.w, NAN);
	jw_f64(&c.w, INFINITY);
	jw_f64(&c.w, -INFINITY);
	jw_f64(&c.w, 1e300);
	jw_end_array(&c.w);
	capture_check(&c, "[18446744073709551615,-9223372036854775808,0,1.5,524.288,-0.25,null,"
			  "null,null,1e+300]");
}

static void test_string_escaping(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"", "\"\""},
	    {"plain", "\"plain\""},
	    {"q\"b\\", "\"q\\\"b\\\\\""},
	    {"\n\t\r", "\"\\n\\t\\r\""},
	    {"\x01\x1f\x7f\b\f", "\"\\u0001\\u001f\\u007f\\u0008\\u000c\""},
	    {"/ <script>", "\"/ <script>\""},
	    {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
	    {"\xef\xbf\xbf\xf4\x8f\xbf\xbf",
	     "\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\""}, /* U+FFFF, U+10FFFF */
	    /* not UTF-8: each stray byte becomes U+FFFD */
	    {"a\xff"
	     "b",
	     "\"a\\ufffdb\""},
	    {"\x80", "\"\\ufffd\""},
	    {"\xc0\x80", "\"\\ufffd\\ufffd\""},			      /* overlong NUL */
	    {"\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""},	      /* overlong '/' */
	    {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},	      /* a UTF-16 surrogate */
	    {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* above U+10FFFF */
	    {"\xe2\x82", "\"\\ufffd\\ufffd\""},			      /* cut at the end */
	    {"\xe2\x82x", "\"\\ufffd\\ufffdx\""},
	    {"\xc3", "\"\\ufffd\""},
	};
	struct capture c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		capture_start(&c);
		jw_string(&c.w, cases[i].in);
		capture_check(&c, cases[i].out);
	}
	capture_start(&c);
	jw_begin_object(&c.w);
	jw_key(&c.w, "k\"\n");
	jw_string(&c.w, NULL);
	jw_end_object(&c.w);
	capture_check(&c, "{\"k\\\"\\n\":null}");
}

/* Nesting up to the supported depth keeps every comma in its place. */
static void test_deep_nesting(void)
{
	struct capture c;
	char want[1024];
	size_t at = 0;
	const int levels = JSON_MAX_DEPTH - 1;

	capture_start(&c);
	for (int i = 0; i < levels; i++) {
		jw_begin_array(&c.w);
		jw_u64(&c.w, (uint64_t)i);
		at += (size_t)snprintf(want + at, sizeof(want) - at, "[%d,", i);
	}
	want[--at] = 0; /* the innermost array has no nested one after its number */
	for (int i = levels - 1; i >= 0; i--) {
		jw_end_array(&c.w);
		if (i)
			jw_u64(&c.w, 100 + (uint64_t)i);
		at += (size_t)snprintf(want + at, sizeof(want) - at, i ? "],%d" : "]", 100 + i);
	}
	capture_check(&c, want);
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Every digit count, each power of ten's neighbours and random values, against printf. */
static void test_integers_match_printf(void)
{
	struct capture c;
	char *want = malloc(1 << 16);
	size_t at = 0;
	uint64_t seed = 7, p = 1;

	capture_start(&c);
	jw_begin_array(&c.w);
	at += (size_t)sprintf(want + at, "[");
	for (int k = 0; k <= 20; k++) {
		uint64_t vs[3] = { p - 1, p, p + 1 };

		for (int i = 0; i < 3; i++) {
			jw_u64(&c.w, vs[i]);
			jw_i64(&c.w, (int64_t)(0 - vs[i]));
			at += (size_t)sprintf(want + at, "%" PRIu64 ",%" PRId64 ",", vs[i],
					      (int64_t)(0 - vs[i]));
		}
		p = k < 19 ? p * 10 : UINT64_MAX; /* the last round: UINT64_MAX and its wraps */
	}
	for (int i = 0; i < 500; i++) {
		uint64_t v = rng_next(&seed) >> (rng_next(&seed) % 64);

		jw_u64(&c.w, v);
		jw_i64(&c.w, (int64_t)v);
		at += (size_t)sprintf(want + at, "%" PRIu64 ",%" PRId64 ",", v, (int64_t)v);
	}
	jw_i64(&c.w, INT64_MAX);
	jw_i64(&c.w, INT64_MIN);
	at += (size_t)sprintf(want + at, "%" PRId64 ",%" PRId64 "]", INT64_MAX, INT64_MIN);
	jw_end_array(&c.w);
	capture_check(&c, want);
	free(want);
}

/* jw_fixed keeps every decimal, jw_decimal drops trailing zeros and a bare point. */
static void test_fixed_and_decimal(void)
{
	static const struct {
		uint64_t v;
		unsigned decimals;
		const char *fixed, *decimal;
	} cases[] = {
		{ 0, 3, "0.000", "0" },
		{ 5, 3, "0.005", "0.005" },
		{ 1000, 3, "1.000", "1" },
		{ 1230, 3, "1.230", "1.23" },
		{ 1200, 3, "1.200", "1.2" },
		{ 1234567, 3, "1234.567", "1234.567" },
		{ 900000, 3, "900.000", "900" },
		{ 42, 0, "42", "42" },
		{ 10, 1, "1.0", "1" },
		{ 10, 2, "0.10", "0.1" },
		{ UINT64_MAX, 3, "18446744073709551.615", "18446744073709551.615" },
		{ UINT64_MAX, 19, "1.8446744073709551615", "1.8446744073709551615" },
		{ 10000000000000000000ull, 19, "1.0000000000000000000", "1" },
	};
	struct capture c;
	char want[64];
	uint64_t seed = 3;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		capture_start(&c);
		jw_fixed(&c.w, cases[i].v, cases[i].decimals);
		capture_check(&c, cases[i].fixed);
		capture_start(&c);
		jw_decimal(&c.w, cases[i].v, cases[i].decimals);
		capture_check(&c, cases[i].decimal);
	}
	for (int i = 0; i < 300; i++) {
		uint64_t v = rng_next(&seed) >> (rng_next(&seed) % 64);
		size_t n;

		snprintf(want, sizeof(want), "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
		capture_start(&c);
		jw_fixed(&c.w, v, 3);
		capture_check(&c, want);
		for (n = strlen(want); want[n - 1] == '0'; n--)
			;
		want[want[n - 1] == '.' ? n - 1 : n] = 0;
		capture_start(&c);
		jw_decimal(&c.w, v, 3);
		capture_check(&c, want);
	}
}

/* An independent escaper: one byte at a time, code points decoded and range-checked. */
static size_t ref_utf8(const unsigned char *p)
{
	uint32_t cp;
	size_t len;

	if (p[0] >= 0xc0 && p[0] < 0xe0)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] < 0xf0)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] < 0xf8)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

static void ref_escape(const char *s, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	*out++ = '"';
	while (*p) {
		if (*p == '"' || *p == '\\') {
			*out++ = '\\';
			*out++ = (char)*p++;
		} else if (*p == '\n' || *p == '\t' || *p == '\r') {
			*out++ = '\\';
			*out++ = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			out += sprintf(out, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			*out++ = (char)*p++;
		} else if ((n = ref_utf8(p))) {
			memcpy(out, p, n);
			out += n;
			p += n;
		} else {
			out += sprintf(out, "\\ufffd");
			p++;
		}
	}
	*out++ = '"';
	*out = 0;
}

/* A random string of pieces that stress the word-at-a-time scan at every offset. */
static void random_string(uint64_t *seed, char *s, size_t max)
{
	static const char *const pieces[] = {
		"a", "kernel", "void gemm<float, 128>(float*, int)", "\"", "\\", "\n", "\t", "\r",
		"\x01", "\x1f", "\x7f", "\x80", "\xff", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\xed\xa0\x80", "\xc0\x80", "\xe2\x82", "\xf4\x90\x80\x80", " ", "/", "~",
	};
	size_t len = 0, want = rng_next(seed) % max;

	while (len < want) {
		const char *piece = rng_next(seed) % 3 ? "x" : pieces[rng_next(seed) % 23];
		size_t n = strlen(piece);

		if (len + n >= max)
			break;
		memcpy(s + len, piece, n);
		len += n;
	}
	s[len] = 0;
}

/* Writes the same strings, keys and fields through one writer; returns what came out (caller frees). */
static char *write_strings(uint64_t seed, size_t cap, int count)
{
	char *text = NULL, *buf = cap ? malloc(cap) : NULL, s[160];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct json_writer w;

	if (cap)
		jw_init_buffered(&w, out, buf, cap);
	else
		jw_init(&w, out);
	jw_begin_object(&w);
	for (int i = 0; i < count; i++) {
		random_string(&seed, s, sizeof(s));
		jw_key(&w, s);
		random_string(&seed, s, sizeof(s));
		jw_string(&w, s);
		random_string(&seed, s, sizeof(s));
		jw_field_u64(&w, s, (uint64_t)i * 1000003);
	}
	jw_end_object(&w);
	jw_flush(&w);
	fclose(out);
	free(buf);
	return text;
}

static void test_escaping_matches_reference(void)
{
	static const size_t caps[] = { 1, 2, 3, 7, 8, 9, 16, 61, 4096 };
	char s[160], want_piece[1024], *want = malloc(1 << 20), *got;
	uint64_t seed = 11;
	size_t at = 0;

	want[at++] = '{';
	for (int i = 0; i < 400; i++) {
		random_string(&seed, s, sizeof(s));
		ref_escape(s, want_piece);
		at += (size_t)sprintf(want + at, "%s%s:", i ? "," : "", want_piece);
		random_string(&seed, s, sizeof(s));
		ref_escape(s, want_piece);
		at += (size_t)sprintf(want + at, "%s", want_piece);
		random_string(&seed, s, sizeof(s));
		ref_escape(s, want_piece);
		at += (size_t)sprintf(want + at, ",%s:%d", want_piece, i * 1000003);
	}
	want[at++] = '}';
	want[at] = 0;
	got = write_strings(11, 0, 400);
	CHECK_STR(got, want);
	free(got);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		got = write_strings(11, caps[i], 400);
		CHECK_STR(got, want);
		free(got);
	}
	free(want);
}

/* The same events through a writer, with or without background writing. */
static void write_events(struct json_writer *w, int n)
{
	jw_begin_array(w);
	for (int i = 0; i < n; i++) {
		jw_begin_object(w);
		jw_key(w, "ph");
		jw_string(w, "X");
		jw_key(w, "name");
		jw_string(w, i % 7 ? "void gemm_kernel<float, 128>(float*, int)" : "caf\xc3\xa9 \"q\"");
		jw_key(w, "ts");
		jw_decimal(w, (uint64_t)i * 1234567, 3);
		jw_key(w, "n");
		jw_i64(w, -i);
		jw_end_object(w);
		jw_raw(w, "\n");
	}
	jw_end_array(w);
	jw_newline(w);
}

static char *read_all(FILE *f)
{
	long n;
	char *text;

	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	if (fread(text, 1, (size_t)n, f) != (size_t)n)
		text[0] = 0;
	return text;
}

/* Background writing gives the same bytes, after what the FILE already held, and so does its fallback. */
static void test_async_same_output(void)
{
	struct capture c;
	struct json_writer w;
	FILE *f = tmpfile();
	char *want, *got;

	capture_start(&c);
	fputs("head\n", c.out);
	write_events(&c.w, 5000);
	fputs("tail\n", c.out);
	fflush(c.out);
	want = strdup(c.text);
	capture_check(&c, want);

	fputs("head\n", f);
	jw_init(&w, f);
	CHECK_EQ_U64(jw_begin_async(&w, 100), 0);
	CHECK(jw_begin_async(&w, 100) == -EINVAL);
	write_events(&w, 5000);
	CHECK_EQ_U64(jw_end_async(&w), 0);
	fputs("tail\n", f);
	fflush(f);
	got = read_all(f);
	CHECK_STR(got, want);
	free(got);
	fclose(f);

	capture_start(&c); /* a memory stream has no descriptor: one buffer through the FILE */
	fputs("head\n", c.out);
	CHECK_EQ_U64(jw_begin_async(&c.w, 100), 0);
	write_events(&c.w, 5000);
	CHECK_EQ_U64(jw_end_async(&c.w), 0);
	fputs("tail\n", c.out);
	capture_check(&c, want);
	free(want);
}

/* A full disk is reported by jw_end_async, once everything was tried. */
static void test_async_write_error(void)
{
	FILE *f = fopen("/dev/full", "w");
	struct json_writer w;

	CHECK(f != NULL);
	if (!f)
		return;
	jw_init(&w, f);
	CHECK_EQ_U64(jw_begin_async(&w, 64), 0);
	write_events(&w, 100);
	CHECK(jw_end_async(&w) == -ENOSPC);
	fclose(f);
}

int main(void)
{
	RUN_TEST(test_commas_and_nesting);
	RUN_TEST(test_json_lines);
	RUN_TEST(test_numbers);
	RUN_TEST(test_string_escaping);
	RUN_TEST(test_deep_nesting);
	RUN_TEST(test_integers_match_printf);
	RUN_TEST(test_fixed_and_decimal);
	RUN_TEST(test_escaping_matches_reference);
	RUN_TEST(test_async_same_output);
	RUN_TEST(test_async_write_error);
	return TEST_EXIT_STATUS();
}
