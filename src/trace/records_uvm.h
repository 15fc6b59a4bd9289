/* Payloads of the `uvm` source: unified-memory events from the driver's tools interface. */
#ifndef GRT_RECORDS_UVM_H
#define GRT_RECORDS_UVM_H

#include <stdint.h>
#include "grt_format.h"

enum grt_uvm_record_type {
	GRT_REC_UVM_EVENT = GRT_REC_UVM_FIRST,
};

enum grt_uvm_event_kind {
	GRT_UVM_CPU_FAULT = 1,
	GRT_UVM_GPU_FAULT = 2,
	GRT_UVM_GPU_FAULT_REPLAY = 3,
	GRT_UVM_MIGRATION = 4,
	GRT_UVM_EVICTION = 5,
	GRT_UVM_THRASHING = 6,
	GRT_UVM_THROTTLING_START = 7,
	GRT_UVM_THROTTLING_END = 8,
	GRT_UVM_MAP_REMOTE = 9,
	GRT_UVM_READ_DUPLICATE = 10,
	GRT_UVM_READ_DUPLICATE_INVALIDATE = 11,
	GRT_UVM_FATAL_FAULT = 12,
	GRT_UVM_QUEUE_OVERFLOW = 13,
};

/* Header pid is the process whose UVM file the event came from; ts_ns mapped to CLOCK_MONOTONIC. */
struct grt_uvm_event_rec {
	uint64_t address;
	uint64_t bytes;
	uint64_t end_ns;	/* for events with a duration (migrations), else equal to ts_ns */
	uint32_t kind;		/* enum grt_uvm_event_kind */
	uint32_t owner_pid;	/* process that owns the memory */
	uint32_t src_processor;	/* processor ids as the driver numbers them */
	uint32_t dst_processor;
	uint32_t cause;		/* driver's cause/access-type code */
	uint32_t flags;
};

_Static_assert(sizeof(struct grt_uvm_event_rec) == 48, "uvm event layout");

#endif
