/* Reading the UVM tools event queue and turning its entries into grtrace uvm records. */
#ifndef GRT_UVM_DECODE_H
#define GRT_UVM_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include "sources/uvm_abi.h"
#include "trace/records_uvm.h"

/*
 * The driver stamps events with CLOCK_MONOTONIC_RAW (NV_GETTIME is
 * ktime_get_raw_ts64); traces use CLOCK_MONOTONIC. The two differ by an
 * offset that NTP slews slowly (parts per million), so it is measured at
 * every drain, close to the events it converts.
 */
struct uvm_clock_map {
	int64_t mono_minus_raw;
	uint64_t error_ns; /* half the width of the measuring window */
};

/* Measures the offset now: raw, mono, raw read back to back, the narrowest of a few tries. */
void uvm_clock_map_sample(struct uvm_clock_map *m);
/* A driver time stamp on CLOCK_MONOTONIC; 0 (no stamp) stays 0. */
uint64_t uvm_clock_to_mono(const struct uvm_clock_map *m, uint64_t raw_ns);

/* Bytes per queue slot of a queue version, 0 for an unknown version. */
size_t uvm_entry_size(enum uvm_queue_version version);

/* One decoded entry: the record payload and its header fields. */
struct uvm_decoded {
	struct grt_uvm_event_full rec;
	uint64_t ts_ns; /* CLOCK_MONOTONIC; 0 when the driver gave no stamp */
	uint32_t tid;	/* faulting thread of CPU faults, else 0 */
};

/*
 * Decodes one queue entry. owner_pid is the process whose UVM file the
 * queue is bound to. Returns 0, or -EINVAL for a type byte no release
 * defines (test event types included).
 */
int uvm_decode_entry(const void *entry, enum uvm_queue_version version, uint32_t owner_pid,
		     const struct uvm_clock_map *clock, struct uvm_decoded *out);

/* The consumer's view of one tracker's shared queue (the memory is the caller's). */
struct uvm_queue {
	struct uvm_queue_control *ctrl;
	const uint8_t *entries;
	uint32_t count; /* slots, a power of two */
	uint32_t entry_size;
	uint64_t dropped_seen[UVM_EV_NUM_TYPES_ALL];
};

/*
 * Hands every pending entry, oldest first, to on_entry and then gives the
 * slots back to the driver. Returns the number of entries consumed.
 */
unsigned uvm_queue_drain(struct uvm_queue *q, void (*on_entry)(void *ctx, const void *entry),
			 void *ctx);

/*
 * Reports events the driver dropped (queue full) since the last call, one
 * on_drop call per event type; returns the total.
 */
uint64_t uvm_queue_new_drops(struct uvm_queue *q,
			     void (*on_drop)(void *ctx, uint32_t driver_type, uint64_t n),
			     void *ctx);

#endif
