/* Tests of the leaks report section and of symbolizing recorded stacks through a real ELF file. */
#include "analysis/elf_symbols.h"
#include "report_check.h"
#include "report_scenarios.h"

/* The fixture's layout, read once in main by running it. */
static struct scn_fixture_layout fixture;
static char escapes_fixture_path[4096 + 16];

static void check_frame(const char *text, unsigned index, const char *func, unsigned offset)
{
	char line[4400];

	snprintf(line, sizeof(line), "        #%-2u %s+0x%x (%s)", index, func, offset, fixture.path);
	CHECK_LINE(text, line);
}

static void test_leaks_by_stack(void)
{
	const char *path = report_test_path("leaks");
	const char *big, *small;
	int rc;
	char *text;

	CHECK(scn_write_leaks(path, &fixture) == 0);
	text = report_capture(path, "leaks", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "pid 300 (leaky), exited with status 3, left allocated:");
	CHECK_LINE(text, "  device: 2621440 bytes (2.50 MiB), allocations 3");
	big = strstr(text, "    2097152 bytes in 2 allocations from:");
	small = strstr(text, "    524288 bytes in 1 allocation from:");
	CHECK(big && small && big < small);	/* most bytes first */
	check_frame(text, 0, "grt_fixture_inner", 4);
	check_frame(text, 1, "grt_fixture_outer", 8);
	CHECK_LINE(text, "        #1  0x1234");
	CHECK_LINE(text, "        #2  /nonexistent/libfoo.so+0x2345");
	/* managed and pinned host memory are listed apart from device memory */
	CHECK_LINE(text, "  managed: 8192 bytes (8.00 KiB), allocations 1");
	CHECK_LINE(text, "    8192 bytes in 1 allocation from:");
	CHECK_LINE(text, "  host: 16384 bytes (16.00 KiB), allocations 1");
	CHECK_LINE(text, "  allocations 6, frees 3, frees of unknown addresses 2, failed allocations 1");
	CHECK_LINE(text, "pid 301 (leaky), still running at the end of the trace, outstanding:");
	CHECK_LINE(text, "  device: 300 bytes (300 B), allocations 2");
	CHECK_LINE(text, "        (stack 9 not in the trace)");
	CHECK_LINE(text, "        (no stack recorded)");
	free(text);
}

