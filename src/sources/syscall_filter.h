/* The --syscalls option: a comma-separated list of x86-64 syscall names turned into a bit set. */
#ifndef GRT_SYSCALL_FILTER_H
#define GRT_SYSCALL_FILTER_H

#include <stddef.h>
#include <stdint.h>

#define GRT_SYSCALL_SET_WORDS 8	/* 512 numbers, as the BPF program's set */

/*
 * Parses list ("ioctl,mmap"; names or numbers) into set. Returns 0, or
 * -EINVAL with a one-line message in err naming the bad entry.
 * Commands call it while checking arguments so a typo is a usage error.
 */
int grt_syscall_filter_parse(const char *list, uint64_t set[GRT_SYSCALL_SET_WORDS], char *err,
			     size_t err_len);

#endif
