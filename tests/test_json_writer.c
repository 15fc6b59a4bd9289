/* The JSON writer's exact output: commas, nesting, escaping, numbers, JSON Lines. */
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

int main(void)
{
	RUN_TEST(test_commas_and_nesting);
	RUN_TEST(test_json_lines);
	RUN_TEST(test_numbers);
	RUN_TEST(test_string_escaping);
	RUN_TEST(test_deep_nesting);
	return TEST_EXIT_STATUS();
}
