/* The device-side summarizer of block-mode probe buffers (a PTX kernel the library loads). */
#ifndef GRT_PTX_SUMMARIZE_H
#define GRT_PTX_SUMMARIZE_H

#include <stdint.h>
#include "probe_buffer.h"

#define GRT_SUMMARIZE_KERNEL "__grt_summarize"
#define GRT_SUMMARIZE_THREADS 256u

/*
 * One launch to summarize: the kernel's first parameter points at an array
 * of these (one CTA each), its second is the number of SM slots to write.
 */
struct grt_probe_summary_job {
	uint64_t buffer; /* the launch's probe buffer (device address) */
	uint32_t spans;	 /* spans to read: the launch's blocks, at most the capacity */
	uint32_t tag;	 /* the launch's tag: spans with another are not its own */
};

/* PTX text of __grt_summarize(.u64 jobs, .u32 sm_slots): .version 6.0, .target sm_50. */
extern const char grt_summarize_ptx[];

#endif
