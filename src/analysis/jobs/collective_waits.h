/* Jobs tagged collective-wait: the longest, and per device the ranks its collectives waited for. */
#ifndef GRT_COLLECTIVE_WAITS_H
#define GRT_COLLECTIVE_WAITS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "analysis/jobs/job.h"
#include "common/json_writer.h"

#define COLLECTIVE_WAIT_NAMED 3	/* collectives named per line, largest first */

/* The waits of one device's rank for one other rank, summed over its tagged jobs. */
struct collective_wait_pair {
	uint32_t device;
	uint32_t rank;
	uint32_t for_rank;
	int32_t for_device;	/* -1 unknown */
	uint64_t ns;
	uint64_t jobs;
	const struct nccl_call *largest[COLLECTIVE_WAIT_NAMED];
	uint32_t n_largest;
};

struct collective_wait_job {
	uint64_t id;
	uint32_t pid;
	uint32_t device;
	const struct nccl_call *call;
};

struct collective_waits {
	struct collective_wait_job *top;	/* longest first */
	uint32_t n_top, top_n;
	struct collective_wait_pair *pairs;
	uint32_t n_pairs, cap_pairs;
	uint64_t jobs;			/* tagged collective-wait */
	bool alloc_failed;
};

int collective_waits_init(struct collective_waits *cw, uint32_t top_n);
void collective_waits_destroy(struct collective_waits *cw);
/* Takes a finished job; only those tagged collective-wait count. */
void collective_waits_job(struct collective_waits *cw, const struct job *j);
/* Sorts the pairs, largest first; call once the jobs are in. */
void collective_waits_finish(struct collective_waits *cw);

/* "collective waits (...)" and one line per job of the longest; nothing when none. */
void collective_waits_print_text(const struct collective_waits *cw, FILE *out);
/* Lines of one device under its verdict: "device 0 (rank 0): 302.10 ms in collectives ..." */
void collective_waits_print_device_text(const struct collective_waits *cw, uint32_t device, FILE *out);
/* The same as an array of objects. */
void collective_waits_print_device_json(const struct collective_waits *cw, uint32_t device,
					struct json_writer *w);
/* Whether device has a pair; the i-th device having any, JOB_NO_DEVICE past the last. */
bool collective_waits_has_device(const struct collective_waits *cw, uint32_t device);
uint32_t collective_waits_device_at(const struct collective_waits *cw, uint32_t i);

#endif
