/* A report that ran out of memory says so and exits 1, in every format: never a silently short answer. */
#include <fcntl.h>
#include <stdlib.h>
#include "analysis/report.h"
#include "common/log.h"
#include "jobs_trace.h"
#include "report_check.h"
#include "report_scenarios.h"
#include "test_util.h"

/*
 * Built with -Wl,--wrap for malloc, calloc and realloc (tests/mk/report.mk):
 * every allocation grtrace's code makes goes through here, and the one
 * numbered fail_at fails.
 */
void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

static long allocations, fail_at;

static bool fail_now(void)
{
	return ++allocations == fail_at;
}

void *__wrap_malloc(size_t size)
{
	return fail_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return fail_now() ? NULL : __real_realloc(p, size);
}

#define PID 1100
#define TID 1101

/* Something for every section under test: launches timed on the device, copies, allocations, drops. */
static void write_trace(struct tw *t)
{
	static const uint64_t ips[3] = { 0x401000, 0x401100, 0x7f0000001000 };
	struct grt_drop_rec lost = { .source = GRT_SRC_CUDA, .count = 2 };

	tw_open(t, SRC_HOST_AND_GPU);
	scn_process(t->w, PID, 500, GRT_PROC_START, "oom", 0);
	scn_mapping(t->w, PID, 0x400000, 0x402000, 0, "/bin/true");
	scn_stack(t->w, PID, 7, ips, 3);
	for (uint64_t i = 0; i < 12; i++) {
		uint64_t at = 1000 + i * 10000;
		char name[16];

		snprintf(name, sizeof(name), "kernel%u", (unsigned)(i % 5));
		tw_launch(t, PID, TID, at, at + 500, 0x10 + i % 3, name);
		tw_gpu_kernel_id(t, PID, TID + 1, (struct tw_call_id){ TID, at - 10, at + 510, 0 },
				 at + 1000, at + 3000, 0x10 + i % 3, 0, name, 0);
		scn_alloc(t->w, PID, at + 4000, 0x700000000000 + i * 0x100000, 4096 << i % 4,
			  GRT_ALLOC_DEVICE, 7, 0);
		if (i % 2)
			scn_free(t->w, PID, at + 5000, 0x700000000000 + i * 0x100000);
		scn_memcpy(t->w, PID, at + 6000, 2000, GRT_COPY_HTOD, 1 << 20, (int)(i % 2), 0);
	}
	tw_rec(t, GRT_REC_DROP, 0, 0, 60000, &lost, sizeof(lost));
	tw_ctx_sync(t, PID, TID, 200000, 210000);
	tw_close(t);
}

struct run {
	int rc;
	char *out;
	int error_lines;
	char first_error[256];
};

/* The report of one section in one format, stderr counted in lines. */
static void run_report(const char *path, const char *section, int format, struct run *r)
{
	struct report_options opt = { .top_n = 5, .json = format == 1, .csv = format == 2,
				      .csv_table = format == 2 ? section : NULL };
	char err_path[] = "/tmp/grt-oom-err-XXXXXX";
	int err_fd = mkstemp(err_path), saved = dup(2);
	FILE *err;

	fflush(stderr);
	dup2(err_fd, 2);
	r->out = report_capture_with(path, section, opt, &r->rc);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	r->error_lines = 0;
	r->first_error[0] = 0;
	err = fdopen(err_fd, "r");
	if (err) {
		char line[256];

		rewind(err);
		while (fgets(line, sizeof(line), err))
			if (r->error_lines++ == 0)
				snprintf(r->first_error, sizeof(r->first_error), "%s", line);
		fclose(err);
	}
	unlink(err_path);
}

/*
 * Fails each allocation the report makes, one run per allocation: a run
 * that exits 0 must print exactly what the run without a failure printed;
 * any other must exit 1 with one "grtrace: " line.
 */
static void check_section(const char *path, const char *section, int format)
{
	struct run base, r;
	long total, silent = 0, bad_exit = 0, failed_runs = 0;

	fail_at = 0;
	allocations = 0;
	run_report(path, section, format, &base);
	total = allocations;
	CHECK_EQ_U64(base.rc, 0);
	for (long k = 1; k <= total; k++) {
		allocations = 0;
		fail_at = k;
		run_report(path, section, format, &r);
		fail_at = 0;
		if (r.rc == GRT_EXIT_OK) {
			if (strcmp(r.out ? r.out : "", base.out ? base.out : "")) {
				if (!silent++)
					printf("  %s (format %d): allocation %ld of %ld failed, exit 0, output "
					       "differs\n", section, format, k, total);
			}
		} else {
			failed_runs++;
			if (r.rc != GRT_EXIT_FAILURE || r.error_lines != 1 ||
			    strncmp(r.first_error, "grtrace: ", 9)) {
				if (!bad_exit++)
					printf("  %s (format %d): allocation %ld of %ld failed: exit %d, %d "
					       "error lines, first '%s'\n",
					       section, format, k, total, r.rc, r.error_lines, r.first_error);
			}
		}
		free(r.out);
	}
	CHECK_EQ_U64(silent, 0);
	CHECK_EQ_U64(bad_exit, 0);
	CHECK(failed_runs > 0);
	free(base.out);
}

static const char *const sections[] = { "kernels", "api", "copies", "leaks", "drops", "gpu", "jobs" };

static void test_out_of_memory_exits_1_in_every_format(void)
{
	struct tw t;

	write_trace(&t);
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		for (int format = 0; format < 2; format++)
			check_section(t.path, sections[i], format);
	check_section(t.path, "jobs", 2);
	unlink(t.path);
}

/* The message names the section and what is missing. */
static void test_message_names_the_section(void)
{
	struct tw t;
	struct run base, r;
	long total;
	bool seen = false;

	write_trace(&t);
	fail_at = 0;
	allocations = 0;
	run_report(t.path, "kernels", 1, &base);
	total = allocations;
	for (long k = total; k > 0 && !seen; k--) {
		allocations = 0;
		fail_at = k;
		run_report(t.path, "kernels", 1, &r);
		fail_at = 0;
		seen = r.rc == 1 && strstr(r.first_error, "grtrace: report: the kernels section is "
							  "incomplete: out of memory");
		free(r.out);
	}
	CHECK(seen);
	free(base.out);
	unlink(t.path);
}

int main(void)
{
	RUN_TEST(test_out_of_memory_exits_1_in_every_format);
	RUN_TEST(test_message_names_the_section);
	return TEST_EXIT_STATUS();
}
