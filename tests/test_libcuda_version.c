/* Driver and CUDA versions read as data (never by loading libcuda), and the shared number parser. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/num_parse.h"
#include "sources/libcuda_version.h"
#include "test_util.h"

static char fake_libcuda[PATH_MAX], fake_nvml[PATH_MAX], fixtures_dir[PATH_MAX];
#include "trace_files.h"

static void test_proc_version_lines(void)
{
	char v[32];

	CHECK_EQ_U64(driver_version_from_proc_line(
			     "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct 30 "
			     "20:42:05 UTC 2025\n", v, sizeof(v)), 0);
	CHECK_STR(v, "580.159.04");
	CHECK_EQ_U64(driver_version_from_proc_line(
			     "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  "
			     "Release Build  (dvs-builder@U16-I3-B03-4-3)\n", v, sizeof(v)), 0);
	CHECK_STR(v, "575.57.08");
	CHECK_EQ_U64(driver_version_from_proc_line("GCC version:  gcc version 12.2.0\n", v, sizeof(v)),
		     (uint64_t)-ENOENT);
	CHECK_EQ_U64(driver_version_from_proc_line("NVRM version: Kernel Module\n", v, sizeof(v)),
		     (uint64_t)-ENOENT);
}

static void test_libcuda_file_name(void)
{
	struct test_dir dir;
	char real[256], link[256], other[256], v[32];

	test_dir_make(&dir);
	test_dir_file(&dir, "libcuda.so.580.159.04", real, sizeof(real));
	test_dir_file(&dir, "libcuda.so.1", link, sizeof(link));
	CHECK(test_write_file(real, "not loaded, only named", 22) == 0);
	CHECK(symlink("libcuda.so.580.159.04", link) == 0);
	CHECK_EQ_U64(driver_version_from_libcuda_name(link, v, sizeof(v)), 0);
	CHECK_STR(v, "580.159.04");
	CHECK_EQ_U64(driver_version_from_libcuda_name(real, v, sizeof(v)), 0);
	/* a libcuda.so.1 that is the file itself names no version: left empty, not guessed */
	test_dir_file(&dir, "other", other, sizeof(other));
	CHECK(mkdir(other, 0755) == 0);
	strcat(other, "/libcuda.so.1");
	CHECK(test_write_file(other, "x", 1) == 0);
	CHECK_EQ_U64(driver_version_from_libcuda_name(other, v, sizeof(v)), (uint64_t)-ENOENT);
	CHECK_EQ_U64(driver_version_from_libcuda_name("/nonexistent/libcuda.so.1", v, sizeof(v)),
		     (uint64_t)-ENOENT);
	unlink(other);
	*strrchr(other, '/') = 0;
	rmdir(other);
	test_dir_remove(&dir);
}

/* The CUDA version a libcuda states in its .rodata, read as bytes from the fake driver. */
static void test_cuda_version_from_library_data(void)
{
	struct test_dir dir;
	char path[PATH_MAX + 64], v[16] = "x";

	CHECK_EQ_U64(cuda_version_from_libcuda(fake_libcuda, v, sizeof(v)), 0);
	CHECK_STR(v, "13.0");
	/* a library without the self-description: left empty, not guessed */
	CHECK_EQ_U64(cuda_version_from_libcuda(fake_nvml, v, sizeof(v)), (uint64_t)-ENOENT);
	/* in the note section the 580 driver keeps it in, not .rodata */
	snprintf(path, sizeof(path), "%s/libcuda_selfdesc_ro.so", fixtures_dir);
	CHECK_EQ_U64(cuda_version_from_libcuda(path, v, sizeof(v)), 0);
	CHECK_STR(v, "12.8");
	/* writable data is the library's to change: not read */
	snprintf(path, sizeof(path), "%s/libcuda_selfdesc_rw.so", fixtures_dir);
	CHECK_EQ_U64(cuda_version_from_libcuda(path, v, sizeof(v)), (uint64_t)-ENOENT);
	/* not ELF, or cut short: refused as such */
	test_dir_make(&dir);
	test_dir_file(&dir, "libcuda.so.1", path, sizeof(path));
	CHECK(test_write_file(path, "\x7f" "ELF not really", 15) == 0);
	CHECK_EQ_U64(cuda_version_from_libcuda(path, v, sizeof(v)), (uint64_t)-ENOEXEC);
	CHECK_EQ_U64(cuda_version_from_libcuda("/nonexistent/libcuda.so.1", v, sizeof(v)),
		     (uint64_t)-ENOENT);
	test_dir_remove(&dir);
}

