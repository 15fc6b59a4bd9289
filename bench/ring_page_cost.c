/*
 * What a page of a call ring costs the thread that writes it (src/inject/ring_pages.c): the
 * first write to a page of a sparse /dev/shm file (a fault that gives it memory and maps it,
 * as a thread's first lap of its ring did), a write to a page that already has memory (a fault
 * that maps it: a ring an exited thread used before), and the same pages taken at once with
 * MADV_POPULATE_WRITE, as a thread now does when it claims its ring. And the recorder's side:
 * its first read of each page of a ring whose pages have memory (a fault that maps the page in
 * its own mapping of the file, as its first drains of a thread's first lap take), and those
 * pages mapped at once with MADV_POPULATE_READ and then read; and a read of pages already mapped
 * by MADV_POPULATE_WRITE (the populate not timed): what a first access costs where the page
 * tables a guest fills are not the ones its CPU walks (a VM with shadow page tables).
 * usage: ring_page_cost [MIB] [ROUNDS]   prints the median ns a page of each, over ROUNDS
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum way {
	FIRST_WRITE,
	MAPPED_WRITE,
	POPULATE,
	FIRST_READ,
	POPULATED_READ,
	READ_AFTER_POPULATE,
	WAYS
};
static const char *const names[WAYS] = {
    "first write of a sparse page", "write of a page with memory", "MADV_POPULATE_WRITE, sparse",
    "first read of a page with memory", "MADV_POPULATE_READ, then a read",
    "read after MADV_POPULATE_WRITE"};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns a page for one way over a fresh file of len bytes; -1 on failure */
static double one(enum way way, size_t len)
{
	char path[] = "/dev/shm/grtrace-page-cost-XXXXXX";
	int fd = mkstemp(path);
	volatile char *m;
	double t0, t;

	if (fd < 0 || ftruncate(fd, (off_t)len))
		return -1;
	unlink(path);
	if ((way == MAPPED_WRITE || way == FIRST_READ || way == POPULATED_READ) &&
	    fallocate(fd, 0, 0, (off_t)len))
		return -1;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	/* the populate untimed: what the first access still costs once the page is mapped */
	if (way == READ_AFTER_POPULATE && madvise((void *)m, len, MADV_POPULATE_WRITE))
		return -1;
	t0 = now_ns();
	if (way == POPULATE) {
		if (madvise((void *)m, len, MADV_POPULATE_WRITE))
			return -1;
	} else if (way >= FIRST_READ) {
		volatile char sink = 0; /* every page read once */

		if (way == POPULATED_READ && madvise((void *)m, len, MADV_POPULATE_READ))
			return -1;
		for (size_t off = 0; off < len; off += 4096)
			sink += m[off];
	} else {
		for (size_t off = 0; off < len; off += 4096)
			m[off] = 1;
	}
	t = (now_ns() - t0) / (double)(len / 4096);
	munmap((void *)m, len);
	return t;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atoi(argv[1]) : 4) << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	double *v = calloc((size_t)rounds * WAYS, sizeof(double));

	if (!len || rounds < 1 || !v)
		return 2;
	/* interleaved: each round runs every way once */
	for (int r = 0; r < rounds; r++)
		for (int w = 0; w < WAYS; w++)
			if ((v[w * rounds + r] = one((enum way)w, len)) < 0) {
				fprintf(stderr, "ring_page_cost: %s failed\n", names[w]);
				return 1;
			}
	for (int w = 0; w < WAYS; w++) {
		qsort(v + w * rounds, (size_t)rounds, sizeof(double), cmp);
		printf("%-30s %8.0f ns a page (rounds %.0f..%.0f), %zu MiB\n", names[w],
		       v[w * rounds + rounds / 2], v[w * rounds], v[w * rounds + rounds - 1], len >> 20);
	}
	free(v);
	return 0;
}
