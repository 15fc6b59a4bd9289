/* libFuzzer target: any argument vector through every command's option parser, side-effect free. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"

#define MAX_ARGS 32

/*
 * The input is NUL-separated strings: the first byte picks the command, the
 * rest are its arguments. Every parser must return 0, 1 or 2, never crash,
 * never read out of its argv, and never touch a file (they only check).
 * Their usage and error lines are not what is tested: the runner closes the
 * target's stdout and stderr (-close_fd_mask=3).
 */
static int (*const parsers[])(int argc, char **argv) = {
	record_parse_args, parse_parse_args, report_parse_args, export_parse_args, snoop_parse_args,
};
static const char *const names[] = { "record", "parse", "report", "export", "snoop" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy, *args[MAX_ARGS + 2];
	size_t n = 0, at = 1;
	unsigned which;
	int rc;

	if (size < 1)
		return 0;
	which = data[0] % (sizeof(parsers) / sizeof(parsers[0]));
	/* exact-size copy with a final NUL: ASan sees any read past an argument */
	copy = malloc(size);
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = 0;
	args[n++] = (char *)names[which];
	while (at < size && n < MAX_ARGS + 1) {
		char *arg = copy + at - 1;

		args[n++] = arg;
		at += strlen(arg) + 1;
	}
	args[n] = NULL;
	rc = parsers[which](n, args);
	if (rc < 0 || rc > 2) {
		fprintf(stderr, "fuzz assertion failed: %s returned %d\n", names[which], rc);
		abort();
	}
	free(copy);
	return 0;
}
