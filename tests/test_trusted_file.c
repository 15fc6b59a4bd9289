/* The check a library passes before grtrace (root) loads it: root's alone, in root's directories. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/trusted_file.h"
#include "test_util.h"
#include "trace_files.h"

static void test_ownership_and_modes(void)
{
	struct test_dir dir;
	char lib[256], link[256], why[256];

	test_dir_make(&dir);
	/* the test directory is made under /tmp (world-writable): check a directory of its own */
	test_dir_file(&dir, "libnvidia-ml.so.1", lib, sizeof(lib));
	CHECK(test_write_file(lib, "x", 1) == 0);
	CHECK(chmod(lib, 0755) == 0);
	CHECK_EQ_U64(trusted_file_check(lib, why, sizeof(why)), (uint64_t)-EPERM);
	CHECK(strstr(why, "is writable by everyone") != NULL);
	CHECK_EQ_U64(trusted_file_check("/bin/sh", why, sizeof(why)), 0);
	CHECK_EQ_U64(trusted_file_check("/nonexistent/libnvidia-ml.so.1", why, sizeof(why)),
		     (uint64_t)-ENOENT);
	CHECK_EQ_U64(trusted_file_check("/etc", why, sizeof(why)), (uint64_t)-EINVAL);
	/* a link is judged by the file it reaches */
	test_dir_file(&dir, "link.so", link, sizeof(link));
	CHECK(symlink("/bin/sh", link) == 0);
	CHECK_EQ_U64(trusted_file_check(link, why, sizeof(why)), 0);
	unlink(link);
	unlink(lib);
	test_dir_remove(&dir);
}

static char own_dir[4096];	/* the test program's directory */

/* Beside the test program (a root-owned build directory): the file's own owner and mode decide. */
static void test_file_modes(void)
{
	char lib[4200], why[256];

	if (trusted_file_check(own_dir, why, sizeof(why)) == -EPERM) {
		printf("  skipped: the build directory itself is not root's alone (%s)\n", why);
		return;
	}
	snprintf(lib, sizeof(lib), "%s/trusted-file-test.so", own_dir);
	CHECK(test_write_file(lib, "x", 1) == 0);
	CHECK(chmod(lib, 0644) == 0 && chown(lib, 0, 0) == 0);
	CHECK_EQ_U64(trusted_file_check(lib, why, sizeof(why)), 0);
	CHECK(chmod(lib, 0664) == 0);
	CHECK_EQ_U64(trusted_file_check(lib, why, sizeof(why)), (uint64_t)-EPERM);
	CHECK(strstr(why, "is writable by its group") != NULL);
	CHECK(chmod(lib, 0644) == 0 && chown(lib, 65534, 65534) == 0);
	CHECK_EQ_U64(trusted_file_check(lib, why, sizeof(why)), (uint64_t)-EPERM);
	CHECK(strstr(why, "is owned by uid 65534, not root") != NULL);
	unlink(lib);
}

int main(int argc, char **argv)
{
	char *slash;

	snprintf(own_dir, sizeof(own_dir), "%s", argv[0]);
	slash = strrchr(own_dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(own_dir, sizeof(own_dir), ".");
	if (geteuid() != 0) {
		printf("ok - test_ownership_and_modes # skipped: needs root\n");
		return 0;
	}
	RUN_TEST(test_ownership_and_modes);
	RUN_TEST(test_file_modes);
	return TEST_EXIT_STATUS();
}
