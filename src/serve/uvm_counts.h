/* Unified-memory faults and migrated bytes per process for the agent: a UVM tools tracker per CUDA process. */
#ifndef GRT_SERVE_UVM_COUNTS_H
#define GRT_SERVE_UVM_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/records_uvm.h"

enum uvm_fault_side {
	UVM_FAULTS_CPU, /* the CPU touched memory that lived on a GPU */
	UVM_FAULTS_GPU, /* a GPU touched memory it did not hold */
	UVM_FAULT_SIDES,
};

enum uvm_direction {
	UVM_DIR_HTOD,
	UVM_DIR_DTOH,
	UVM_DIR_DTOD, /* between GPUs */
	UVM_DIRECTIONS,
};

struct uvm_counts {
	uint64_t faults[UVM_FAULT_SIDES];
	uint64_t migrated_bytes[UVM_DIRECTIONS];
};

/*
 * Counts one decoded event: CPU and GPU faults (not replays: a replay
 * retries faults already counted), migrations by direction; others ignored.
 */
void uvm_counts_add(struct uvm_counts *c, const struct grt_uvm_event_rec *e);
/* "cpu", "gpu"; "htod", "dtoh", "dtod" (the names of the memcpy directions). */
const char *uvm_fault_side_name(unsigned side);
const char *uvm_direction_name(unsigned dir);

struct uvm_counter;

/*
 * Starts counting. replay NULL: the NVIDIA UVM driver's tools interface must
 * be here. replay a capture file (src/sources/uvm_capture.h; a test double
 * for machines without the driver): every watched process is given that
 * capture's events instead of the driver's. 0, or a negative errno with one
 * line in why.
 */
int uvm_counter_start(struct uvm_counter **out, const char *replay, char *why, size_t why_len);
/* A process that called CUDA: a tracker is bound to its UVM file as soon as it has one. */
void uvm_counter_watch(struct uvm_counter *u, uint32_t pid);
/* Drains every bound queue; retries binding the others (backing off). Never blocks. */
void uvm_counter_poll(struct uvm_counter *u, uint64_t now_ns);
/* pid's counts so far; false when no tracker was bound to it (yet). */
bool uvm_counter_get(const struct uvm_counter *u, uint32_t pid, struct uvm_counts *out);
/* pid exited: what the driver still holds is delivered and counted, then it is forgotten. */
bool uvm_counter_finish(struct uvm_counter *u, uint32_t pid, struct uvm_counts *out);
/* Events not counted: dropped by the driver (queue full) or not decodable. */
uint64_t uvm_counter_lost(const struct uvm_counter *u);
void uvm_counter_stop(struct uvm_counter *u);

#endif
