/* A syscall-heavy loop: N raw getppid() calls, timed by the program itself; prints ns per call. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	double start, end;

	if (n <= 0) {
		fprintf(stderr, "usage: syscall_loop [N]\n");
		return 2;
	}
	/* the timed region holds nothing but the calls: start-up and exit are outside it */
	start = now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	end = now_ns();
	printf("%.1f\n", (end - start) / n);
	return 0;
}
