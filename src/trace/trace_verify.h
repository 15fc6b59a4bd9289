/* Reading a whole trace for its integrity alone (for commands whose reader is elsewhere). */
#ifndef GRT_TRACE_VERIFY_H
#define GRT_TRACE_VERIFY_H

#include <stddef.h>

/*
 * Reads every record of path. Returns 0 when nothing is wrong (or the file
 * cannot be read: that error is the caller's to report), 1 with the
 * reader's one-line damage description in msg.
 */
int grt_trace_verify(const char *path, char *msg, size_t len);

#endif
