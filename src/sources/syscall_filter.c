/* Parsing --syscalls lists against the x86-64 syscall table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources/syscall_filter.h"
#include "trace/kernel_names.h"

_Static_assert(GRT_SYSCALL_SET_WORDS * 64 == GRT_SYSCALL_TABLE_SIZE, "set covers the table");

static int syscall_number(const char *name)
{
	char *end;
	long nr;

	if (name[0] >= '0' && name[0] <= '9') {
		nr = strtol(name, &end, 10);
		return *end || nr >= GRT_SYSCALL_TABLE_SIZE ? -1 : (int)nr;
	}
	return grt_syscall_nr(name);
}

int grt_syscall_filter_parse(const char *list, uint64_t set[GRT_SYSCALL_SET_WORDS], char *err,
			     size_t err_len)
{
	const char *at = list;

	memset(set, 0, GRT_SYSCALL_SET_WORDS * sizeof(set[0]));
	while (*at) {
		size_t len = strcspn(at, ",");
		char name[64];
		int nr;

		if (len == 0 || len >= sizeof(name)) {
			snprintf(err, err_len, "--syscalls: empty or overlong name in '%s'", list);
			return -EINVAL;
		}
		memcpy(name, at, len);
		name[len] = 0;
		nr = syscall_number(name);
		if (nr < 0) {
			snprintf(err, err_len,
				 "--syscalls: unknown syscall '%s' (x86-64 names as in unistd_64.h, e.g. ioctl,mmap,openat)",
				 name);
			return -EINVAL;
		}
		set[nr / 64] |= 1ULL << (nr % 64);
		at += len;
		if (*at == ',' && !*++at) {
			snprintf(err, err_len, "--syscalls: trailing comma in '%s'", list);
			return -EINVAL;
		}
	}
	if (at == list) {
		snprintf(err, err_len, "--syscalls: empty list");
		return -EINVAL;
	}
	return 0;
}
