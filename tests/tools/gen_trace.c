/* Writes .grt fixtures for the e2e tests and the fuzz corpus: known, random and damaged traces. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "known_trace.h"
#include "trace_files.h"
#include "trace_gen.h"
#include "trace/grt_reader.h"
#include "trace/records_kernel.h"

/* The launch of vecAdd: record 11 of the known trace (6 strings, stack, mapping, process, ...). */
#define KNOWN_LAUNCH_INDEX 11

static void usage(void)
{
	fprintf(stderr,
		"usage: gen_trace known OUT            the known trace (tests/known_trace.h)\n"
		"       gen_trace random SEED OUT [N]  N (500) random records of every type\n"
		"       gen_trace bad-magic OUT        known trace, vecAdd launch's magic broken\n"
		"       gen_trace cut OUT              known trace cut inside the vecAdd launch\n"
		"       gen_trace corpus DIR           the fuzz seed corpus\n"
		"bad-magic and cut print the byte offset the reader's error must name.\n");
}

static int write_random(const char *path, uint64_t seed, size_t records, uint32_t ncpus)
{
	struct gen_rng rng = {seed};
	struct grt_file_header h;
	struct grt_writer *w;
	int err;

	gen_header(&rng, &h);
	w = grt_writer_open(path, &h);
	if (!w)
		return -errno;
	err = gen_random_records(w, NULL, &rng, h.start_monotonic_ns, records, ncpus);
	return grt_writer_close(w, GRT_END_TARGET_EXIT, h.start_monotonic_ns + 1) ?: err;
}

/* Offset of record index in a trace file, found by reading it; -1 when it has fewer. */
static int64_t record_offset(const char *path, size_t index)
{
	char err[256];
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));
	struct grt_record rec;
	int64_t at = -1;

	for (size_t i = 0; r && grt_reader_next(r, &rec) == GRT_READ_OK; i++) {
		if (i == index) {
			at = (int64_t)rec.offset;
			break;
		}
	}
	grt_reader_close(r);
	return at;
}

/* Writes the known trace, then damages it: bad record magic, or a cut 10 bytes into the payload. */
static int write_damaged(const char *path, bool cut)
{
	unsigned char *img;
	size_t len;
	int64_t at;
	int err = known_trace_write(path);

	if (err)
		return err;
	at = record_offset(path, KNOWN_LAUNCH_INDEX);
	img = test_read_file(path, &len);
	if (at < 0 || !img) {
		free(img);
		return -EIO;
	}
	if (cut)
		len = (size_t)at + sizeof(struct grt_record_header) + 10;
	else
		img[at] = 0x5a;
	err = test_write_file(path, img, len) ? -EIO : 0;
	free(img);
	if (!err)
		printf("%lld\n", (long long)at);
	return err;
}

/* The pcie source's topology: a pair NVML answered and one it did not, with random flags and fields. */
static int write_topology_seed(const char *path)
{
	struct gen_rng rng = {77};
	struct grt_file_header h;
	struct grt_event_origin o = {.ts_ns = 5, .cpu = 0, .pid = 2, .tid = 2};
	struct grt_gpu_link_rec answered = {
		.device = 0, .pci = grt_pci_pack(0, 0x18, 0, 0), .peer_device = 1,
		.peer_pci = grt_pci_pack(0, 0x29, 0, 0), .flags = 15, .topology = GRT_TOPO_PXB,
		.nvlink_links = 3,
	}, random_fields;
	struct grt_writer *w;

	gen_header(&rng, &h);
	gen_fill(&rng, &random_fields, sizeof(random_fields));
	w = grt_writer_open(path, &h);
	if (!w)
		return -errno;
	grt_writer_append(w, GRT_REC_GPU_LINK, &o, &answered, sizeof(answered));
	grt_writer_append(w, GRT_REC_GPU_LINK, &o, &random_fields, sizeof(random_fields));
	return grt_writer_close(w, GRT_END_IDLE, 6);
}

/* Launches that repeat the one before (format 2.0's repeat records), with and without new args. */
static int write_launch_repeat_seed(const char *path)
{
	struct gen_rng rng = {91};
	struct grt_file_header h;
	struct grt_event_origin o = {.ts_ns = 5, .cpu = 1, .pid = 2, .tid = 3};
	struct grt_cuda_launch_rec l = {
		.call = {.return_ns = 9, .api = GRT_CUDA_LAUNCH_KERNEL},
		.grid = {4, 1, 1}, .block = {128, 1, 1}, .user_stack_id = -1,
		.arg_words = 2, .args = {0x7000, 0x10},
	};
	struct grt_writer *w;

	gen_header(&rng, &h);
	w = grt_writer_open(path, &h);
	if (!w)
		return -errno;
	for (int i = 0; i < 4; i++) {
		l.args[1] = 0x10 + (uint64_t)(i / 2);
		l.call.return_ns = o.ts_ns + 4 + (uint64_t)i;
		grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &l, sizeof(l));
		o.ts_ns++;
		o.tid = 3 + (uint32_t)(i % 2);
	}
	return grt_writer_close(w, GRT_END_IDLE, o.ts_ns);
}

/* One small trace per covered type, so the fuzzer starts from every record's layout. */
static int write_corpus(const char *dir)
{
	char path[512];
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/known.grt", dir);
	err = known_trace_write(path);
	for (uint64_t seed = 1; seed <= 8 && !err; seed++) {
		snprintf(path, sizeof(path), "%s/random-%llu.grt", dir, (unsigned long long)seed);
		err = write_random(path, seed, 24, 4);
	}
	for (size_t i = 0; i < GEN_NTYPES && !err; i++) {
		struct gen_rng rng = {100 + i};
		struct grt_file_header h;
		struct grt_event_origin o = {.ts_ns = 5, .cpu = 1, .pid = 2, .tid = 3};
		struct grt_writer *w;

		snprintf(path, sizeof(path), "%s/type-%u.grt", dir, gen_types[i]);
		gen_header(&rng, &h);
		w = grt_writer_open(path, &h);
		if (!w)
			return -errno;
		gen_random_record(w, NULL, &rng, gen_types[i], &o);
		err = grt_writer_close(w, GRT_END_IDLE, 6);
	}
	snprintf(path, sizeof(path), "%s/launch-repeat.grt", dir);
	err = err ?: write_launch_repeat_seed(path);
	snprintf(path, sizeof(path), "%s/gpu-link.grt", dir);
	return err ?: write_topology_seed(path);
}

int main(int argc, char **argv)
{
	int err;

	if (argc == 3 && !strcmp(argv[1], "known"))
		err = known_trace_write(argv[2]);
	else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "random"))
		err = write_random(argv[3], strtoull(argv[2], NULL, 0),
				   argc == 5 ? strtoul(argv[4], NULL, 0) : 500, 16);
	else if (argc == 3 && !strcmp(argv[1], "bad-magic"))
		err = write_damaged(argv[2], false);
	else if (argc == 3 && !strcmp(argv[1], "cut"))
		err = write_damaged(argv[2], true);
	else if (argc == 3 && !strcmp(argv[1], "corpus"))
		err = write_corpus(argv[2]);
	else {
		usage();
		return 2;
	}
	if (err) {
		fprintf(stderr, "gen_trace: %s: %s\n", argv[argc - 1], strerror(-err));
		return 1;
	}
	return 0;
}
