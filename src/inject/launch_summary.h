/* From one launch's probe records to per-block records and the per-launch summary. */
#ifndef GRT_LAUNCH_SUMMARY_H
#define GRT_LAUNCH_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include "inject/clock_math.h"
#include "inject/probe_buffer.h"
#include "trace/records_gpu.h"

#define LAUNCH_NO_SM UINT32_MAX /* thread-mode records carry no SM id */

/*
 * Block records of a block-mode buffer, mapped to CLOCK_MONOTONIC through map
 * (NULL: raw globaltimer). Slots that never started (start 0) are skipped and
 * counted in *missing. Returns the number of records written to out
 * (at most n).
 */
size_t launch_blocks_from_probe(const struct grt_probe_block_rec *in, size_t n,
				const uint32_t grid[3], const struct clock_pair *map,
				uint64_t launch_id, struct grt_gpu_block_rec *out,
				uint64_t *missing);

/*
 * The same from a thread-mode buffer: one block record per block, its start
 * the earliest thread start and its end the latest thread end (0 when a
 * thread did not finish). threads_per_block > 0; n thread records.
 * out has room for blocks records.
 */
size_t launch_blocks_from_threads(const struct grt_probe_thread_rec *in, size_t n,
				  uint32_t threads_per_block, const uint32_t grid[3],
				  uint64_t blocks, const struct clock_pair *map, uint64_t launch_id,
				  struct grt_gpu_block_rec *out, uint64_t *missing);

/*
 * Fills the summary fields of rec from n block records: start (first block
 * start), end (last block end), blocks, sms_used, block_ns_p50, block_ns_max,
 * busiest_sm_ns (union of its blocks' intervals). Blocks without an end
 * count in `blocks` but not in durations. Reorders blocks (sorts them).
 */
void launch_summarize(struct grt_gpu_block_rec *blocks, size_t n, struct grt_gpu_launch_rec *rec);

#endif
