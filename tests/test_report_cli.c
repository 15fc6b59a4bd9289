/* Tests of `grtrace report`'s command line, with an extra section registered here to show sections slot in unedited. */
#include <errno.h>
#include "analysis/report_util.h"
#include "cli/commands.h"
#include "report_check.h"
#include "report_scenarios.h"

/* A section the command has never heard of: counts records, echoes its threshold. */
struct extra_state {
	uint64_t records;
	double extra_key;
	int have_key;
};

static void *extra_create(const struct report_input *in)
{
	struct extra_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->have_key = report_threshold(in->thresholds, "extra_key", &s->extra_key);
	if (s->have_key < 0 || s->extra_key == 13) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	return s;
}

static void extra_on_record(void *state, const struct grt_record *rec, const struct grt_strings *strings)
{
	((struct extra_state *)state)->records++;
}

static void extra_print_text(void *state, FILE *out)
{
	struct extra_state *s = state;

	fprintf(out, "extra saw %" PRIu64 " records, extra_key %g\n", s->records,
		s->have_key ? s->extra_key : -1.0);
}

static void extra_print_json(void *state, struct json_writer *w)
{
	jw_u64(w, ((struct extra_state *)state)->records);
}

static void extra_destroy(void *state)
{
	free(state);
}

GRT_REPORT_SECTION(extra_section) = {
	.name = "extra",
	.summary = "a section registered by the test program",
	.default_on = false,
	.order = 25,
	.create = extra_create,
	.on_record = extra_on_record,
	.print_text = extra_print_text,
	.print_json = extra_print_json,
	.destroy = extra_destroy,
};

struct cli_result {
	int rc;
	char *out;
	char *err;
};

static char *read_all(FILE *f)
{
	char *buf;
	long len;

	fflush(f);
	len = ftell(f);
	buf = calloc(1, (size_t)len + 1);
	rewind(f);
	if (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)
		buf[0] = 0;
	fclose(f);
	return buf;
}

/* Runs cmd_report with stdout and stderr captured. args is NULL-terminated after "report". */
static struct cli_result run_cli(const char *const *args)
{
	char *argv[16] = { "report" };
	int argc = 1, saved_out, saved_err;
	FILE *out = tmpfile(), *err = tmpfile();
	struct cli_result r;

