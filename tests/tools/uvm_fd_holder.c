/* uvm_fd_holder [--delay-ms N] PATH...: opens each PATH, says so, waits to be killed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int first = 1;

	/* "--delay-ms N" first: the descriptor appears only after tracing has started */
	if (argc > 2 && !strcmp(argv[1], "--delay-ms")) {
		usleep((useconds_t)atoi(argv[2]) * 1000);
		first = 3;
	}
	for (int i = first; i < argc; i++) {
		int fd = open(argv[i], O_RDWR);

		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		printf("fd %d %s\n", fd, argv[i]);
	}
	fflush(stdout);
	for (;;)
		pause();
}
