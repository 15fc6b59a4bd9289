/* The writer on a full disk: append and close fail, the header says so, every whole record
 * survives. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test_util.h"
#include "trace_files.h"
#include "trace_gen.h"
#include "trace/grt_reader.h"

#define TMPFS_BYTES (64 * 1024)

struct small_fs {
	struct test_dir dir;
	bool mounted;
	char why[128]; /* when not mounted */
};

/* A 64 KiB tmpfs of our own, so filling it touches nothing else. */
static void small_fs_mount(struct small_fs *fs)
{
	test_dir_make(&fs->dir);
	fs->mounted = mount("grt-test", fs->dir.path, "tmpfs", MS_NOSUID | MS_NODEV,
			    "size=64k,mode=0700") == 0;
	if (!fs->mounted)
		snprintf(fs->why, sizeof(fs->why), "mount tmpfs: %s", strerror(errno));
}

static void small_fs_unmount(struct small_fs *fs)
{
	if (fs->mounted && umount(fs->dir.path))
		umount2(fs->dir.path, MNT_DETACH);
	fs->mounted = false;
	rmdir(fs->dir.path);
}

static struct grt_writer *open_traced(const char *path, uint64_t seed)
{
	struct gen_rng rng = {seed};
	struct grt_file_header h;

	gen_header(&rng, &h);
	return grt_writer_open(path, &h);
}

/* Appends random cuda records (and the strings they use) until the writer fails or max. */
static int append_until_error(struct grt_writer *w, struct gen_log *log, struct gen_rng *rng,
			      size_t max_records)
{
	uint64_t clock = 1;
	int err = 0;

	for (size_t i = 0; i < max_records && !err; i++) {
		struct grt_event_origin o;

		gen_origin(rng, &o, &clock, 8);
		err = gen_random_record(w, log, rng, gen_types[7 + gen_below(rng, 9)], &o);
	}
	return err;
}

/*
 * What must be on disk after a write error at byte `limit`: the header
 * flagged GRT_HDR_WRITE_ERROR and exactly the logged records that end at or
 * before limit, byte for byte, then a clean end and no trailer.
 */
static void check_cut_trace(const char *path, const struct gen_log *log, uint64_t limit)
{
	char err[256];
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));
	struct grt_record rec;
	enum grt_read_status st;
	size_t n = 0, want = 0;
	struct stat st_file;

	while (want < log->n && gen_log_offset(log, want + 1) <= limit)
		want++;
	CHECK(r != NULL);
	if (!r) {
		printf("  %s\n", err);
		return;
	}
	CHECK_EQ_U64(grt_reader_header(r)->flags, GRT_HDR_WRITE_ERROR);
	while ((st = grt_reader_next(r, &rec)) == GRT_READ_OK) {
		CHECK(n < log->n);
		if (n >= log->n)
			break;
		CHECK(memcmp(&rec.hdr, &log->recs[n].hdr, sizeof(rec.hdr)) == 0);
		CHECK(memcmp(rec.payload, log->recs[n].payload, rec.hdr.payload_len) == 0);
		n++;
	}
	CHECK(st == GRT_READ_END);
	CHECK_EQ_U64(n, want);
	CHECK(want > 0);
	CHECK(!grt_reader_trailer(r, NULL));
	CHECK(stat(path, &st_file) == 0);
	CHECK_EQ_U64(st_file.st_size, gen_log_offset(log, want));
	grt_reader_close(r);
}

static uint64_t fs_capacity(const char *dir)
{
	struct statvfs sv;

	return statvfs(dir, &sv) ? 0 : (uint64_t)sv.f_bavail * sv.f_bsize;
}

/* The disk fills while the writer flushes its buffer: the append that flushes fails. */
static void disk_full_at_flush(const char *dir)
{
	struct gen_rng rng = {7};
	struct gen_log log = {0};
	char path[256];
	struct grt_writer *w;
	uint64_t capacity = fs_capacity(dir);
	size_t logged;
	int err;

	snprintf(path, sizeof(path), "%s/flush.grt", dir);
	CHECK_EQ_U64(capacity, TMPFS_BYTES);
	w = open_traced(path, 1);
	CHECK(w != NULL);
	if (!w)
		return;
	err = append_until_error(w, &log, &rng, 100000);
	CHECK_EQ_U64(err, -ENOSPC);
	CHECK(gen_log_offset(&log, log.n) > TMPFS_BYTES); /* the buffer held more than fits */
	CHECK_EQ_U64(grt_writer_error(w), -ENOSPC);
	/* the error is sticky: nothing more is accepted */
	logged = log.n;
	CHECK_EQ_U64(grt_writer_intern(w, "never-written"), 0);
	CHECK_EQ_U64(grt_writer_drop(w, GRT_SRC_CUDA, 3, 1), -ENOSPC);
	CHECK_EQ_U64(append_until_error(w, &log, &rng, 10), -ENOSPC);
	CHECK_EQ_U64(log.n, logged);
	CHECK_EQ_U64(grt_writer_close(w, GRT_END_SIGNAL, 99), -ENOSPC);
	check_cut_trace(path, &log, capacity);
	gen_log_free(&log);
	unlink(path);
}