static void test_num_parse(void)
{
	double d;
	uint64_t u;
	int64_t i;

	CHECK_EQ_U64(num_parse_seconds("1.5", &d), 0);
	CHECK(d == 1.5);
	CHECK_EQ_U64(num_parse_seconds("31536000", &d), 0);
	/* what used to end at once, or never: huge, NaN, infinite, zero, negative */
	CHECK_EQ_U64(num_parse_seconds("1e12", &d), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_seconds("99999999999", &d), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_seconds("1e99", &d), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_seconds("1e999", &d), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_seconds("0", &d), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_seconds("-1", &d), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_seconds("nan", &d), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_seconds("inf", &d), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_seconds(" 1", &d), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_seconds("0x10", &d), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_seconds("1s", &d), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_seconds("", &d), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_double("1e18", 0, 1e18, &d), 0);
	CHECK_EQ_U64(num_parse_double("1.0000001e18", 0, 1e18, &d), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_u64("18446744073709551615", 0, UINT64_MAX, &u), 0);
	CHECK_EQ_U64(u, UINT64_MAX);
	CHECK_EQ_U64(num_parse_u64("18446744073709551616", 0, UINT64_MAX, &u), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_u64("-1", 0, 10, &u), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_u64("11", 0, 10, &u), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_u64("1.5", 0, 10, &u), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_u64("+1", 0, 10, &u), (uint64_t)-EINVAL);
	/* signed: both ends of int64_t, the range on either side of 0, what is no integer */
	CHECK_EQ_U64(num_parse_i64("-10", -20, 19, &i), 0);
	CHECK(i == -10);
	CHECK_EQ_U64(num_parse_i64("19", -20, 19, &i), 0);
	CHECK(i == 19);
	CHECK_EQ_U64(num_parse_i64("-0", -20, 19, &i), 0);
	CHECK(i == 0);
	CHECK_EQ_U64(num_parse_i64("-21", -20, 19, &i), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_i64("20", -20, 19, &i), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_i64("-5", 1, 10, &i), (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &i), 0);
	CHECK(i == INT64_MIN);
	CHECK_EQ_U64(num_parse_i64("9223372036854775807", INT64_MIN, INT64_MAX, &i), 0);
	CHECK(i == INT64_MAX);
	CHECK_EQ_U64(num_parse_i64("-9223372036854775809", INT64_MIN, INT64_MAX, &i),
		     (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &i),
		     (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_i64("99999999999999999999", INT64_MIN, INT64_MAX, &i),
		     (uint64_t)-ERANGE);
	CHECK_EQ_U64(num_parse_i64("-", -20, 19, &i), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_i64("--1", -20, 19, &i), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_i64("+1", -20, 19, &i), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_i64("1.5", -20, 19, &i), (uint64_t)-EINVAL);
	CHECK_EQ_U64(num_parse_i64("", -20, 19, &i), (uint64_t)-EINVAL);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];

	/* the build directory's fixtures: BUILD/tests/this -> BUILD/fixtures/... */
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(fake_libcuda, sizeof(fake_libcuda), "%s/../fixtures/fake/libcuda.so.1", dirname(self));
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(fake_nvml, sizeof(fake_nvml), "%s/../fixtures/libnvidia-ml.so.1",
		 dirname(self));
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(fixtures_dir, sizeof(fixtures_dir), "%s/../fixtures", dirname(self));
	RUN_TEST(test_proc_version_lines);
	RUN_TEST(test_libcuda_file_name);
	RUN_TEST(test_cuda_version_from_library_data);
	RUN_TEST(test_num_parse);
	return TEST_EXIT_STATUS();
}
