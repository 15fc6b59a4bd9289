/* Writes N launch-sized records through grt_writer, with or without checksum records (callgrind). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/grt_writer.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"

int main(int argc, char **argv)
{
	struct grt_file_header h = { 0 };
	struct grt_cuda_launch_rec launch = { .grid = { 4, 1, 1 }, .block = { 256, 1, 1 } };
	struct grt_event_origin o = { .cpu = 1, .pid = 100, .tid = 101 };
	long n = argc > 3 ? atol(argv[3]) : 100000;
	struct grt_writer *w;

	if (argc < 3 || (strcmp(argv[2], "on") && strcmp(argv[2], "off"))) {
		fprintf(stderr, "usage: writer_cost OUT.grt on|off [RECORDS]\n");
		return 2;
	}
	w = grt_writer_open(argv[1], &h);
	if (!w)
		return 1;
	grt_writer_set_checksums(w, !strcmp(argv[2], "on"));
	for (long i = 0; i < n; i++) {
		o.ts_ns = (uint64_t)i * 1000;
		o.cpu = (uint32_t)(i & 3);
		launch.function = (uint64_t)i;
		grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &launch, sizeof(launch));
	}
	return grt_writer_close(w, GRT_END_TARGET_EXIT, (uint64_t)n * 1000) ? 1 : 0;
}
