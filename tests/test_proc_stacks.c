/* serve's per-process stacks: kept by the BPF side's digest of their frames, symbolized on demand. */
#include <string.h>
#include <unistd.h>
#include "serve/proc_stacks.h"
#include "test_util.h"

int main(void);

/* Two stacks under two keys, each formatted with its own frames; 0 and unknown keys have none. */
static void test_stacks_by_key(void)
{
	struct proc_stacks *ps = proc_stacks_new(getpid());
	uint64_t a[32] = {(uint64_t)(uintptr_t)test_stacks_by_key + 4,
			  (uint64_t)(uintptr_t)main + 8};
	uint64_t b[32] = {(uint64_t)(uintptr_t)main + 8};
	uint64_t key_a = 0x9e3779b97f4a7c15ull, key_b = key_a ^ (1ull << 40);
	char text[2048];

	CHECK(ps && !proc_stacks_read_maps(ps));
	CHECK(!proc_stacks_add(ps, key_a, a, 32));
	CHECK(!proc_stacks_add(ps, key_b, b, 32));
	CHECK(!proc_stacks_add(ps, key_a, b, 32)); /* a key kept is kept as it was */
	CHECK(proc_stacks_has(ps, key_a) && proc_stacks_has(ps, key_b));
	CHECK(!proc_stacks_has(ps, 0) && !proc_stacks_has(ps, key_a ^ 1));
	proc_stacks_format(ps, key_a, 6, text, sizeof(text));
	CHECK(strstr(text, "test_stacks_by_key+0x4 (") == text);
	CHECK(strstr(text, " <- main+0x8 (") != NULL);
	proc_stacks_format(ps, key_b, 6, text, sizeof(text));
	CHECK(strstr(text, "main+0x8 (") == text && !strstr(text, " <- "));
	proc_stacks_format(ps, key_a ^ 1, 6, text, sizeof(text));
	CHECK(!strcmp(text, "no stack"));
	proc_stacks_format(ps, 0, 6, text, sizeof(text));
	CHECK(!strcmp(text, "no stack"));
	proc_stacks_free(ps);
}

int main(void)
{
	RUN_TEST(test_stacks_by_key);
	return TEST_EXIT_STATUS();
}
