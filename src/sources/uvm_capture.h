/* Raw UVM tools queue captures (a header, then the entries as the driver wrote them) and their replay. */
#ifndef GRT_UVM_CAPTURE_H
#define GRT_UVM_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "sources/uvm_decode.h"

#define UVM_CAPTURE_MAGIC "GRTUVMQ1"

struct uvm_capture_header {
	char magic[8];	     /* UVM_CAPTURE_MAGIC */
	uint32_t version;    /* queue version the entries are in (1 or 2) */
	uint32_t entry_size; /* bytes per entry as the driver wrote them */
	uint64_t count;	     /* entries following the header */
	uint32_t owner_pid;  /* process whose UVM file the tracker was bound to */
	uint32_t reserved;
	int64_t
	    mono_minus_raw_ns; /* CLOCK_MONOTONIC - CLOCK_MONOTONIC_RAW when the capture ended */
	uint64_t dropped;      /* events the driver dropped from this queue */
	char driver[32];       /* /sys/module/nvidia_uvm/version, NUL-terminated */
};

_Static_assert(sizeof(struct uvm_capture_header) == 80, "uvm capture header layout");

struct uvm_capture {
	struct uvm_capture_header h;
	uint8_t *entries; /* h.count * h.entry_size bytes */
};

/*
 * Reads a capture file whole. 0, or a negative errno with one line in why
 * (unreadable, not a capture, entry size not the version's, cut short).
 */
int uvm_capture_load(const char *path, struct uvm_capture *out, char *why, size_t why_len);
void uvm_capture_free(struct uvm_capture *c);

/*
 * A queue holding the capture's entries as unread, with the driver's drop
 * count under the first event type: uvm_queue_drain() and
 * uvm_queue_new_drops() read it as they read a driver's queue. The memory
 * is the queue's own; uvm_capture_queue_free() gives it back.
 */
int uvm_capture_queue(const struct uvm_capture *c, struct uvm_queue *q);
void uvm_capture_queue_free(struct uvm_queue *q);

#endif
