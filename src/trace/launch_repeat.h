/* Launch repeat records: a launch written as what differs from the launch record before it. */
#ifndef GRT_LAUNCH_REPEAT_H
#define GRT_LAUNCH_REPEAT_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/records_cuda.h"

/*
 * The launch record before the current one in the file, as the writer wrote
 * it and as the reader read it: both sides keep one, in file order, so a
 * repeat record means the same launch to both. Zero-initialized: none yet.
 */
struct launch_repeat_base {
	struct grt_cuda_launch_rec rec;
	bool valid;
};

/* The most a repeat record's payload takes: its header and every argument word. */
#define LAUNCH_REPEAT_MAX_BYTES \
	(sizeof(struct grt_cuda_launch_repeat_rec) + GRT_LAUNCH_ARG_WORDS * sizeof(uint64_t))

/*
 * Writer: a launch record (its header's time ts_ns) becomes the base, and
 * when the base before it repeats all but what a repeat record carries, the
 * repeat's payload goes to out (LAUNCH_REPEAT_MAX_BYTES, 8-byte aligned)
 * and its length is returned; 0: write the launch record whole.
 */
uint32_t launch_repeat_encode(struct launch_repeat_base *base, const struct grt_cuda_launch_rec *rec,
			      uint64_t ts_ns, void *out);

/* Reader: a launch record read whole (len bytes, zero-extended past them) becomes the base. */
void launch_repeat_note(struct launch_repeat_base *base, const void *payload, uint32_t len);

/*
 * Reader: a repeat record's payload (len bytes, header time ts_ns) expanded
 * into the launch record it stands for, which becomes the base. -1 when there
 * is no launch before it or the payload's length disagrees with its count.
 */
int launch_repeat_expand(struct launch_repeat_base *base, const void *payload, uint32_t len,
			 uint64_t ts_ns, struct grt_cuda_launch_rec *out);

#endif