/* A function name from the program's ELF reaches the terminal escaped, as its other texts do. */
static void test_leaks_frame_names_escaped(void)
{
	const char *path = report_test_path("leaks_escapes");
	struct scn_fixture_layout evil;
	char line[4400];
	int rc;
	char *text;

	if (scn_read_fixture(escapes_fixture_path, &evil)) {
		CHECK(!"the escapes fixture runs");
		return;
	}
	CHECK(scn_write_leaks(path, &evil) == 0);
	text = report_capture(path, "leaks", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	snprintf(line, sizeof(line), "        #0  grt_fixture_\\x1b[2Jinner+0x4 (%s)", evil.path);
	CHECK_LINE(text, line);
	CHECK(!strchr(text, 0x1b));
	free(text);
}

static void test_leaks_threshold(void)
{
	const char *path = report_test_path("leaks_threshold");
	int rc;
	char *text;

	CHECK(scn_write_leaks(path, &fixture) == 0);
	text = report_capture(path, "leaks", 0, "leak_min_bytes=1000000", false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "    2097152 bytes in 2 allocations from:");
	CHECK(!strstr(text, "    524288 bytes in 1 allocation from:"));
	CHECK_LINE(text, "    ... 1 more stacks with 524288 bytes (--top, leak_min_bytes)");
	free(text);
	text = report_capture(path, "leaks", 1, NULL, false, &rc);
	CHECK_LINE(text, "    ... 1 more stacks with 524288 bytes (--top, leak_min_bytes)");
	free(text);
	/* a malformed value is a usage error, before anything is printed */
	text = report_capture(path, "leaks", 0, "leak_min_bytes=lots", false, &rc);
	CHECK_EQ_U64(rc, 2);
	CHECK_STR(text, "");
	free(text);
}

static void test_leaks_json(void)
{
	const char *path = report_test_path("leaks_json");
	char want[16384];
	int rc;
	char *text;

	CHECK(scn_write_leaks(path, &fixture) == 0);
	text = report_capture(path, "leaks", 0, NULL, true, &rc);
	snprintf(want, sizeof(want),
		 "\"leaks\":[{\"pid\":300,\"comm\":\"leaky\",\"exited\":true,\"exit_code\":3,\"signal\":null,\"core_dumped\":false,"
		 "\"bytes\":2621440,\"allocations\":3,\"stacks\":[{\"bytes\":2097152,\"allocations\":2,"
		 "\"stack_id\":1,\"frames\":[\"grt_fixture_inner+0x4 (%s)\",\"grt_fixture_outer+0x8 (%s)\"]},"
		 "{\"bytes\":524288,\"allocations\":1,\"stack_id\":2,\"frames\":[\"grt_fixture_outer+0x8 (%s)\","
		 "\"0x1234\",\"/nonexistent/libfoo.so+0x2345\"]}],\"managed\":{\"bytes\":8192,",
		 fixture.path, fixture.path, fixture.path);
	CHECK_HAS(text, want);
	CHECK_HAS(text, "\"unknown_frees\":2,\"failed_allocs\":1,\"lost_frees\":0}");
	CHECK_HAS(text, "{\"pid\":301,\"comm\":\"leaky\",\"exited\":false,\"exit_code\":null,\"signal\":null,\"core_dumped\":false,"
			"\"bytes\":300,\"allocations\":2,");
	free(text);
}

static void test_no_leaks(void)
{
	const char *path = report_test_path("no_leaks");
	int rc;
	char *text;

	/* pid 200 there frees what it allocates */
	CHECK(scn_write_kernels(path) == 0);
	text = report_capture(path, "leaks", 0, NULL, false, &rc);
	CHECK_LINE(text, "no leaks: nothing left allocated (allocations 1, frees 1)");
	free(text);
}

/*
 * The cuda source drains on its own tick: a program that exits right after
 * its last free may have that free written after its exit record. The free
 * happened before the exit, so it belongs to the exited process.
 */
static void test_calls_written_after_the_exit_record(void)
{
	const char *path = report_test_path("late_free");
	struct grt_writer *w = scn_open(path, "./short");
	uint64_t t = SCN_START_NS + SCN_MS;
	int rc;
	char *text;

	CHECK(w != NULL);
	if (!w)
		return;
	scn_process(w, 400, SCN_START_NS, GRT_PROC_START, "short", 0);
	scn_alloc(w, 400, t, 0x7000000, 4096, GRT_ALLOC_DEVICE, -1, 0);
	scn_alloc(w, 400, t + SCN_US * 100, 0x7100000, 8192, GRT_ALLOC_DEVICE, -1, 0);
	scn_process(w, 400, t + SCN_US * 300, GRT_PROC_EXIT, "short", 0);
	scn_free(w, 400, t + SCN_US * 200, 0x7100000); /* before the exit, written after it */
	/* the pid again, later: a new process, starting afresh */
	scn_process(w, 400, t + SCN_MS, GRT_PROC_START, "short", 0);
	scn_free(w, 400, t + SCN_MS + SCN_US, 0x7000000);
	CHECK(scn_close(w, t + 2 * SCN_MS) == 0);
	text = report_capture(path, "leaks", 0, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "pid 400 (short), exited with status 0, left allocated:");
	CHECK_LINE(text, "  device: 4096 bytes (4.00 KiB), allocations 1");
	CHECK_LINE(text, "  allocations 2, frees 1, frees of unknown addresses 0");
	/* the later process's free is its own (of an address it never allocated) */
	CHECK_LINE(text, "pid 400 (short), still running at the end of the trace, outstanding:");
	CHECK_LINE(text, "  allocations 0, frees 1, frees of unknown addresses 1");
	free(text);
}

static void test_elf_symbols(void)
{
	struct elf_symbols *c = elf_symbols_new(2);
	uint64_t inner = fixture.map_offset + (fixture.inner - fixture.map_start);
	uint64_t off = 99;

	CHECK_STR(elf_symbols_lookup(c, fixture.path, inner, &off), "grt_fixture_inner");
	CHECK_EQ_U64(off, 0);
	CHECK_STR(elf_symbols_lookup(c, fixture.path, inner + 3, &off), "grt_fixture_inner");
	CHECK_EQ_U64(off, 3);
	/* the ELF header is loaded but is no function */
	CHECK(elf_symbols_lookup(c, fixture.path, 0, &off) == NULL);
	CHECK(elf_symbols_lookup(c, "/nonexistent/x.so", 0x1000, &off) == NULL);
	/* not ELF: refused, not crashed on */
	CHECK(elf_symbols_lookup(c, "/proc/self/status", 0x10, &off) == NULL);
	/* the cache evicts past 2 files and still answers */
	CHECK(elf_symbols_lookup(c, "/etc/hostname", 0, &off) == NULL);
	CHECK_STR(elf_symbols_lookup(c, fixture.path, inner, &off), "grt_fixture_inner");
	elf_symbols_free(c);
}

int main(int argc, char **argv)
{
	char fixture_path[4096];
	char *self = strdup(argv[0]);

	snprintf(fixture_path, sizeof(fixture_path), "%s/../fixtures/symfixture", dirname(self));
	snprintf(escapes_fixture_path, sizeof(escapes_fixture_path), "%s_escapes", fixture_path);
	free(self);
	if (scn_read_fixture(fixture_path, &fixture)) {
		printf("FAIL - cannot run the fixture %s (make builds it)\n", fixture_path);
		return 1;
	}
	RUN_TEST(test_leaks_by_stack);
	RUN_TEST(test_leaks_frame_names_escaped);
	RUN_TEST(test_leaks_threshold);
	RUN_TEST(test_leaks_json);
	RUN_TEST(test_no_leaks);
	RUN_TEST(test_calls_written_after_the_exit_record);
	RUN_TEST(test_elf_symbols);
	report_test_cleanup();
	return TEST_EXIT_STATUS();
}
