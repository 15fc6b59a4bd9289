/* Unified-memory activity of each process (faults, migrations) and the bytes it moved each way. */
#ifndef GRT_UVM_ACTIVITY_H
#define GRT_UVM_ACTIVITY_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/records_uvm.h"

/*
 * Idle gaps ask what a process's unified memory did while the GPU waited:
 * a program that touches managed memory on the CPU between kernels spends
 * the gap faulting pages back and migrating them (the uvm source records
 * CPU faults and migrations, with their spans). Spans are kept per process
 * in start order, and dropped once every gap that could ask about them was
 * judged.
 */
struct uvm_totals {
	uint64_t to_device;	/* bytes migrated from the CPU to a GPU */
	uint64_t to_host;	/* bytes migrated from a GPU to the CPU */
	uint64_t migrations;
	uint64_t cpu_faults;
	uint64_t gpu_faults;
};

struct uvm_activity;

struct uvm_activity *uvm_activity_new(void);
void uvm_activity_free(struct uvm_activity *u);
/* One event of pid's UVM file at ts; activity ending before horizon may be forgotten. */
void uvm_activity_event(struct uvm_activity *u, uint32_t pid, uint64_t ts,
			const struct grt_uvm_event_rec *e, uint64_t horizon);
/*
 * The part of [a, b) from the first to the last UVM activity of pid that
 * touches it, as [*from, *to); false when pid had none there.
 */
bool uvm_activity_within(const struct uvm_activity *u, uint32_t pid, uint64_t a, uint64_t b,
			 uint64_t *from, uint64_t *to);
/* pid's totals over the trace so far, NULL when it had no UVM event. */
const struct uvm_totals *uvm_activity_totals(const struct uvm_activity *u, uint32_t pid);
/* Events that could not be kept for want of memory. */
uint64_t uvm_activity_alloc_failures(const struct uvm_activity *u);

#endif
