/* `grtrace snoop uvm`: live unified-memory events as aligned text or chunk_trace-style CSV. */
#ifndef GRT_SNOOP_UVM_H
#define GRT_SNOOP_UVM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "sources/session.h"

/*
 * The CSV columns, in order (the header row names them):
 *   time_ms     ms since the first event printed (3 decimals)
 *   event       cpu_fault, gpu_fault, gpu_fault_replay, migration, eviction, thrashing, ...
 *   pid, tid    process whose UVM file reported it; faulting thread for CPU faults (else 0)
 *   owner_pid   process that owns the memory (the UVM file's process)
 *   addr_start, addr_end   virtual range, hex, end exclusive (equal for point events)
 *   bytes, pages           size of the range; pages of 4 KiB, rounded up
 *   src, dst    processors: cpu, gpuN (driver numbering), - when not applicable
 *   cause       migration/map-remote cause, or the access type of a fault
 *   dur_us      migrations: queued -> the CPU saw it complete (host-visible), else empty
 *   gpu_us      migrations: the copy itself, from the GPU's stamps, else empty
 */
#define SNOOP_UVM_CSV_HEADER                                                                       \
	"time_ms,event,pid,tid,owner_pid,addr_start,addr_end,bytes,pages,src,dst,cause,dur_us,"    \
	"gpu_us"

struct snoop_uvm;

/* A session sink that prints uvm records as they come (other record types are ignored). */
struct snoop_uvm *snoop_uvm_new(FILE *out, bool csv);
struct grt_sink *snoop_uvm_sink(struct snoop_uvm *p);
void snoop_uvm_free(struct snoop_uvm *p);
uint64_t snoop_uvm_events(const struct snoop_uvm *p);

/* Prints one uvm record's payload (also used to turn a .grt back into the CSV). */
void snoop_uvm_print(struct snoop_uvm *p, uint32_t pid, uint32_t tid, uint64_t ts_ns,
		     const void *payload, uint32_t len);

#endif
