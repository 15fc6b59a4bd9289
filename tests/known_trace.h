/* A small trace with exact, known content: the fixture parse's unit and e2e tests check against. */
#ifndef GRT_KNOWN_TRACE_H
#define GRT_KNOWN_TRACE_H

#include <stdbool.h>
#include <errno.h>
#include <string.h>
#include "trace/grt_writer.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"

/*
 * The content, in file order (tests/e2e/parse_*.sh check the same values):
 *   strings 1..6: vecadd, /usr/bin/vecadd, vecAdd, k<"quoted", comma>, other, worker
 *   stack (id 7, depth 3), mapping            -- bookkeeping, shown with --all
 *   0 process  seen   pid 4242
 *   1 alloc    4242/4243 cpu 1  addr 0x7f0000000000 bytes 1048576 device, api 500 ns
 *   2 memcpy   HtoD 1048576 bytes sync, api 2000 ns
 *   3 launch   vecAdd grid 4,2,1 block 256,1,1 shm 1024 stream 0x10, api 300 ns
 *   4 launch   k<"quoted", comma> tid 4244 cpu 2, no return (api_ns null)
 *   5 sync     stream 0x10, api 3000 ns
 *   6 memcpy   DtoH 4096 bytes async, api 100 ns
 *   7 memcpy   DtoD 65536 bytes sync, api 200 ns
 *   8 free     addr 0x7f0000000000
 *   9 launch   other, pid 5555, ret 719
 *  10 drop     cuda 3
 *  11 trailer  target-exit
 */
#define KNOWN_T0 1000000000000ULL
#define KNOWN_PID 4242
#define KNOWN_WEIRD_KERNEL "k<\"quoted\", comma>"
#define KNOWN_EVENTS 12	 /* printed without --all */
#define KNOWN_RECORDS 20 /* every record, strings included */

static inline void known_call(struct grt_cuda_call *c, uint16_t api, uint64_t ret_ns, int32_t ret,
			      uint32_t comm)
{
	memset(c, 0, sizeof(*c));
	c->api = api;
	c->return_ns = ret_ns ? KNOWN_T0 + ret_ns : 0;
	c->flags = ret_ns ? 0 : GRT_CUDA_F_NO_RETURN;
	c->ret = ret;
	c->ppid = 1;
	c->comm_str = comm;
}

static inline void known_memcpy(struct grt_writer *w, struct grt_event_origin *o, uint64_t ts,
				uint64_t ret_ns, uint16_t api, uint32_t kind, uint8_t async,
				uint64_t dst, uint64_t src, uint64_t bytes, uint64_t stream)
{
	struct grt_cuda_memcpy_rec m = {.dst = dst,
					.src = src,
					.bytes = bytes,
					.stream = stream,
					.kind = kind,
					.is_async = async,
					.dims = 1};

	known_call(&m.call, api, ret_ns, 0, 1);
	o->ts_ns = KNOWN_T0 + ts;
	grt_writer_append(w, GRT_REC_CUDA_MEMCPY, o, &m, sizeof(m));
}

/*
 * Writes the known trace, with checksum records (format 2.0) or in the format
 * 1.1 layout; returns 0 or a negative errno.
 */
