/* Layout of the raw UVM queue samples in tests/data/uvm: a header, then the entries. */
#ifndef GRT_TEST_UVM_SAMPLE_H
#define GRT_TEST_UVM_SAMPLE_H

#include <stdint.h>

#define UVM_SAMPLE_MAGIC "GRTUVMQ1"

struct uvm_sample_header {
	char magic[8];	     /* UVM_SAMPLE_MAGIC */
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

_Static_assert(sizeof(struct uvm_sample_header) == 80, "uvm sample header layout");

#endif
