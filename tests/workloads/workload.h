/* Small helpers the fake-CUDA workloads share: result checks and an optional start gate. */
#ifndef GRT_WORKLOAD_H
#define GRT_WORKLOAD_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fake_cuda.h"

/* Exits when a call that must succeed did not, or one that must fail did not fail. */
static inline void expect(CUresult got, CUresult want, const char *what)
{
	if (got != want) {
		fprintf(stderr, "workload: %s returned %d, expected %d\n", what, got, want);
		exit(3);
	}
}

/*
 * With WORKLOAD_GATE=FIFO in the environment, blocks until one byte can be
 * read from it: a test starts the workload, attaches by pid, then opens the gate.
 * An end of file without a byte is an earlier opening's writer closing late (the
 * same process passed the gate before an exec, and the writer was still open when
 * this program opened the FIFO): that opening was not ours, so wait for the next.
 */
static inline void workload_gate(void)
{
	const char *gate = getenv("WORKLOAD_GATE");
	char byte;
	ssize_t got = 0;

	if (!gate)
		return;
	while (got == 0) {
		int fd = open(gate, O_RDONLY);

		if (fd < 0) {
			perror("workload: gate");
			exit(3);
		}
		got = read(fd, &byte, 1);
		close(fd);
	}
	if (got < 0) {
		perror("workload: gate");
		exit(3);
	}
}

#endif