static inline int known_trace_write_layout(const char *path, bool checksums)
{
	struct grt_file_header h = {
	    .start_monotonic_ns = KNOWN_T0,
	    .start_realtime_ns = 1795000000000000000ULL,
	    .clock_id = GRT_CLOCK_MONOTONIC,
	    .sources_mask = 1u << GRT_SRC_CUDA,
	    .target_pid = KNOWN_PID,
	    .hostname = "gen-host",
	    .kernel_release = "6.18.0-test",
	    .driver_version = "580.159.04",
	    .cuda_version = "13.0",
	    .command_line = "./vecadd --n 4",
	};
	struct grt_writer *w = grt_writer_open(path, &h);
	struct grt_event_origin o = {.cpu = 1, .pid = KNOWN_PID, .tid = KNOWN_PID + 1};
	struct {
		struct grt_stack_rec s;
		uint64_t ips[3];
	} stack = {{7, 3}, {0x401000, 0x402000, 0x7f0000401000}};
	struct grt_mapping_rec map = {0x400000, 0x500000, 0, 2, 0};
	struct grt_process_rec proc = {GRT_PROC_SEEN, 1, 1, 2, 0, 0};
	struct grt_cuda_alloc_rec alloc = {.addr = 0x7f0000000000,
					   .bytes = 1048576,
					   .kind = GRT_ALLOC_DEVICE,
					   .user_stack_id = -1};
	struct grt_cuda_launch_rec launch = {
	    .function = 0xdead0001,
	    .stream = 0x10,
	    .kernel_str = 3,
	    .shared_mem = 1024,
	    .grid = {4, 2, 1},
	    .block = {256, 1, 1},
	    .user_stack_id = 7,
	    .arg_words = 2,
	    .args = {0x7f0000000000, 0x100000},
	};
	struct grt_cuda_sync_rec sync = {.stream = 0x10, .kind = GRT_SYNC_STREAM};
	struct grt_cuda_free_rec fr = {.addr = 0x7f0000000000, .kind = GRT_ALLOC_DEVICE};

	if (!w)
		return -errno;
	grt_writer_set_checksums(w, checksums);
	grt_writer_intern(w, "vecadd");
	grt_writer_intern(w, "/usr/bin/vecadd");
	grt_writer_intern(w, "vecAdd");
	grt_writer_intern(w, KNOWN_WEIRD_KERNEL);
	grt_writer_intern(w, "other");
	grt_writer_intern(w, "worker");
	o.ts_ns = KNOWN_T0 + 50;
	grt_writer_append(w, GRT_REC_STACK, &o, &stack, sizeof(stack));
	grt_writer_append(w, GRT_REC_MAPPING, &o, &map, sizeof(map));
	o = (struct grt_event_origin){
	    .ts_ns = KNOWN_T0 + 100, .cpu = 0, .pid = KNOWN_PID, .tid = KNOWN_PID};
	grt_writer_append(w, GRT_REC_PROCESS, &o, &proc, sizeof(proc));
	o = (struct grt_event_origin){
	    .ts_ns = KNOWN_T0 + 1000, .cpu = 1, .pid = KNOWN_PID, .tid = KNOWN_PID + 1};
	known_call(&alloc.call, GRT_CUDA_MEM_ALLOC_V2, 1500, 0, 1);
	grt_writer_append(w, GRT_REC_CUDA_ALLOC, &o, &alloc, sizeof(alloc));
	known_memcpy(w, &o, 2000, 4000, GRT_CUDA_MEMCPY_HTOD_V2, GRT_COPY_HTOD, 0, 0x7f0000000000,
		     0x5555a000, 1048576, 0);
	o.ts_ns = KNOWN_T0 + 5000;
	known_call(&launch.call, GRT_CUDA_LAUNCH_KERNEL, 5300, 0, 1);
	grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &launch, sizeof(launch));
	o = (struct grt_event_origin){
	    .ts_ns = KNOWN_T0 + 5100, .cpu = 2, .pid = KNOWN_PID, .tid = KNOWN_PID + 2};
	launch = (struct grt_cuda_launch_rec){
	    .kernel_str = 4, .grid = {1, 1, 1}, .block = {32, 1, 1}, .user_stack_id = -1};
	known_call(&launch.call, GRT_CUDA_LAUNCH_KERNEL, 0, 0, 1);
	grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &launch, sizeof(launch));
	o = (struct grt_event_origin){
	    .ts_ns = KNOWN_T0 + 6000, .cpu = 1, .pid = KNOWN_PID, .tid = KNOWN_PID + 1};
	known_call(&sync.call, GRT_CUDA_STREAM_SYNCHRONIZE, 9000, 0, 1);
	grt_writer_append(w, GRT_REC_CUDA_SYNC, &o, &sync, sizeof(sync));
	known_memcpy(w, &o, 9500, 9600, GRT_CUDA_MEMCPY_DTOH_ASYNC_V2, GRT_COPY_DTOH, 1, 0x5555b000,
		     0x7f0000000000, 4096, 0x10);
	known_memcpy(w, &o, 9700, 9900, GRT_CUDA_MEMCPY_DTOD_V2, GRT_COPY_DTOD, 0, 0x7f0000100000,
		     0x7f0000000000, 65536, 0);
	o.ts_ns = KNOWN_T0 + 10000;
	known_call(&fr.call, GRT_CUDA_MEM_FREE_V2, 10100, 0, 1);
	grt_writer_append(w, GRT_REC_CUDA_FREE, &o, &fr, sizeof(fr));
	o = (struct grt_event_origin){
	    .ts_ns = KNOWN_T0 + 11000, .cpu = 0, .pid = 5555, .tid = 5555};
	launch = (struct grt_cuda_launch_rec){
	    .kernel_str = 5, .grid = {1, 1, 1}, .block = {1, 1, 1}, .user_stack_id = -1};
	known_call(&launch.call, GRT_CUDA_LAUNCH_KERNEL, 11200, 719, 6);
	grt_writer_append(w, GRT_REC_CUDA_LAUNCH, &o, &launch, sizeof(launch));
	grt_writer_drop(w, GRT_SRC_CUDA, 3, KNOWN_T0 + 12000);
	return grt_writer_close(w, GRT_END_TARGET_EXIT, KNOWN_T0 + 20000);
}

/* Writes the known trace as the recorder does (format 2.0); returns 0 or a negative errno. */
static inline int known_trace_write(const char *path)
{
	return known_trace_write_layout(path, true);
}

#endif
