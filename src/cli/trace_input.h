/* A trace named on the command line: a path, or "-" for standard input. */
#ifndef GRT_TRACE_INPUT_H
#define GRT_TRACE_INPUT_H

#include <stddef.h>

/*
 * The path to open for arg: arg itself, or for "-" a memory file holding
 * all of standard input (the reader needs a file it can seek), named in buf
 * as /proc/self/fd/N. NULL after printing "grtrace: CMD: ..." when standard
 * input is a terminal or cannot be read.
 */
const char *trace_input_path(const char *arg, const char *cmd, char *buf, size_t len);

#endif
