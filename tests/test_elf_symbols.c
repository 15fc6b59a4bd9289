/* Where the cuda source's uprobes go: symbol offsets, and skipping endbr64 landing pads. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "sources/elf_symbols.h"
#include "test_util.h"

static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* A file with an endbr64 at 16, a push at 32: only the first offset moves. */
static void test_skip_on_crafted_bytes(void)
{
	char path[] = "/tmp/grt-elf-XXXXXX";
	unsigned char bytes[64] = { 0 };
	uint64_t offsets[4] = { 16, 32, 0, 60 };
	int fd = mkstemp(path);

	memcpy(bytes + 16, endbr64, 4);
	bytes[20] = 0x55;
	bytes[32] = 0x55;
	memcpy(bytes + 60, endbr64, 3); /* cut short by the end of the file: not a pad */
	CHECK(fd >= 0 && write(fd, bytes, sizeof(bytes)) == sizeof(bytes));
	close(fd);
	CHECK_EQ_U64(elf_skip_landing_pads(path, offsets, 4), 1);
	CHECK_EQ_U64(offsets[0], 20);
	CHECK_EQ_U64(offsets[1], 32);
	CHECK_EQ_U64(offsets[2], 0);
	CHECK_EQ_U64(offsets[3], 60);
	unlink(path);
	CHECK(elf_skip_landing_pads("/nonexistent/lib.so", offsets, 4) < 0);
}

/* A real object built with -fcf-protection starts its functions with endbr64. */
static void test_skip_on_compiled_object(void)
{
	const char *src = "/tmp/grt-elf-cet.c", *so = "/tmp/grt-elf-cet.so";
	const char *names[] = { "probe_me", "absent_symbol" };
	uint64_t offsets[2];
	unsigned char head[4];
	FILE *f = fopen(src, "w");
	int fd;

	CHECK(f != NULL);
	if (!f)
		return;
	fputs("int probe_me(int x) { return x * 3 + 1; }\n", f);
	fclose(f);
	if (system("cc -O1 -shared -fPIC -fcf-protection=full -o /tmp/grt-elf-cet.so /tmp/grt-elf-cet.c")) {
		printf("ok - test_skip_on_compiled_object # skipped: no cc with -fcf-protection\n");
		return;
	}
	CHECK_EQ_U64(elf_find_functions(so, names, 2, offsets), 1);
	CHECK(offsets[0] != 0 && offsets[1] == 0);
	fd = open(so, O_RDONLY);
	CHECK(pread(fd, head, 4, (off_t)offsets[0]) == 4 && !memcmp(head, endbr64, 4));
	CHECK_EQ_U64(elf_skip_landing_pads(so, offsets, 2), 1);
	CHECK(pread(fd, head, 4, (off_t)offsets[0]) == 4 && memcmp(head, endbr64, 4));
	close(fd);
	unlink(src);
	unlink(so);
}

int main(void)
{
	RUN_TEST(test_skip_on_crafted_bytes);
	RUN_TEST(test_skip_on_compiled_object);
	return TEST_EXIT_STATUS();
}
