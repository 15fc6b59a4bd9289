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
	GRT_UVM_FAULT_BUFFER_OVERFLOW = 14, /* the GPU's fault buffer overflowed */
	GRT_UVM_PAGE_SIZE_CHANGE = 15,
	GRT_UVM_KIND_COUNT = 16,
};

/* Processor ids are the driver's: 0 is the CPU, GPUs count from 1. */
#define GRT_UVM_PROC_CPU 0u
#define GRT_UVM_PROC_NONE 0xffffffffu /* the event names no such processor */

enum grt_uvm_flags {
	GRT_UVM_F_QUEUE_V2 = 1,	      /* decoded from a version-2 queue entry */
	GRT_UVM_F_HAS_END = 2,	      /* end_ns is a measured end (migrations with an end stamp) */
	GRT_UVM_F_NON_REPLAYABLE = 4, /* GPU fault/replay from a HUB client (non-replayable) */
};

/* Header pid is the process whose UVM file the event came from; ts_ns mapped to CLOCK_MONOTONIC. */
struct grt_uvm_event_rec {
	uint64_t address;
	uint64_t bytes;
	uint64_t end_ns;	/* for events with a duration (migrations), else equal to ts_ns */
	uint32_t kind;		/* enum grt_uvm_event_kind */
	uint32_t owner_pid;	/* process that owns the memory */
	uint32_t src_processor; /* processor ids as the driver numbers them */
	uint32_t dst_processor;
	uint32_t cause; /* driver's cause/access-type code */
	uint32_t flags;
};

_Static_assert(sizeof(struct grt_uvm_event_rec) == 48, "uvm event layout");

/*
 * What `cause` holds, by kind: migrations: UvmEventMigrationCause (1 user,
 * 2 coherence, 3 prefetch, 4 eviction, 5 access counters); map-remote:
 * UvmEventMapRemoteCause; CPU/GPU/fatal faults: UvmEventMemoryAccessType
 * (1 read, 2 write, 3 atomic, 4 prefetch); queue overflow: the driver's
 * event type that was lost; else 0. Names: grt_uvm_cause_name().
 *
 * The uvm source appends struct grt_uvm_event_ext after the 48 bytes above
 * (payload_len 80). Readers that only know grt_uvm_event_rec still work;
 * readers of the extension check payload_len first.
 */
struct grt_uvm_event_ext {
	/*
	 * Kind-specific: eviction: the address that needed the room; thrashing
	 * and read-duplicate: bits 0..63 of the processor mask; CPU fault: the
	 * faulting instruction; GPU fault and replay: the fault batch id; queue
	 * overflow: events lost.
	 */
	uint64_t aux;
	uint64_t gpu_ts_ns;  /* the GPU's own time stamp (globaltimer ns, not mapped), 0 if none */
	uint32_t tid;	     /* CPU fault: faulting thread (also in the header) */
	uint32_t aux32;	     /* GPU fault: client id << 16 | GPC or channel; fatal: reason;
				page size change: the new size; CPU fault: CPU number (570+) */
	uint8_t fault_type;  /* GPU/fatal faults: UvmEventFaultType */
	uint8_t driver_type; /* the driver's UvmEventType this came from */
	uint8_t client_type; /* GPU faults/replays: 1 GPC, 2 HUB */
	uint8_t reserved8;
	uint32_t
	    fault_pid; /* CPU fault: the process the driver saw faulting (should be owner_pid) */
};

_Static_assert(sizeof(struct grt_uvm_event_ext) == 32, "uvm event extension layout");

/* The payload the uvm source writes: the base record and its extension. */
struct grt_uvm_event_full {
	struct grt_uvm_event_rec base;
	struct grt_uvm_event_ext ext;
};

_Static_assert(sizeof(struct grt_uvm_event_full) == 80, "uvm full payload layout");

/* Names for printing (records_uvm.c). */
const char *grt_uvm_kind_name(uint32_t kind);
/* The cause/access word of a record of this kind, by name ("prefetch", "write", ...). */
const char *grt_uvm_cause_name(uint32_t kind, uint32_t cause);
/* "cpu", "gpu1", ... or "-" for GRT_UVM_PROC_NONE; buf needs 16 bytes. */
const char *grt_uvm_processor_name(uint32_t id, char *buf, unsigned len);

#endif
