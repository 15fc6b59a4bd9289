/* From one launch's probe records to per-block records and the per-launch summary. */
#ifndef GRT_LAUNCH_SUMMARY_H
#define GRT_LAUNCH_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include "inject/clock_math.h"
#include "inject/probe_buffer.h"
#include "trace/records_gpu.h"

/*
 * Block records from a block-mode buffer's n spans, mapped to CLOCK_MONOTONIC
 * through map (NULL: raw globaltimer). Spans without the launch's tag (the
 * block never stored one) are skipped and counted in *missing. Returns the
 * number of records written to out (at most n).
 */
size_t launch_blocks_from_spans(const struct grt_probe_span *in, size_t n, uint16_t tag,
				const uint32_t grid[3], const struct clock_pair *map,
				uint64_t launch_id, struct grt_gpu_block_rec *out,
				uint64_t *missing);

/*
 * The same from a thread-mode buffer: one block record per block, its start
 * the earliest thread start and its end the latest thread end (0 when a
 * thread's span is missing). threads_per_block > 0; n thread spans.
 * out has room for blocks records.
 */
size_t launch_blocks_from_thread_spans(const struct grt_probe_span *in, size_t n, uint16_t tag,
				       uint32_t threads_per_block, const uint32_t grid[3],
				       uint64_t blocks, const struct clock_pair *map,
				       uint64_t launch_id, struct grt_gpu_block_rec *out,
				       uint64_t *missing);

/*
 * Fills the summary fields of rec from n block records: start (first block
 * start), end (last block end), blocks, sms_used, block_ns_p50, block_ns_max,
 * busiest_sm_ns (union of its blocks' intervals). Blocks without an end
 * count in `blocks` but not in durations. Reorders blocks (sorts them).
 */
void launch_summarize(struct grt_gpu_block_rec *blocks, size_t n, struct grt_gpu_launch_rec *rec);

/*
 * The same summary from a block-mode buffer's device totals (every block of
 * the launch, no spans needed), its first nsm SM slots: start and end mapped through map, blocks and
 * sms_used exact, block_ns_max exact up to 2^32-1 ns, block_ns_p50 the middle
 * of the median's half-octave bucket, busiest_sm_ns the smaller of the SM's
 * first-start-to-last-end and its summed block durations (the union of its
 * block intervals is at most either).
 */
void launch_summarize_totals(const struct grt_probe_sm *sm, unsigned nsm, const uint32_t *hist,
			     const struct clock_pair *map, struct grt_gpu_launch_rec *rec);

/* Some block start of the totals (0 when no block completed), to pick a calibration. */
uint64_t launch_totals_first_start(const struct grt_probe_sm *sm, unsigned nsm);

#endif
