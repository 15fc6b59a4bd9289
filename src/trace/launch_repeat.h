/* Launch repeat records: a launch written as what differs from the launch record before it. */
#ifndef GRT_LAUNCH_REPEAT_H
#define GRT_LAUNCH_REPEAT_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/records_cuda.h"

/*
 * The launch record before the current one in the file, as the writer wrote
 * it and as the reader read it: both keep one, in file order, updated for
 * every launch record (whole or repeat), so a repeat means the same launch
 * to both. Zero-initialized: none yet.
 */
struct launch_repeat_base {
	struct grt_cuda_launch_rec rec;
	uint64_t offset; /* the record's file offset: a repeat names it */
	bool valid;
};

/* The most a repeat record's payload takes: its header and every argument word. */
#define LAUNCH_REPEAT_MAX_BYTES \
	(sizeof(struct grt_cuda_launch_repeat_rec) + GRT_LAUNCH_ARG_WORDS * sizeof(uint64_t))

/*
 * Writer: whether a launch record (112 bytes, its header's time ts_ns) can
 * be written as a repeat of the base; if so the repeat's payload goes to out
 * (LAUNCH_REPEAT_MAX_BYTES, 8-byte aligned) and its length is returned, else
 * 0 (write it whole). The base is not changed: the record becomes the base
 * once it is written, with launch_repeat_advance() (a repeat) or
 * launch_repeat_note() (whole).
 */
uint32_t launch_repeat_encode(const struct launch_repeat_base *base,
			      const struct grt_cuda_launch_rec *rec, uint64_t ts_ns, void *out);

/*
 * Writer and reader: the launch record written whole at file offset `offset`
 * (len bytes, read zero-extended past them) is the base.
 */
void launch_repeat_note(struct launch_repeat_base *base, const void *launch, uint32_t len,
			uint64_t offset);

/*
 * Writer: rec, which launch_repeat_encode() found a repeat of the base, was
 * written at `offset`: the base takes what differs (what the repeat carries),
 * which costs less than launch_repeat_note() on every launch of a storm.
 */
void launch_repeat_advance(struct launch_repeat_base *base, const struct grt_cuda_launch_rec *rec,
			   uint64_t offset);

/*
 * Reader: a repeat record's payload (len bytes, header time ts_ns, at file
 * offset `offset`) expanded in place: the base becomes the launch record it
 * stands for, base->rec. -1 when there is no launch before it, -2 when the
 * launch before it is not the one it repeats (a launch record deleted or
 * moved), -3 when its length disagrees with its counts; the base is then
 * unchanged.
 */
int launch_repeat_expand(struct launch_repeat_base *base, const void *payload, uint32_t len,
			 uint64_t ts_ns, uint64_t offset);

#endif
