/* Xid errors counted per GPU and Xid code, from the `xid` source run in a session of the agent's. */
#ifndef GRT_SERVE_XID_COUNTS_H
#define GRT_SERVE_XID_COUNTS_H

#include <stddef.h>
#include <stdint.h>
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

struct xid_counts;

struct xid_count {
	char device[32]; /* the PCI address the driver printed ("0000:3b:00.0"), or "unknown" */
	uint32_t xid;
	uint64_t count;
};

/*
 * Attaches the xid source (the nvidia:nvidia_dev_xid tracepoint). Returns 0,
 * or a negative errno with one line in why (no NVIDIA driver here).
 */
int xid_counts_start(struct xid_counts **out, char *why, size_t why_len);
/* Counts the Xid records that arrived; never blocks. */
void xid_counts_poll(struct xid_counts *x);
/* One record as the session delivers it: Xid records are counted, others ignored. */
void xid_counts_on_record(void *ctx, const struct grt_record *rec, const struct grt_strings *strings);
/* Copies up to max counts into out (in order of first sight); returns how many there are. */
size_t xid_counts_get(const struct xid_counts *x, struct xid_count *out, size_t max);
/* An empty table without a session: what xid_counts_on_record fills (for tests). */
struct xid_counts *xid_counts_new(void);
void xid_counts_stop(struct xid_counts *x);

#endif
