/*
 * 512 allocations, each from a stack of its own: a binary tree of calls 9
 * deep, every level reached through one of two call sites. Enough distinct
 * stacks that a hashed stack map of 16,384 buckets would give several of them
 * a bucket another stack holds (tests/e2e/cuda_record.sh checks each keeps
 * its own frames). With "leak", nothing is freed: allocation N has 4096 + N
 * bytes, so the largest comes through the right-hand call site at every level
 * (tests/e2e/serve_http.sh checks the leak's stack says so). "leak FILE"
 * stays alive after its allocations until FILE exists (60 s at most), so that
 * a test can let an agent see the process before it exits.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "workload.h"

#define LEVELS 9

static int leak;

static void descend(unsigned path, int level);

/* the two call sites of each level: kept apart, not merged or inlined */
static __attribute__((noinline)) void left(unsigned path, int level)
{
	descend(path, level + 1);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void right(unsigned path, int level)
{
	descend(path, level + 1);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void descend(unsigned path, int level)
{
	CUdeviceptr p;

	if (level == LEVELS) {
		expect(cuMemAlloc_v2(&p, 4096 + path), CUDA_SUCCESS, "cuMemAlloc_v2");
		if (!leak)
			expect(cuMemFree_v2(p), CUDA_SUCCESS, "cuMemFree_v2");
		return;
	}
	if (path >> level & 1)
		right(path, level);
	else
		left(path, level);
	__asm__ volatile("" ::: "memory");
}

static void wait_for_file(const char *path)
{
	const struct timespec tick = {.tv_nsec = 10 * 1000 * 1000};

	for (int i = 0; i < 6000 && access(path, F_OK); i++)
		nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
	leak = argc > 1 && !strcmp(argv[1], "leak");
	for (unsigned path = 0; path < 1u << LEVELS; path++)
		descend(path, 0);
	if (leak && argc > 2)
		wait_for_file(argv[2]);
	return 0;
}