/* Every append fits the buffer; the disk fills when close flushes it. */
static void disk_full_at_close(const char *dir)
{
	struct gen_rng rng = {8};
	struct gen_log log = {0};
	char path[256];
	struct grt_writer *w;
	uint64_t capacity = fs_capacity(dir);

	snprintf(path, sizeof(path), "%s/close.grt", dir);
	w = open_traced(path, 2);
	CHECK(w != NULL);
	if (!w)
		return;
	while (gen_log_offset(&log, log.n) < 100 * 1024)
		CHECK_EQ_U64(append_until_error(w, &log, &rng, 1), 0);
	CHECK_EQ_U64(grt_writer_close(w, GRT_END_SIGNAL, 99), -ENOSPC);
	check_cut_trace(path, &log, capacity);
	gen_log_free(&log);
	unlink(path);
}

/* A record bigger than the buffer is written through; the disk fills inside it. */
static void disk_full_in_big_record(const char *dir)
{
	struct gen_rng rng = {9};
	struct gen_log log = {0};
	struct grt_event_origin o = {.ts_ns = 5, .cpu = 1};
	uint32_t big = 300 * 1024;
	uint8_t *payload = calloc(1, big);
	char path[256];
	struct grt_writer *w;

	snprintf(path, sizeof(path), "%s/big.grt", dir);
	w = open_traced(path, 3);
	CHECK(w != NULL && payload != NULL);
	if (!w || !payload) {
		free(payload);
		return;
	}
	while (gen_log_offset(&log, log.n) < 20 * 1024)
		CHECK_EQ_U64(append_until_error(w, &log, &rng, 1), 0);
	CHECK_EQ_U64(gen_append(w, &log, GEN_UNKNOWN_TYPE, &o, payload, big), -ENOSPC);
	CHECK_EQ_U64(grt_writer_close(w, GRT_END_SIGNAL, 99), -ENOSPC);
	/* everything before the big record made it; none of the big record remains */
	check_cut_trace(path, &log, gen_log_offset(&log, log.n));
	free(payload);
	gen_log_free(&log);
	unlink(path);
}

static void test_disk_full_tmpfs(void)
{
	struct small_fs fs;

	small_fs_mount(&fs);
	if (!fs.mounted) {
		small_fs_unmount(&fs);
		printf("ok - test_disk_full_tmpfs # skipped (%s)\n", fs.why);
		return;
	}
	disk_full_at_flush(fs.dir.path);
	disk_full_at_close(fs.dir.path);
	disk_full_in_big_record(fs.dir.path);
	small_fs_unmount(&fs);
	if (test_failures_in_case) {
		printf("FAIL - test_disk_full_tmpfs\n");
		test_cases_failed++;
	} else {
		printf("ok - test_disk_full_tmpfs\n");
		test_cases_passed++;
	}
}

/*
 * A file size limit stops the writer at an exact byte, inside a record; run
 * in a child so the limit binds nothing else. The child checks, and its exit
 * status says whether every check passed.
 */
static void test_file_size_limit(void)
{
	struct test_dir dir;
	char path[256];
	pid_t pid;
	int status = -1;

	test_dir_make(&dir);
	test_dir_file(&dir, "limit.grt", path, sizeof(path));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct gen_rng rng = {10};
		struct gen_log log = {0};
		struct rlimit lim;
		struct grt_writer *w = open_traced(path, 4);
		uint64_t limit;

		if (!w)
			_exit(3);
		/* log enough records to know where record 50 lies, cut 50 bytes into it */
		while (log.n < 60)
			append_until_error(w, &log, &rng, 1);
		limit = gen_log_offset(&log, 50) + 50;
		signal(SIGXFSZ, SIG_IGN);
		lim = (struct rlimit){.rlim_cur = limit, .rlim_max = limit};
		if (setrlimit(RLIMIT_FSIZE, &lim))
			_exit(4);
		CHECK_EQ_U64(grt_writer_close(w, GRT_END_SIGNAL, 1), -EFBIG);
		check_cut_trace(path, &log, limit);
		CHECK(gen_log_offset(&log, 50) < limit);
		fflush(stdout);
		_exit(test_failures_in_case ? 1 : 0);
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	test_dir_remove(&dir);
}

/* /dev/full takes nothing: not even the header, so open fails with ENOSPC. */
static void test_dev_full(void)
{
	struct grt_file_header h = {0};

	errno = 0;
	CHECK(grt_writer_open("/dev/full", &h) == NULL);
	CHECK_EQ_U64(errno, ENOSPC);
	errno = 0;
	CHECK(grt_writer_open("/nonexistent-dir/x.grt", &h) == NULL);
	CHECK_EQ_U64(errno, ENOENT);
}

int main(void)
{
	test_disk_full_tmpfs();
	RUN_TEST(test_file_size_limit);
	RUN_TEST(test_dev_full);
	return TEST_EXIT_STATUS();
}
