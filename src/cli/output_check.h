/* Refusing an output file that is one of the command's inputs (it would be truncated first). */
#ifndef GRT_OUTPUT_CHECK_H
#define GRT_OUTPUT_CHECK_H

#include <stdbool.h>

/*
 * Whether out_path and in_path name the same file: same device and inode,
 * so symbolic and hard links count. False when either does not exist yet.
 */
bool output_is_input(const char *out_path, const char *in_path);

#endif