	while (args[argc - 1])
		argv[argc] = (char *)args[argc - 1], argc++;
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(fileno(out), 1);
	dup2(fileno(err), 2);
	r.rc = cmd_report(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	r.out = read_all(out);
	r.err = read_all(err);
	return r;
}

static void free_result(struct cli_result *r)
{
	free(r->out);
	free(r->err);
}

static void test_help_lists_sections(void)
{
	struct cli_result r = run_cli((const char *[]){ "--help", NULL });

	CHECK_EQ_U64(r.rc, 0);
	CHECK_LINE(r.out, "    --extra        a section registered by the test program");
	CHECK_HAS(r.out, "  * --kernels      per kernel:");
	CHECK_HAS(r.out, "  * --leaks ");
	CHECK_HAS(r.out, " [--extra]");
	free_result(&r);
}

static void test_defaults(void)
{
	const char *path = report_test_path("defaults");
	struct cli_result r;
	const char *k, *a, *c, *l, *d;

	CHECK(scn_write_kernels(path) == 0);
	r = run_cli((const char *[]){ path, NULL });
	CHECK_EQ_U64(r.rc, 0);
	CHECK_STR(r.err, "");
	/* every default section, in order; the extra one is off by default */
	k = strstr(r.out, "\n== kernels ==\n");
	a = strstr(r.out, "\n== api ==\n");
	c = strstr(r.out, "\n== copies ==\n");
	l = strstr(r.out, "\n== leaks ==\n");
	d = strstr(r.out, "\n== drops ==\n");
	CHECK(k && a && c && l && d && k < a && a < c && c < l && l < d);
	CHECK(!strstr(r.out, "== extra =="));
	free_result(&r);
}

static void test_selected_sections(void)
{
	const char *path = report_test_path("selected");
	struct cli_result r;

	CHECK(scn_write_kernels(path) == 0);
	r = run_cli((const char *[]){ "--extra", path, "--kernels", "--threshold", "extra_key=5", NULL });
	CHECK_EQ_U64(r.rc, 0);
	CHECK(strstr(r.out, "== kernels ==") && strstr(r.out, "== kernels ==") < strstr(r.out, "== extra =="));
	CHECK_LINE(r.out, "extra saw 23 records, extra_key 5"); /* the checksum record too */
	CHECK(!strstr(r.out, "== api =="));
	free_result(&r);
	r = run_cli((const char *[]){ path, "--extra", "--kernels", "--format", "json", NULL });
	CHECK_EQ_U64(r.rc, 0);
	CHECK(!strncmp(r.out, "{\"trace\":{", 10));
	CHECK_HAS(r.out, "],\"extra\":23}\n");
	CHECK(strstr(r.out, "\"kernels\":[") && !strstr(r.out, "\"api\":"));
	free_result(&r);
}

static void test_usage_errors(void)
{
	const char *const *cases[] = {
		(const char *[]){ "trace.grt", "--bogus", NULL },
		(const char *[]){ "trace.grt", "--format", "xml", NULL },
		(const char *[]){ "trace.grt", "--top", "-1", NULL },
		(const char *[]){ "trace.grt", "--top", "many", NULL },
		(const char *[]){ "trace.grt", "--threshold", "no_equals", NULL },
		(const char *[]){ "trace.grt", "--threshold", "k=", NULL },
		(const char *[]){ "trace.grt", "--format", NULL },
		(const char *[]){ NULL },
		(const char *[]){ "a.grt", "b.grt", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_result r = run_cli(cases[i]);

		if (r.rc != 2 || !strstr(r.err, "grtrace: report: ") || r.out[0]) {
			printf("  case %zu: rc %d, stderr \"%s\"\n", i, r.rc, r.err);
			CHECK(!"usage error");
		}
		free_result(&r);
	}
}

static void test_threshold_refused_by_section(void)
{
	const char *path = report_test_path("refused");
	struct cli_result r;

	CHECK(scn_write_kernels(path) == 0);
	r = run_cli((const char *[]){ path, "--extra", "--threshold", "extra_key=13", NULL });
	CHECK_EQ_U64(r.rc, 2);
	CHECK_STR(r.err, "grtrace: report: bad --threshold 'extra_key=13' for the extra section: give KEY=VALUE, "
		"each number from 0 to 1e+18\n");
	CHECK_STR(r.out, "");
	free_result(&r);
}

static void test_corrupt_trace(void)
{
	const char *path = report_test_path("corrupt");
	char want[512];
	struct cli_result r;

	CHECK(scn_write_truncated(path) == 0);
	r = run_cli((const char *[]){ path, "--kernels", NULL });
	CHECK_EQ_U64(r.rc, 1);
	/* one line on stderr naming the file and the reader's error */
	snprintf(want, sizeof(want), "grtrace: %s: truncated record at offset 1190: length 16 goes "
		 "past end of file\n", path);
	CHECK_STR(r.err, want);
	CHECK_HAS(r.out, "        4      0      150.000");
	free_result(&r);
	r = run_cli((const char *[]){ path, "--format", "json", NULL });
	CHECK_EQ_U64(r.rc, 1);
	CHECK_HAS(r.out, "\"complete\":false,\"end_reason\":null,\"write_error\":false,"
			 "\"error\":\"truncated record at offset 1190: length 16 goes past end of file\","
			 "\"checksum_blocks_verified\":0,\"damage\":null}");
	CHECK_HAS(r.out, "\"launches\":4,");
	free_result(&r);
}

static void test_not_a_trace(void)
{
	struct cli_result r = run_cli((const char *[]){ "/etc/hostname", NULL });

	CHECK_EQ_U64(r.rc, 1);
	CHECK_HAS(r.err, "grtrace: /etc/hostname: ");
	CHECK_STR(r.out, "");
	free_result(&r);
}

int main(void)
{
	RUN_TEST(test_help_lists_sections);
	RUN_TEST(test_defaults);
	RUN_TEST(test_selected_sections);
	RUN_TEST(test_usage_errors);
	RUN_TEST(test_threshold_refused_by_section);
	RUN_TEST(test_corrupt_trace);
	RUN_TEST(test_not_a_trace);
	report_test_cleanup();
	return TEST_EXIT_STATUS();
}
