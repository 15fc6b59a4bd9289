/*
 * Runs a command with libgrtrace-inject.so recording its CUDA calls into call
 * rings that nobody drains: the in-process path's own cost, alone, for
 * callgrind (bench/cuda_inproc.sh). usage: inproc_rings LIB RING_MB -- CMD ARGS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "inject/call_record.h"
#include "inject/call_rings.h"

int main(int argc, char **argv)
{
	struct call_rings_config cfg = {.launch_return_every = 1, .stacks = 1, .args = 1, .tsc = 1};
	char path[] = "/dev/shm/grtrace-bench-rings-XXXXXX";
	uint32_t nrings = 4, ring_bytes;
	uint64_t len;
	void *map;
	int fd;

	if (argc < 5) {
		fprintf(stderr, "usage: inproc_rings LIB RING_MB -- CMD ARGS\n");
		return 2;
	}
	ring_bytes = (uint32_t)atoi(argv[2]) << 20;
	len = call_rings_size(nrings, ring_bytes);
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, (off_t)len))
		return perror("rings"), 1;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || call_rings_init(map, nrings, ring_bytes, &cfg))
		return perror("rings"), 1;
	/* the file goes when the command is done with it */
	unlink(path);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	setenv(GRT_INJECT_ENV_CALLS, path, 1);
	setenv("LD_PRELOAD", argv[1], 1);
	execvp(argv[4], argv + 4);
	perror("exec");
	return 127;
}
